package attrrag

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WebhookTolerance is how far webhook-timestamp may be from the receiver's clock: older calls may be replays.
const WebhookTolerance = 5 * time.Minute

// ErrInvalidWebhook is wrapped by every error VerifyWebhook returns: answer such a call with 401 or 400.
var ErrInvalidWebhook = errors.New("invalid webhook")

// VerifyWebhook checks a call the gateway made to a batch's webhook URL, as Standard Webhooks sign it:
// webhook-signature holds "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>" entries, key being the base64 after
// "whsec_" in secret (the gateway's webhookSecret). body must be the request's exact bytes, read before any
// JSON decoding. nil means authentic and recent; the error says what is wrong.
func VerifyWebhook(headers http.Header, body []byte, secret string) error {
	key, err := webhookKey(secret)
	if err != nil {
		return err
	}
	for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		if headers.Get(name) == "" {
			return fmt.Errorf("%w: the %s header is missing; is the caller an Attr-RAG gateway?", ErrInvalidWebhook, name)
		}
	}
	id, stamp, signatures := headers.Get("webhook-id"), headers.Get("webhook-timestamp"), headers.Get("webhook-signature")
	seconds, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: webhook-timestamp %q is not a number of unix seconds", ErrInvalidWebhook, stamp)
	}
	if age := time.Since(time.Unix(seconds, 0)); age > WebhookTolerance {
		return fmt.Errorf("%w: webhook-timestamp %d is %s old, more than %s: a replayed call, or a clock out of sync", ErrInvalidWebhook, seconds, age.Round(time.Second), WebhookTolerance)
	} else if age < -WebhookTolerance {
		return fmt.Errorf("%w: webhook-timestamp %d is %s in the future, more than %s: a clock out of sync", ErrInvalidWebhook, seconds, (-age).Round(time.Second), WebhookTolerance)
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.", id, stamp)
	mac.Write(body)
	want := mac.Sum(nil)
	for _, entry := range strings.Fields(signatures) {
		version, encoded, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(encoded)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("%w: no v1 signature in webhook-signature matches webhook %s: the secret differs from the gateway's webhookSecret, or the body was altered", ErrInvalidWebhook, id)
}

// webhookKey decodes "whsec_<base64>" (the prefix is optional, as the gateway accepts it).
func webhookKey(secret string) ([]byte, error) {
	encoded := strings.TrimPrefix(strings.TrimSpace(secret), "whsec_")
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(key) == 0 {
		return nil, errors.New(`attrrag: the webhook secret must be "whsec_" followed by the base64 of the key, as the gateway's webhookSecret`)
	}
	return key, nil
}
