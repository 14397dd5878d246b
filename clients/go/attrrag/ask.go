package attrrag

import (
	"context"

	pb "github.com/attr-rag/attr-rag/clients/go/gen/attr_rag/v1"
)

// AskStream is one Ask in progress: the pipeline's events in order, ending with the "done" stage.
type AskStream struct {
	stream *retryStream[*pb.AskResponse]
}

// Ask starts the pipeline for req. Read its events with Recv; cancel ctx to stop it early. A refused request
// (bad token, empty question) shows as the first Recv's error; a busy or unreachable gateway is asked again
// (Options.Retry) until the first event has come.
func (c *Client) Ask(ctx context.Context, req *AskRequest) (*AskStream, error) {
	stream, err := openStream(ctx, c.retry, "Ask", func() (receiver[*pb.AskResponse], error) {
		return c.ask.Ask(ctx, req)
	})
	if err != nil {
		return nil, err
	}
	return &AskStream{stream: stream}, nil
}

// Recv returns the next event, io.EOF after the last one, or an *Error.
func (s *AskStream) Recv() (*AskEvent, error) {
	res, err := s.stream.Recv()
	if err != nil {
		return nil, err
	}
	return res.GetEvent(), nil
}
