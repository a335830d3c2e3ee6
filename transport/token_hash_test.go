package transport

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestTokenHashMatchesSHA256: the hash a judge request is looked up by is the hex
// SHA-256 of the token, for tokens that fit the stack buffer and longer ones, and a
// buffer's earlier bytes are kept.
func TestTokenHashMatchesSHA256(t *testing.T) {
	for _, n := range []int{0, 1, 43, 64, 127, 128, 129, 300, 5000} {
		tok := strings.Repeat("aB3-_", n)[:n]
		sum := sha256.Sum256([]byte(tok))
		want := hex.EncodeToString(sum[:])
		if got := hashToken(tok); got != want {
			t.Fatalf("len %d: hashToken %s, want %s", n, got, want)
		}
		if got := string(appendTokenHash([]byte("x:"), tok)); got != "x:"+want {
			t.Fatalf("len %d: appendTokenHash %s, want x:%s", n, got, want)
		}
	}
}
