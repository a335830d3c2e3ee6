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
