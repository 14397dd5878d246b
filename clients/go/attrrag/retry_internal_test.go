package attrrag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestBackoffGrowsByTheMultiplierUpToTheCap(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 10, InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, Multiplier: 3, Jitter: -1}
	// random 0.5 is the middle of the jitter range; with Jitter < 0 it must not matter anyway.
	var got []time.Duration
	for attempt := 1; attempt <= 5; attempt++ {
		got = append(got, p.backoff(attempt, 0.5), p.backoff(attempt, 0.99))
	}
	want := []time.Duration{100, 100, 300, 300, 900, 900, 1000, 1000, 1000, 1000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("waits %v, want %v ms (×3 from 100 ms, capped at 1 s, no jitter)", got, want)
		}
	}
}

func TestBackoffJitterSpreadsEitherWayWithinTheCap(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 10, InitialBackoff: 200 * time.Millisecond, MaxBackoff: 5 * time.Second, Multiplier: 2, Jitter: 0.2}
	cases := []struct {
		attempt int
		random  float64
		want    time.Duration
	}{
		{1, 0, 160 * time.Millisecond},
		{1, 0.5, 200 * time.Millisecond},
		{1, 0.75, 220 * time.Millisecond},
		{3, 0, 640 * time.Millisecond},
		{3, 0.75, 880 * time.Millisecond},
		// 200 ms × 2^5 = 6.4 s, capped at 5 s: jitter spreads 4-6 s, and the cap holds above it too.
		{6, 0, 4 * time.Second},
		{6, 0.25, 4500 * time.Millisecond},
		{6, 0.99, 5 * time.Second},
	}
	for _, c := range cases {
		if got := p.backoff(c.attempt, c.random); got != c.want {
			t.Errorf("attempt %d, random %v: wait %v, want %v", c.attempt, c.random, got, c.want)
		}
	}
}

func TestRetryPolicyZeroFieldsTakeTheDefaults(t *testing.T) {
	if got := (RetryPolicy{}).withDefaults(); got != DefaultRetryPolicy {
		t.Errorf("the zero policy became %+v, want %+v", got, DefaultRetryPolicy)
	}
	if got := (RetryPolicy{MaxAttempts: 1, Jitter: -1}).withDefaults(); got.MaxAttempts != 1 || got.Jitter != -1 || got.InitialBackoff != DefaultRetryPolicy.InitialBackoff {
		t.Errorf("MaxAttempts 1 without jitter became %+v; the set fields must stay", got)
	}
	// The default waits for the first retries: 200 ms ± 20 %, then ×2.
	if lo, hi := DefaultRetryPolicy.backoff(2, 0), DefaultRetryPolicy.backoff(2, 0.999999); lo != 320*time.Millisecond || hi < 479*time.Millisecond || hi > 480*time.Millisecond {
		t.Errorf("the default's second wait spans %v-%v, want 320-480 ms", lo, hi)
	}
}

// fastRetrier waits a millisecond between attempts and records what OnRetry is told.
func fastRetrier(maxAttempts int, calls *[]string) retrier {
	return retrier{
		policy: RetryPolicy{MaxAttempts: maxAttempts, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Multiplier: 2, Jitter: -1},
		onRetry: func(method string, attempt int, err error, wait time.Duration) {
			*calls = append(*calls, fmt.Sprint(method, " ", status.Code(err), " ", attempt))
		},
	}
}

func TestRetryCallRetriesOnlyTransientCodes(t *testing.T) {
	for _, c := range []struct {
		code     codes.Code
		attempts int
	}{
		{codes.Unavailable, 3},
		{codes.ResourceExhausted, 3},
		{codes.InvalidArgument, 1},
		{codes.Unauthenticated, 1},
		{codes.Internal, 1},
		{codes.DeadlineExceeded, 1},
	} {
		var hooks []string
		tries := 0
		_, err := retryCall(context.Background(), fastRetrier(3, &hooks), "CancelBatch", func() (int, error) {
			tries++
			return 0, status.Error(c.code, "refused")
		})
		var e *Error
		if tries != c.attempts || len(hooks) != c.attempts-1 || !errors.As(err, &e) || e.Code() != c.code || e.Attempts != c.attempts || e.Op != "CancelBatch" {
			t.Errorf("%s: tried %d times (OnRetry %v), error %v; want %d tries and the last error", c.code, tries, hooks, err, c.attempts)
		}
	}
	// A transient failure, then a success: the success is returned.
	var hooks []string
	tries := 0
	got, err := retryCall(context.Background(), fastRetrier(5, &hooks), "CreateBatch", func() (string, error) {
		if tries++; tries < 3 {
			return "", status.Error(codes.ResourceExhausted, "busy")
		}
		return "batch", nil
	})
	if got != "batch" || err != nil || strings.Join(hooks, ",") != "CreateBatch ResourceExhausted 1,CreateBatch ResourceExhausted 2" {
		t.Errorf("got %q, %v after OnRetry %v; want the success after two retries", got, err, hooks)
	}
}

