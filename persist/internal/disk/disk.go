// Package disk holds the small file helpers the journal, the snapshot store and the
// cluster's stable store share: directory sync, zeroing, the CRC table and a counting
// writer.
package disk

import (
	"hash/crc32"
	"io"
	"os"
)

// CRCTable is the Castagnoli table every checksum on disk uses (crc32c).
var CRCTable = crc32.MakeTable(crc32.Castagnoli)

// ZeroRange writes zeros over [from, to) of f and fdatasyncs it.
func ZeroRange(f *os.File, from, to int64) error {
	if to <= from {
		return nil
	}
	const chunk = 1 << 20
	z := make([]byte, min(chunk, to-from))
	for off := from; off < to; off += chunk {
		if _, err := f.WriteAt(z[:min(chunk, to-off)], off); err != nil {
			return err
		}
	}
	return Fdatasync(f)
}

// SyncDir fsyncs a directory, so that files created, renamed or removed in it stay so
// after a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// CountingWriter counts the bytes written through it.
type CountingWriter struct {
	W io.Writer
	N int
}

// Write writes p to W and counts what was written.
func (c *CountingWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += n
	return n, err
}
