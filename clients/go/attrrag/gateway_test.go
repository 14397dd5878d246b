package attrrag_test

import (
	"os"
	"testing"

	"github.com/attr-rag/attr-rag/clients/go/attrrag"
)

// The tests that need a gateway read where it is from the environment; packages/gateway/test/goClient.test.ts
// starts one and sets these.
const (
	envAddress = "ATTR_RAG_TEST_ADDRESS"
	envToken   = "ATTR_RAG_TEST_TOKEN"
	envSecret  = "ATTR_RAG_TEST_WEBHOOK_SECRET"
	// Optional: the PEM CA of a gateway serving TLS.
	envCA = "ATTR_RAG_TEST_CA"
	// The question the demo corpus (examples/demo-corpus) answers.
	question = "Explain all the required steps of the acetaminophen synthesis."
)

// gateway returns the address and token of the gateway under test, or skips the test saying how to set one up.
func gateway(t *testing.T) (string, string) {
	t.Helper()
	address, token := os.Getenv(envAddress), os.Getenv(envToken)
	if address == "" || token == "" {
		t.Skipf("no gateway: set %s (host:port) and %s, e.g. as packages/gateway/test/goClient.test.ts does", envAddress, envToken)
	}
	return address, token
}

// webhookSecret returns the gateway's webhookSecret, or skips the test; the gateway must also allow webhooks to
// 127.0.0.1 (webhookAllowedHosts), where the test receives them.
func webhookSecret(t *testing.T) string {
	t.Helper()
	secret := os.Getenv(envSecret)
	if secret == "" {
		t.Skipf("no webhook secret: set %s to the gateway's webhookSecret (whsec_...), with webhookAllowedHosts=127.0.0.1", envSecret)
	}
	return secret
}

// dial connects to the gateway under test with token (over TLS when ATTR_RAG_TEST_CA is set); the client is
// closed when the test ends.
func dial(t *testing.T, address, token string) *attrrag.Client {
	t.Helper()
	return dialWith(t, address, attrrag.Options{Token: token})
}

// dialWith is dial with more options (retries, OnRetry).
func dialWith(t *testing.T, address string, opts attrrag.Options) *attrrag.Client {
	t.Helper()
	opts.CAFile = os.Getenv(envCA)
	client, err := attrrag.Dial(address, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}
