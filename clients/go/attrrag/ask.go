package attrrag

import (
	"context"

	pb "github.com/attr-rag/attr-rag/clients/go/gen/attr_rag/v1"
)

// AskStream is one Ask in progress: the pipeline's events in order, ending with the "done" stage.
type AskStream struct {
	stream pb.AttrRagService_AskClient
}

// Ask starts the pipeline for req. Read its events with Recv; cancel ctx to stop it early. A refused request
// (bad token, empty question) shows as the first Recv's error.
func (c *Client) Ask(ctx context.Context, req *AskRequest) (*AskStream, error) {
	stream, err := c.ask.Ask(ctx, req)
	if err != nil {
		return nil, wrap("Ask", err)
	}
	return &AskStream{stream: stream}, nil
}

// Recv returns the next event, io.EOF after the last one, or an *Error.
func (s *AskStream) Recv() (*AskEvent, error) {
	res, err := s.stream.Recv()
	if err != nil {
		return nil, wrap("Ask", err)
	}
	return res.GetEvent(), nil
}
