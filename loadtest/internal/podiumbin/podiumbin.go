// Package podiumbin builds the podium server binary once per test process, for the
// loadtest packages' tests that drive it as a real deployment would.
package podiumbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	once sync.Once
	dir  string
	bin  string
	err  error
)

// Build compiles root/cmd/podium once into a temp dir and returns the binary's path;
// root is the repository's root relative to the test's package.
func Build(t testing.TB, root string) string {
	t.Helper()
	// go test caches results by the files a test touches; the build below reads the
	// server's sources in a subprocess, so stat them here to make them part of the key.
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "go.mod") || strings.HasSuffix(path, "go.sum")) {
			_, _ = os.Stat(path)
		}
		return nil
	})
	once.Do(func() {
		if dir, err = os.MkdirTemp("", "podium-loadtest-bin-*"); err != nil {
			return
		}
		bin = filepath.Join(dir, "podium")
		goTool := os.Getenv("GO")
		if goTool == "" {
			goTool = "go"
		}
		out, cerr := exec.Command(goTool, "build", "-o", bin, filepath.Join(root, "cmd", "podium")).CombinedOutput()
		if cerr != nil {
			err = fmt.Errorf("go build ./cmd/podium: %v\n%s", cerr, out)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Remove deletes the binary Build made, if any (call it from TestMain after m.Run).
func Remove() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}
