package attrrag_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/attr-rag/attr-rag/clients/go/attrrag"
	pb "github.com/attr-rag/attr-rag/clients/go/gen/attr_rag/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// delivery is one webhook call as the receiver got it, with what VerifyWebhook said.
type delivery struct {
	headers http.Header
	body    []byte
	err     error
}

// webhookReceiver answers 204 to calls VerifyWebhook accepts and 401 to the rest, and hands each on.
func webhookReceiver(t *testing.T, secret string) (string, <-chan delivery) {
	calls := make(chan delivery, 16)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = attrrag.VerifyWebhook(r.Header, body, secret)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
		} else {
			w.WriteHeader(http.StatusNoContent)
		}
		calls <- delivery{headers: r.Header.Clone(), body: body, err: err}
	}))
	t.Cleanup(server.Close)
	return server.URL + "/attr-rag", calls
}

func readResults(t *testing.T, client *attrrag.Client, batchID string, offset uint32) []*attrrag.BatchItemResult {
	t.Helper()
	stream, err := client.Results(context.Background(), batchID, offset, false)
	if err != nil {
		t.Fatal(err)
	}
	var results []*attrrag.BatchItemResult
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			return results
		}
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
}

func TestBatchRunsWaitsResumesAndCallsItsWebhook(t *testing.T) {
	address, token := gateway(t)
	secret := webhookSecret(t)
	client := dial(t, address, token)
	url, calls := webhookReceiver(t, secret)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	items := []*attrrag.BatchItem{
		{ItemId: "one", Request: smallAsk()},
		{ItemId: "two", Request: &attrrag.AskRequest{Question: "How do I collect oxygen gas over water?", Generation: &pb.GenerationOptions{MaxTokens: proto.Uint32(6)}, Baseline: &pb.BaselineOptions{Baseline: pb.Baseline_BASELINE_TOPK}}},
		{ItemId: "empty", Request: &attrrag.AskRequest{Question: " "}},
	}
	id := fmt.Sprintf("go-%d", time.Now().UnixNano())
	batch, created, err := client.CreateBatch(ctx, items, attrrag.BatchOptions{ID: id, Label: "go client test", WebhookURL: url})
	if err != nil || !created || batch.GetBatchId() != id || batch.GetTotalItems() != 3 {
		t.Fatalf("CreateBatch: %v, created %v, err %v", batch, created, err)
	}
	// The same id and items again: the same batch, not a second one.
	if again, created, err := client.CreateBatch(ctx, items, attrrag.BatchOptions{ID: id, Label: "go client test", WebhookURL: url}); err != nil || created || again.GetBatchId() != id {
		t.Fatalf("CreateBatch again: %v, created %v, err %v", again, created, err)
	}

	var updates []*attrrag.Batch
	ended, err := client.WaitBatch(ctx, id, func(b *attrrag.Batch) { updates = append(updates, b) })
	if err != nil {
		t.Fatal(err)
	}
	if len(updates) == 0 || updates[len(updates)-1] != ended {
		t.Fatalf("progress saw %d updates, the last of them not the batch WaitBatch returned", len(updates))
	}
	if c := ended.GetCounts(); ended.GetState() != pb.BatchState_BATCH_STATE_COMPLETED || c.GetSucceeded() != 2 || c.GetFailed() != 1 {
		t.Fatalf("the batch ended %s with counts %v, want completed with 2 succeeded and 1 failed", ended.GetState(), c)
	}

	all := readResults(t, client, id, 0)
	if len(all) != 3 {
		t.Fatalf("%d results, want 3", len(all))
	}
	byItem := map[string]*attrrag.BatchItemResult{}
	for i, r := range all {
		if r.GetOffset() != uint32(i) {
			t.Errorf("result %d has offset %d", i, r.GetOffset())
		}
		byItem[r.GetItemId()] = r
	}
	if r := byItem["one"]; r.GetState() != pb.BatchItemState_BATCH_ITEM_STATE_SUCCEEDED || len(r.GetFinalAnswer().GetContextChunkIds()) == 0 || len(r.GetSelection().GetSelectedSetIds()) == 0 {
		t.Errorf("item one: %v, want succeeded with a selection and context chunks", r)
	}
	if r := byItem["empty"]; r.GetState() != pb.BatchItemState_BATCH_ITEM_STATE_FAILED || codes.Code(r.GetStatusCode()) != codes.InvalidArgument || r.GetStatusMessage() != "question is empty" {
		t.Errorf("item empty: %v, want failed with InvalidArgument: question is empty", r)
	}
	// A reader that stopped after the first result resumes from its offset + 1 and gets exactly the rest.
	rest := readResults(t, client, id, all[0].GetOffset()+1)
	if len(rest) != 2 || !proto.Equal(rest[0], all[1]) || !proto.Equal(rest[1], all[2]) {
		t.Fatalf("reading from offset 1 gave %d results, want the last 2 of the 3", len(rest))
	}

	// The webhook: signed with the gateway's secret (the receiver verified it), about this batch.
	var call delivery
	select {
	case call = <-calls:
	case <-ctx.Done():
		t.Fatal("no webhook call for the ended batch")
	}
	if call.err != nil {
		t.Fatalf("VerifyWebhook refused the gateway's call: %v", call.err)
	}
	var event struct {
		Type string `json:"type"`
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(call.body, &event); err != nil || event.Type != "batch.completed" || event.Data.ID != id {
		t.Fatalf("webhook body %s, want batch.completed for %s", call.body, id)
	}
	if err := attrrag.VerifyWebhook(call.headers, call.body, "whsec_"+testKey); !errors.Is(err, attrrag.ErrInvalidWebhook) {
		t.Fatalf("VerifyWebhook with another secret: %v, want ErrInvalidWebhook", err)
	}
}

func TestCancelBatchEndsItCancelled(t *testing.T) {
	address, token := gateway(t)
	client := dial(t, address, token)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var items []*attrrag.BatchItem
	for i := 0; i < 6; i++ {
		items = append(items, &attrrag.BatchItem{ItemId: fmt.Sprint("q", i), Request: smallAsk()})
	}
	batch, _, err := client.CreateBatch(ctx, items, attrrag.BatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CancelBatch(ctx, batch.GetBatchId()); err != nil {
		t.Fatal(err)
	}
	ended, err := client.WaitBatch(ctx, batch.GetBatchId(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := ended.GetCounts(); ended.GetState() != pb.BatchState_BATCH_STATE_CANCELLED || c.GetCancelled() == 0 || c.GetSucceeded()+c.GetFailed()+c.GetCancelled() != 6 {
		t.Fatalf("after CancelBatch the batch ended %s with counts %v, want cancelled with every item accounted for", ended.GetState(), c)
	}
	_, err = client.CancelBatch(ctx, "no-such-batch")
	if e := (*attrrag.Error)(nil); !errors.As(err, &e) || e.Code() != codes.NotFound || e.Op != "CancelBatch" {
		t.Fatalf("CancelBatch of an unknown batch: %v, want NotFound", err)
	}
}
