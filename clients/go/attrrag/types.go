package attrrag

import pb "github.com/attr-rag/attr-rag/clients/go/gen/attr_rag/v1"

// The generated messages this package takes and returns, under shorter names; the rest (RetrievalOptions,
// GenerationOptions, ...) are in the generated package github.com/attr-rag/attr-rag/clients/go/gen/attr_rag/v1.
type (
	AskRequest      = pb.AskRequest
	AskEvent        = pb.AskEvent
	FinalAnswer     = pb.FinalAnswer
	Done            = pb.Done
	BatchItem       = pb.BatchItem
	Batch           = pb.Batch
	BatchItemResult = pb.BatchItemResult
)
