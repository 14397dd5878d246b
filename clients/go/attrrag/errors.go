package attrrag

import (
	"fmt"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Error is a call the gateway (or the connection) failed: which call, its gRPC status code and message.
// status.FromError(err) and status.Code(err) return that status.
type Error struct {
	// Op is the RPC, e.g. "Ask" or "CreateBatch".
	Op string
	// Attempts is how often the call was tried: more than 1 when it failed for a passing reason (see
	// RetryPolicy) and was tried again; 0 or 1 when it was tried once.
	Attempts int
	status   *status.Status
}

func (e *Error) Error() string {
	if e.Attempts > 1 {
		return fmt.Sprintf("attr-rag %s failed after %d attempts: %s: %s", e.Op, e.Attempts, e.status.Code(), e.status.Message())
	}
	return fmt.Sprintf("attr-rag %s failed: %s: %s", e.Op, e.status.Code(), e.status.Message())
}

// Code is the gRPC status code, e.g. codes.Unauthenticated for a missing or wrong token.
func (e *Error) Code() codes.Code { return e.status.Code() }

// Message is the server's explanation.
func (e *Error) Message() string { return e.status.Message() }

// GRPCStatus lets status.FromError and status.Code see through the wrapping.
func (e *Error) GRPCStatus() *status.Status { return e.status }

// wrap names the call in err; io.EOF (a stream's normal end) and nil pass unchanged.
func wrap(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	if _, ok := err.(*Error); ok {
		return err
	}
	return &Error{Op: op, status: status.Convert(err)}
}
