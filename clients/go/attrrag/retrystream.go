package attrrag

import (
	"context"
	"io"
)

// receiver is a server stream as the generated code returns it.
type receiver[M any] interface {
	Recv() (M, error)
}

// retryStream is a server stream that is opened again after a transient failure, but only until its first
// message has reached the caller: a stream opened after that would repeat what the caller has seen (an Ask's
// stages, a batch's results).
type retryStream[M any] struct {
	ctx      context.Context
	retry    retrier
	op       string
	open     func() (receiver[M], error)
	stream   receiver[M]
	attempt  int
	received bool
	// failed, once set, is returned by every later Recv.
	failed error
}

// openStream opens the stream, retrying failures to open it as a unary call's.
func openStream[M any](ctx context.Context, r retrier, op string, open func() (receiver[M], error)) (*retryStream[M], error) {
	s := &retryStream[M]{ctx: ctx, retry: r, op: op, open: open}
	if err := s.reopen(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *retryStream[M]) reopen() error {
	for {
		s.attempt++
		stream, err := s.open()
		if err == nil {
			s.stream = stream
			return nil
		}
		if err := s.retry.again(s.ctx, s.op, s.attempt, err); err != nil {
			return err
		}
	}
}

// Recv returns the next message, io.EOF after the last one, or an *Error.
func (s *retryStream[M]) Recv() (M, error) {
	var zero M
	for s.failed == nil {
		m, err := s.stream.Recv()
		if err == nil {
			s.received = true
			return m, nil
		}
		if err == io.EOF {
			return zero, err
		}
		if s.received {
			s.failed = wrap(s.op, err)
		} else if s.failed = s.retry.again(s.ctx, s.op, s.attempt, err); s.failed == nil {
			s.failed = s.reopen()
		}
	}
	return zero, s.failed
}
