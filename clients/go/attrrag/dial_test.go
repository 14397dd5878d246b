package attrrag_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attr-rag/attr-rag/clients/go/attrrag"
)

func TestDialSaysWhatIsWrongWithTheCAFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.pem")
	if _, err := attrrag.Dial("127.0.0.1:1", attrrag.Options{CAFile: missing}); err == nil || !strings.Contains(err.Error(), "reading the CA file") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing CA file: %v, want an error reading it", err)
	}
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := attrrag.Dial("127.0.0.1:1", attrrag.Options{CAFile: notPEM}); err == nil || !strings.Contains(err.Error(), notPEM+" holds no PEM certificate") {
		t.Errorf("a CA file without a certificate: %v, want an error naming the file", err)
	}
}
