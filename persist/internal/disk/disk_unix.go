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

// ReadWhole returns the content of the file at path for reading it once from start to
// end: mapped read-only with its pages mapped in at once (MAP_POPULATE), so that a
// 16 MiB journal segment costs neither a copy nor a page fault per 4 KiB
// (docs/behaviour.md#recovery-at-memory-speed); read with os.ReadFile where mapping
// fails. release unmaps it; the data must not be used after.
func ReadWhole(path string) (data []byte, release func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if n := st.Size(); n > 0 && n == int64(int(n)) {
		m, err := unix.Mmap(int(f.Fd()), 0, int(n), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err == nil {
			return m, func() { _ = unix.Munmap(m) }, nil
		}
	}
	data, err = os.ReadFile(path)
	return data, func() {}, err
}
