package attrrag_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/attr-rag/attr-rag/clients/go/attrrag"
	pb "github.com/attr-rag/attr-rag/clients/go/gen/attr_rag/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// holdSlot starts an Ask and returns once its first event has come: the gateway admitted it, and it holds the
// admission slot until it ends or release is called.
func holdSlot(t *testing.T, ctx context.Context, client *attrrag.Client) (release func()) {
	t.Helper()
	ctx, release = context.WithCancel(ctx)
	admitted, done := make(chan struct{}), make(chan error, 1)
	req := &attrrag.AskRequest{Question: question, Retrieval: &pb.RetrievalOptions{K: proto.Uint32(4)}, Generation: &pb.GenerationOptions{MaxTokens: proto.Uint32(24)}}
	go func() {
		stream, err := client.Ask(ctx, req)
		for first := true; err == nil; first = false {
			if _, err = stream.Recv(); err == nil && first {
				close(admitted)
			}
		}
		done <- err
	}()
	select {
	case <-admitted:
		return release
	case err := <-done:
		release()
		t.Fatalf("the Ask meant to hold the slot ended before its first event: %v", err)
	case <-ctx.Done():
		t.Fatal("the Ask meant to hold the slot got no first event")
	}
	return nil
}

// The gateway under test admits one Ask and queues none (maxConcurrentAsks 1, maxQueuedAsks 0), so while one
// runs a second is refused with ResourceExhausted.
func TestBusyGatewayAskIsRetriedUntilAdmitted(t *testing.T) {
	address, token := gateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	release := holdSlot(t, ctx, dial(t, address, token))
	defer release()

	// Without retries the refusal comes back as it is.
	once := dialWith(t, address, attrrag.Options{Token: token, Retry: attrrag.RetryPolicy{MaxAttempts: 1}, OnRetry: func(method string, attempt int, err error, wait time.Duration) {
		t.Errorf("OnRetry(%s, %d, %v) with MaxAttempts 1", method, attempt, err)
	}})
	_, err := once.AskAnswer(ctx, smallAsk(), nil)
	var refused *attrrag.Error
	if !errors.As(err, &refused) || status.Code(err) != codes.ResourceExhausted || !strings.Contains(refused.Message(), "busy") || refused.Op != "Ask" || refused.Attempts != 1 {
		t.Fatalf("an Ask while another runs, without retries: %v, want ResourceExhausted with the server's message (busy)", err)
	}

	// With retries: refused, waits, and is admitted once the slot is free. The first retry frees it, so the test
	// does not wait out the first Ask.
	type retry struct {
		method  string
		attempt int
		code    codes.Code
		wait    time.Duration
	}
	var mu sync.Mutex
	var retries []retry
	retrying := dialWith(t, address, attrrag.Options{Token: token, Retry: attrrag.RetryPolicy{MaxAttempts: 10}, OnRetry: func(method string, attempt int, err error, wait time.Duration) {
		mu.Lock()
		retries = append(retries, retry{method, attempt, status.Code(err), wait})
		mu.Unlock()
		release()
	}})
	var stages []string
	answer, err := retrying.AskAnswer(ctx, smallAsk(), func(ev *attrrag.AskEvent) { stages = append(stages, attrrag.Stage(ev)) })
	if err != nil {
		t.Fatalf("the retried Ask: %v (retries %v)", err, retries)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(retries) == 0 || retries[0].method != "Ask" || retries[0].attempt != 1 || retries[0].code != codes.ResourceExhausted {
		t.Fatalf("OnRetry saw %v, want first Ask attempt 1 refused with ResourceExhausted", retries)
	}
	if w := retries[0].wait; w < 160*time.Millisecond || w > 240*time.Millisecond {
		t.Errorf("the first retry waited %v, want the default 200 ms ± 20 %%", w)
	}
	if stages[0] != "retrieved" || stages[len(stages)-1] != "done" || answer.Final.GetText() == "" {
		t.Errorf("the retried Ask streamed %v with answer %q, want every stage from retrieved to done", stages, answer.Final.GetText())
	}
}
