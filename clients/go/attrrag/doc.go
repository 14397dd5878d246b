// Package attrrag is a small Go client for the Attr-RAG gateway's gRPC API (protos/attr_rag/v1).
//
// Dial connects, optionally with a bearer token and TLS. Ask streams one question's pipeline events, stage by
// stage; AskAnswer collects them into the final answer. CreateBatch, WaitBatch, Results and CancelBatch run many
// questions as a batch, and VerifyWebhook checks the signed calls the gateway makes when a batch ends.
//
// Calls refused with codes.Unavailable or codes.ResourceExhausted are tried again after an exponential backoff
// (Options.Retry, DefaultRetryPolicy); streams only until their first message has reached the caller. Failed
// calls return *Error, which keeps the gRPC status: status.FromError and status.Code work on it.
package attrrag
