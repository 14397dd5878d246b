package attrrag

import (
	"context"

	pb "github.com/attr-rag/attr-rag/clients/go/gen/attr_rag/v1"
)

// ResultStream is the batch's results in the order they finished.
type ResultStream struct {
	stream *retryStream[*pb.ListBatchResultsResponse]
}

// Results reads the batch's results, skipping the first offset (the number a reader already has: after a
// crash, resume from the last result's Offset + 1). With follow the stream stays open and sends results as they
// finish until the batch ends; without it, it ends with the results there are now.
func (c *Client) Results(ctx context.Context, batchID string, offset uint32, follow bool) (*ResultStream, error) {
	req := &pb.ListBatchResultsRequest{BatchId: batchID, Offset: offset, Follow: follow}
	stream, err := openStream(ctx, c.retry, "ListBatchResults", func() (receiver[*pb.ListBatchResultsResponse], error) {
		return c.batches.ListBatchResults(ctx, req)
	})
	if err != nil {
		return nil, err
	}
	return &ResultStream{stream: stream}, nil
}

// Recv returns the next result, io.EOF after the last one, or an *Error.
func (s *ResultStream) Recv() (*BatchItemResult, error) {
	res, err := s.stream.Recv()
	if err != nil {
		return nil, err
	}
	return res.GetResult(), nil
}
