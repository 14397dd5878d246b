package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Builds the example as a user would and runs it against the gateway packages/gateway/test/goClient.test.ts
// starts (ATTR_RAG_TEST_ADDRESS, ATTR_RAG_TEST_TOKEN, and ATTR_RAG_TEST_CA when it serves TLS).
func TestExampleAsksTheGateway(t *testing.T) {
	address, token := os.Getenv("ATTR_RAG_TEST_ADDRESS"), os.Getenv("ATTR_RAG_TEST_TOKEN")
	if address == "" || token == "" {
		t.Skip("no gateway: set ATTR_RAG_TEST_ADDRESS (host:port) and ATTR_RAG_TEST_TOKEN")
	}
	binary := filepath.Join(t.TempDir(), "ask")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	connect := []string{"-address", address, "-ca", os.Getenv("ATTR_RAG_TEST_CA")}
	ask := exec.Command(binary, append(connect, "-question", "Explain all the required steps of the acetaminophen synthesis.", "-max-tokens", "8")...)
	ask.Env = append(os.Environ(), "ATTR_RAG_TOKEN="+token)
	out, err := ask.Output()
	if err != nil {
		t.Fatalf("the example failed: %v\n%s", err, stderrOf(err))
	}
	text := strings.TrimSpace(string(out))
	if !regexp.MustCompile(`\S\n(.*\n)*request [0-9a-f-]{36} took \d+ ms$`).MatchString(text) {
		t.Fatalf("the example printed %q, want the answer, then its request id and time", text)
	}

	wrong := exec.Command(binary, append(connect, "-token", "wrong", "-question", "q")...)
	stderr, err := wrong.CombinedOutput()
	if err == nil || !strings.Contains(string(stderr), "attr-rag Ask failed: Unauthenticated") {
		t.Fatalf("with a wrong token the example ended %v, printing %q; want a failure naming Unauthenticated", err, stderr)
	}
}

func stderrOf(err error) []byte {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.Stderr
	}
	return nil
}
