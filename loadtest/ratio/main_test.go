package ratio

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
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// TestMain removes the podium binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// buildPodium compiles ./cmd/podium once into a temp dir, as a real deployment would
// run it.
func buildPodium(t *testing.T) string {
	t.Helper()
	// go test caches results by the files a test touches; the build below reads the
	// server's sources in a subprocess, so stat them here to make them part of the key.
	_ = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "go.mod") || strings.HasSuffix(path, "go.sum")) {
			_, _ = os.Stat(path)
		}
		return nil
	})
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "podium-loadtest-bin-*"); buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "podium")
		goTool := os.Getenv("GO")
		if goTool == "" {
			goTool = "go"
		}
		out, err := exec.Command(goTool, "build", "-o", buildBin, "../../cmd/podium").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/podium: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

func testLog(t *testing.T) func(string, ...any) {
	return func(format string, args ...any) { t.Logf(format, args...) }
}
