package attrrag

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// retrier decides, after each failed attempt of a call, whether and when to try it again.
type retrier struct {
	policy  RetryPolicy
	onRetry func(method string, attempt int, err error, wait time.Duration)
}

// again is called after attempt (1 for the first try) of op failed with err. It returns nil once the backoff has
// passed and the call should be tried again; otherwise the error to return: err as an *Error, or, when ctx ends
// during the wait, codes.Canceled or codes.DeadlineExceeded saying what was being waited for.
func (r retrier) again(ctx context.Context, op string, attempt int, err error) error {
	failed := &Error{Op: op, status: status.Convert(err), Attempts: attempt}
	if e, ok := err.(*Error); ok {
		failed.status = e.status
	}
	if !retryable(failed.Code()) || attempt >= r.policy.MaxAttempts {
		return failed
	}
	wait := r.policy.backoff(attempt, jitterDraw())
	// A wait the deadline cuts short cannot end in a success; the server's refusal says more than the deadline.
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= wait {
		return failed
	}
	if r.onRetry != nil {
		r.onRetry(op, attempt, failed, wait)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		code := codes.Canceled
		if ctx.Err() == context.DeadlineExceeded {
			code = codes.DeadlineExceeded
		}
		return &Error{Op: op, Attempts: attempt, status: status.New(code, fmt.Sprintf("%v while waiting %s to retry after %s: %s", ctx.Err(), wait.Round(time.Millisecond), failed.Code(), failed.Message()))}
	}
}

// retryCall runs a unary call until it succeeds, fails for good, or runs out of attempts.
func retryCall[T any](ctx context.Context, r retrier, op string, call func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		res, err := call()
		if err == nil {
			return res, nil
		}
		if err := r.again(ctx, op, attempt, err); err != nil {
			var zero T
			return zero, err
		}
	}
}
