package transport

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadLimited compares readLimited with reading everything and checking the size,
// over body sizes around the limit and the buffer's growth steps, Content-Length hints
// that are right, too small, too large or absent, and readers that return one byte at
// a time or data together with io.EOF.
func TestReadLimited(t *testing.T) {
	const limit = 1500
	for _, size := range []int{0, 1, 15, 511, 512, 513, 1024, 1499, 1500, 1501, 4000} {
		body := strings.Repeat("x", size)
		for _, hint := range []int{-1, 0, size, size / 2, size + 100, limit * 3} {
			for name, wrap := range map[string]func(io.Reader) io.Reader{
				"plain":   func(r io.Reader) io.Reader { return r },
				"onebyte": iotest.OneByteReader,
				"dataeof": iotest.DataErrReader,
			} {
				got, err := readLimited(wrap(strings.NewReader(body)), limit, hint)
				if size > limit {
					if !errors.Is(err, errOverLimit) {
						t.Errorf("size %d hint %d %s: err %v, want errOverLimit", size, hint, name, err)
					}
					continue
				}
				if err != nil || !bytes.Equal(got, []byte(body)) {
					t.Errorf("size %d hint %d %s: got %d bytes, err %v", size, hint, name, len(got), err)
				}
			}
		}
	}
	boom := errors.New("connection reset")
	if _, err := readLimited(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), limit, 10); !errors.Is(err, boom) {
		t.Errorf("read error: got %v, want %v", err, boom)
	}
}
