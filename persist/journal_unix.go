package persist

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// preallocate reserves size bytes for f (blocks allocated now, so that writes within
// them cannot fail for lack of space). Filesystems without fallocate get zeros written.
func preallocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	return zeroRange(f, 0, size)
}

func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
