package attrrag

import (
	"crypto/rand"
	"fmt"
)

// randomUUID returns a version 4 UUID, the form of the batch ids the gateway picks itself.
func randomUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("attrrag: drawing a batch id: %w; pass BatchOptions.ID", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
