package ratio

import (
	"os"
	"testing"

	"podium/loadtest/internal/podiumbin"
)

// TestMain removes the podium binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	podiumbin.Remove()
	os.Exit(code)
}

// buildPodium compiles ./cmd/podium once into a temp dir, as a real deployment would
// run it.
func buildPodium(t *testing.T) string { return podiumbin.Build(t, "../..") }

func testLog(t *testing.T) func(string, ...any) {
	return func(format string, args ...any) { t.Logf(format, args...) }
}
