package persist

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"podium/engine"
)

// formatV1Digest is the SHA-256 of the engine's encoding after the build before the
// persist split (journal, store and cluster in packages of their own) opened
// testdata/format-v1/single.tar.gz: a data directory that build wrote under load with a
// clean stop (final snapshot), more load, public content and then SIGKILL, so opening it
// reads a Badger snapshot and replays journal records after it. cmd/podium's test of
// the same name checks it, and the cluster's, through the binary.
const formatV1Digest = "3bb222e44ecd0cd6d331c361fa249c5eb070ff7b6aec95eb12558dcc6568996b"

func TestDataDirFromEarlierBuild(t *testing.T) {
	dir := t.TempDir()
	untar(t, filepath.Join("testdata", "format-v1", "single.tar.gz"), dir)
	n, err := Open(filepath.Join(dir, "single"), Options{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	h := sha256.New()
	var judges, projects int
	n.Read(func(s *engine.State) {
		judges, projects = len(s.Judges), len(s.Projects)
		// What later builds derive from the same records is left out: the undo points
		// of the last minute's finishes (docs/behaviour.md#on-the-floor) and the counts
		// of the ratings' inputs (docs/behaviour.md#ratings); the fixture has no
		// conflicts and no idempotency keys, which only new requests make.
		if len(s.Conflicts) != 0 || len(s.Keys) != 0 {
			t.Fatalf("fixture opened with %d conflicts, %d keys", len(s.Conflicts), len(s.Keys))
		}
		c := *s
		c.Undo, c.RatingInputs, c.RatedAt = nil, 0, 0
		if err := c.EncodeTo(h); err != nil {
			t.Fatal(err)
		}
	})
	if judges == 0 || projects == 0 {
		t.Fatalf("fixture opened empty: %d judges, %d projects", judges, projects)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != formatV1Digest {
		t.Fatalf("state digest %s, the earlier build had %s", got, formatV1Digest)
	}
}

// untar unpacks a .tar.gz of a data directory into dir.
func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Clean(h.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			t.Fatalf("bad path in fixture: %q", h.Name)
		}
		target := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o700)
		case tar.TypeReg:
			err = writeFileFrom(target, tr, os.FileMode(h.Mode)&0o777)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func writeFileFrom(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
