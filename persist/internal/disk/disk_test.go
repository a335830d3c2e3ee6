package disk

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestZeroRangeAndPreallocate(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "seg"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Preallocate(f, 3<<20); err != nil {
		t.Fatal(err)
	}
	if fi, _ := f.Stat(); fi.Size() != 3<<20 {
		t.Fatalf("preallocated size %d, want %d", fi.Size(), 3<<20)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{7}, 100), 10); err != nil {
		t.Fatal(err)
	}
	if err := ZeroRange(f, 20, 50); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 100)
	if _, err := f.ReadAt(b, 10); err != nil {
		t.Fatal(err)
	}
	for i, c := range b {
		if want := byte(7); (i+10 >= 20 && i+10 < 50) == (c != 0) || (c != 0 && c != want) {
			t.Fatalf("byte %d is %d after zeroing [20, 50)", i+10, c)
		}
	}
	if err := ZeroRange(f, 50, 50); err != nil { // empty range
		t.Fatal(err)
	}
	if err := SyncDir(filepath.Dir(f.Name())); err != nil {
		t.Fatal(err)
	}
}

func TestCountingWriter(t *testing.T) {
	var buf bytes.Buffer
	w := &CountingWriter{W: &buf}
	for _, s := range []string{"ab", "", "cde"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if w.N != 5 || buf.String() != "abcde" {
		t.Fatalf("counted %d, wrote %q", w.N, buf.String())
	}
}

// ReadWhole gives a file's content (mapped), and an empty file's.
func TestReadWhole(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("journal record "), 10000)
	for name, content := range map[string][]byte{"full": want, "empty": nil} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		got, release, err := ReadWhole(path)
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("%s: %d bytes, %v; want %d", name, len(got), err, len(content))
		}
		release()
	}
	if _, _, err := ReadWhole(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
}
