package attrrag_test

import (
	"context"
	"errors"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/attr-rag/attr-rag/clients/go/attrrag"
	pb "github.com/attr-rag/attr-rag/clients/go/gen/attr_rag/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// smallAsk keeps a test Ask to seconds on two cores.
func smallAsk() *attrrag.AskRequest {
	return &attrrag.AskRequest{
		Question:   question,
		Retrieval:  &pb.RetrievalOptions{K: proto.Uint32(4)},
		Generation: &pb.GenerationOptions{MaxTokens: proto.Uint32(8)},
	}
}

func TestAskStreamsEveryStageInOrder(t *testing.T) {
	address, token := gateway(t)
	client := dial(t, address, token)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	stream, err := client.Ask(ctx, smallAsk())
	if err != nil {
		t.Fatal(err)
	}
	var events []*attrrag.AskEvent
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	// Deltas and occlusion progress repeat; the stages themselves come once each, in pipeline order.
	var order []string
	for i, ev := range events {
		if stage := attrrag.Stage(ev); len(order) == 0 || order[len(order)-1] != stage {
			order = append(order, stage)
		}
		if ev.GetRequestId() != events[0].GetRequestId() {
			t.Errorf("event %d has request id %q, the first %q", i, ev.GetRequestId(), events[0].GetRequestId())
		}
		if i > 0 && ev.GetSequence() <= events[i-1].GetSequence() {
			t.Errorf("event %d has sequence %d after %d", i, ev.GetSequence(), events[i-1].GetSequence())
		}
	}
	want := []string{"retrieved", "aligned", "reranked", "initial_answer_delta", "occlusion_progress", "attribution", "selection", "gap_fill", "final_answer_delta", "final_answer", "done"}
	if !reflect.DeepEqual(order, want) {
		t.Fatalf("stages %v, want %v", order, want)
	}
	if len(firstOf(events, "selection").GetSelection().GetSelectedSetIds()) == 0 {
		t.Error("the selection kept no context set")
	}
	if len(firstOf(events, "final_answer").GetFinalAnswer().GetContextChunkIds()) == 0 {
		t.Error("the final answer names no context chunk")
	}
}

func firstOf(events []*attrrag.AskEvent, stage string) *attrrag.AskEvent {
	for _, ev := range events {
		if attrrag.Stage(ev) == stage {
			return ev
		}
	}
	return nil
}

func TestWrongTokenIsUnauthenticated(t *testing.T) {
	address, _ := gateway(t)
	client := dial(t, address, "not-the-token")
	_, err := client.AskAnswer(context.Background(), smallAsk(), nil)
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("Ask with a wrong token: %v, want code Unauthenticated", err)
	}
	var callErr *attrrag.Error
	if !errors.As(err, &callErr) || callErr.Op != "Ask" || callErr.Message() == "" {
		t.Fatalf("Ask with a wrong token: %#v, want an *attrrag.Error for Ask with the server's message", err)
	}
	_, _, err = client.CreateBatch(context.Background(), []*attrrag.BatchItem{{ItemId: "x", Request: smallAsk()}}, attrrag.BatchOptions{})
	if s, _ := status.FromError(err); s.Code() != codes.Unauthenticated {
		t.Fatalf("CreateBatch with a wrong token: %v, want code Unauthenticated", err)
	}
}
