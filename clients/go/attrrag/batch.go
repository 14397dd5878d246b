package attrrag

import (
	"context"
	"fmt"
	"io"

	pb "github.com/attr-rag/attr-rag/clients/go/gen/attr_rag/v1"
	"google.golang.org/protobuf/proto"
)

// BatchOptions are CreateBatch's optional settings.
type BatchOptions struct {
	// ID makes the call idempotent: the same id with the same items returns the existing batch (created =
	// false), with other items it fails with codes.AlreadyExists. Empty: a random UUID, picked once per call so
	// a retry after a lost reply finds the batch its first try created instead of creating another.
	ID string
	// Label is free text shown in listings.
	Label string
	// WebhookURL, unless empty, is called (signed; see VerifyWebhook) once the batch ends.
	WebhookURL string
}

// CreateBatch queues items and returns the batch, and whether this call created it. An item that is malformed
// does not fail the call: its result carries its own status code.
func (c *Client) CreateBatch(ctx context.Context, items []*BatchItem, opts BatchOptions) (*Batch, bool, error) {
	id := opts.ID
	if id == "" {
		var err error
		if id, err = randomUUID(); err != nil {
			return nil, false, err
		}
	}
	req := &pb.CreateBatchRequest{BatchId: id, Items: items, Label: opts.Label}
	if opts.WebhookURL != "" {
		req.WebhookUrl = proto.String(opts.WebhookURL)
	}
	res, err := retryCall(ctx, c.retry, "CreateBatch", func() (*pb.CreateBatchResponse, error) {
		return c.batches.CreateBatch(ctx, req)
	})
	if err != nil {
		return nil, false, err
	}
	return res.GetBatch(), res.GetCreated(), nil
}

// Ended says whether the batch reached a final state (completed or cancelled).
func Ended(b *Batch) bool {
	return b.GetState() == pb.BatchState_BATCH_STATE_COMPLETED || b.GetState() == pb.BatchState_BATCH_STATE_CANCELLED
}

// WaitBatch watches the batch until it ends and returns it as it ended. progress, unless nil, sees each
// update (counts, rate, ETA) as it comes: at once, when the counts change and at least every 10 s.
func (c *Client) WaitBatch(ctx context.Context, batchID string, progress func(*Batch)) (*Batch, error) {
	req := &pb.WatchBatchRequest{BatchId: batchID}
	stream, err := openStream(ctx, c.retry, "WatchBatch", func() (receiver[*pb.WatchBatchResponse], error) {
		return c.batches.WatchBatch(ctx, req)
	})
	if err != nil {
		return nil, err
	}
	var last *Batch
	for {
		res, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		last = res.GetBatch()
		if progress != nil {
			progress(last)
		}
	}
	if !Ended(last) {
		return nil, fmt.Errorf("attr-rag WatchBatch: the stream for batch %q closed before the batch ended (last state %s); call WaitBatch again", batchID, last.GetState())
	}
	return last, nil
}

// CancelBatch stops the batch: running items are stopped, queued ones end cancelled, finished results stay.
// It returns the batch as the call left it; an ended batch comes back unchanged.
func (c *Client) CancelBatch(ctx context.Context, batchID string) (*Batch, error) {
	req := &pb.CancelBatchRequest{BatchId: batchID}
	res, err := retryCall(ctx, c.retry, "CancelBatch", func() (*pb.CancelBatchResponse, error) {
		return c.batches.CancelBatch(ctx, req)
	})
	if err != nil {
		return nil, err
	}
	return res.GetBatch(), nil
}
