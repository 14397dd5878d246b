package attrrag_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/attr-rag/attr-rag/clients/go/attrrag"
)

const testKey = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // 24 bytes once decoded

// signed builds the headers the gateway sends for body, signed with key at time at.
func signed(key string, id string, at time.Time, body string) http.Header {
	raw, _ := base64.StdEncoding.DecodeString(key)
	mac := hmac.New(sha256.New, raw)
	fmt.Fprintf(mac, "%s.%d.%s", id, at.Unix(), body)
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", fmt.Sprint(at.Unix()))
	h.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return h
}

func TestVerifyWebhookAcceptsAValidSignature(t *testing.T) {
	body := `{"type":"batch.completed","data":{"batch_id":"b1"}}`
	h := signed(testKey, "msg_1", time.Now(), body)
	if err := attrrag.VerifyWebhook(h, []byte(body), "whsec_"+testKey); err != nil {
		t.Fatal(err)
	}
	// During a secret rotation the header carries one signature per secret; any one matching suffices.
	h.Set("webhook-signature", "v1,bm90IGl0 "+h.Get("webhook-signature"))
	if err := attrrag.VerifyWebhook(h, []byte(body), "whsec_"+testKey); err != nil {
		t.Fatalf("with a second, stale signature first: %v", err)
	}
}

func TestVerifyWebhookRefusesForgedOldAndIncompleteCalls(t *testing.T) {
	body := `{"type":"batch.completed"}`
	other := base64.StdEncoding.EncodeToString([]byte("another key of 24 bytes!"))
	missingID := signed(testKey, "msg_1", time.Now(), body)
	missingID.Del("webhook-id")
	badStamp := signed(testKey, "msg_1", time.Now(), body)
	badStamp.Set("webhook-timestamp", "yesterday")
	cases := []struct {
		name    string
		headers http.Header
		body    string
		secret  string
		want    string
	}{
		{"another secret", signed(other, "msg_1", time.Now(), body), body, "whsec_" + testKey, "no v1 signature in webhook-signature matches webhook msg_1"},
		{"an altered body", signed(testKey, "msg_1", time.Now(), body), body + " ", "whsec_" + testKey, "no v1 signature"},
		{"another id", withHeader(signed(testKey, "msg_1", time.Now(), body), "webhook-id", "msg_2"), body, "whsec_" + testKey, "no v1 signature"},
		{"ten minutes old", signed(testKey, "msg_1", time.Now().Add(-10*time.Minute), body), body, "whsec_" + testKey, "old, more than 5m0s: a replayed call"},
		{"ten minutes ahead", signed(testKey, "msg_1", time.Now().Add(10*time.Minute), body), body, "whsec_" + testKey, "in the future, more than 5m0s"},
		{"no webhook-id", missingID, body, "whsec_" + testKey, "the webhook-id header is missing"},
		{"a timestamp that is no number", badStamp, body, "whsec_" + testKey, `webhook-timestamp "yesterday" is not a number`},
	}
	for _, c := range cases {
		err := attrrag.VerifyWebhook(c.headers, []byte(c.body), c.secret)
		if !errors.Is(err, attrrag.ErrInvalidWebhook) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalidWebhook saying %q", c.name, err, c.want)
		}
	}
}

func TestVerifyWebhookSaysWhenTheSecretIsMalformed(t *testing.T) {
	body := "{}"
	err := attrrag.VerifyWebhook(signed(testKey, "msg_1", time.Now(), body), []byte(body), "whsec_not base64!")
	if err == nil || !strings.Contains(err.Error(), `must be "whsec_" followed by the base64`) {
		t.Fatalf("%v, want an error about the secret's form", err)
	}
}

func withHeader(h http.Header, name, value string) http.Header {
	h.Set(name, value)
	return h
}
