package disk

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Preallocate reserves size bytes for f (blocks allocated now, so that writes within
// them cannot fail for lack of space) and writes zeros over them, as PostgreSQL does
// for its WAL segments (wal_init_zero). fallocate alone leaves "unwritten" extents:
// every record written into one converts part of an extent, so its fdatasync also
// writes metadata (and, on a journaling filesystem, commits the filesystem's journal).
// Into blocks already written, an fdatasync writes the records only. Zeroing a 16 MiB
// segment takes about 13 ms, once per segment. fallocate goes first so that a full
// disk fails at once, before megabytes are written.
func Preallocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if err != nil && !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	return ZeroRange(f, 0, size)
}

// Fdatasync flushes f's data (and only the metadata needed to read it back).
func Fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
