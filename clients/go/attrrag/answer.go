package attrrag

import (
	"context"
	"fmt"
	"io"
)

// Answer is how an Ask ended.
type Answer struct {
	// RequestID is the gateway's id of the request (in its logs and traces).
	RequestID string
	// Final is the answer text with its citations and the chunks it was given.
	Final *FinalAnswer
	// Done holds the stage timings, engine counters and warnings.
	Done *Done
}

// AskAnswer runs Ask to its end and returns the final answer. onEvent, unless nil, sees every event first
// (e.g. to print the answer's deltas as they come).
func (c *Client) AskAnswer(ctx context.Context, req *AskRequest, onEvent func(*AskEvent)) (*Answer, error) {
	stream, err := c.Ask(ctx, req)
	if err != nil {
		return nil, err
	}
	answer := &Answer{}
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if onEvent != nil {
			onEvent(ev)
		}
		answer.RequestID = ev.GetRequestId()
		if final := ev.GetFinalAnswer(); final != nil {
			answer.Final = final
		}
		if done := ev.GetDone(); done != nil {
			answer.Done = done
		}
	}
	if answer.Final == nil || answer.Done == nil {
		return nil, fmt.Errorf("attr-rag Ask: the stream of request %q ended without a final answer and done; is the gateway older than this client?", answer.RequestID)
	}
	return answer, nil
}