func TestRetryStopsWaitingWhenTheContextEnds(t *testing.T) {
	r := retrier{policy: RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Hour, MaxBackoff: time.Hour, Multiplier: 2, Jitter: -1}}
	ctx, cancel := context.WithCancel(context.Background())
	r.onRetry = func(string, int, error, time.Duration) { cancel() }
	_, err := retryCall(ctx, r, "CreateBatch", func() (int, error) { return 0, status.Error(codes.Unavailable, "connection refused") })
	if status.Code(err) != codes.Canceled || !strings.Contains(err.Error(), "while waiting 1h0m0s to retry after Unavailable: connection refused") {
		t.Fatalf("cancelled during the wait: %v, want Canceled saying what it waited for", err)
	}
	// A deadline that ends before the wait would: the server's error at once, without waiting.
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r.onRetry = func(string, int, error, time.Duration) { t.Error("OnRetry called for a wait past the deadline") }
	_, err = retryCall(ctx, r, "CreateBatch", func() (int, error) { return 0, status.Error(codes.ResourceExhausted, "busy") })
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a wait past the deadline: %v, want the ResourceExhausted at once", err)
	}
}

// script is a stream that yields its messages, then its error (io.EOF for a normal end).
type script struct {
	messages []string
	err      error
}

func (s *script) Recv() (string, error) {
	if len(s.messages) == 0 {
		return "", s.err
	}
	m := s.messages[0]
	s.messages = s.messages[1:]
	return m, nil
}

// recvAll reads a retryStream over the scripted streams (one per opening) to its end.
func recvAll(t *testing.T, maxAttempts int, streams ...*script) ([]string, []string, int, error) {
	t.Helper()
	var hooks []string
	opened := 0
	s, err := openStream(context.Background(), fastRetrier(maxAttempts, &hooks), "Ask", func() (receiver[string], error) {
		opened++
		return streams[opened-1], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		m, err := s.Recv()
		if err != nil {
			return got, hooks, opened, err
		}
		got = append(got, m)
	}
}

func TestRetryStreamReopensOnlyBeforeTheFirstMessage(t *testing.T) {
	busy := status.Error(codes.ResourceExhausted, "the server is busy")
	got, hooks, opened, err := recvAll(t, 5, &script{err: busy}, &script{err: busy}, &script{messages: []string{"retrieved", "done"}, err: io.EOF})
	if err != io.EOF || strings.Join(got, ",") != "retrieved,done" || opened != 3 || strings.Join(hooks, ",") != "Ask ResourceExhausted 1,Ask ResourceExhausted 2" {
		t.Errorf("refused twice, then admitted: %v then %v, opened %d times, OnRetry %v", got, err, opened, hooks)
	}
	// Failing after a message has reached the caller: no new stream, which would repeat the stages.
	gone := status.Error(codes.Unavailable, "the server is shutting down")
	got, hooks, opened, err = recvAll(t, 5, &script{messages: []string{"retrieved"}, err: gone}, &script{messages: []string{"retrieved", "done"}, err: io.EOF})
	if status.Code(err) != codes.Unavailable || strings.Join(got, ",") != "retrieved" || opened != 1 || len(hooks) != 0 {
		t.Errorf("cut off after the first event: %v then %v, opened %d times, OnRetry %v; want the error, not a second stream", got, err, opened, hooks)
	}
	// Out of attempts: the last refusal, and it stays the answer.
	_, hooks, opened, err = recvAll(t, 2, &script{err: busy}, &script{err: busy})
	var e *Error
	if !errors.As(err, &e) || e.Code() != codes.ResourceExhausted || e.Attempts != 2 || opened != 2 || len(hooks) != 1 || !strings.Contains(e.Error(), "failed after 2 attempts") {
		t.Errorf("refused on both attempts: %v, opened %d times, OnRetry %v", err, opened, hooks)
	}
}
