package journal

// Dropping records from either end of the journal (snapshots cover the front; raft
// log conflicts remove the back).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"podium/persist/internal/disk"
)

// TruncateFront drops every record with an index up to and including upTo. Whole
// segments go from disk; the exact first index is kept in a small marker file. Appends
// are held only while the in-memory index changes, not during the marker's fsyncs.
func (j *Journal) TruncateFront(upTo uint64) error {
	j.truncMu.Lock()
	defer j.truncMu.Unlock()
	j.mu.RLock()
	first, closed := j.first, j.closed
	j.mu.RUnlock()
	if closed {
		return errors.New("journal is closed")
	}
	if upTo < first {
		return nil
	}
	if err := j.writeFirst(upTo + 1); err != nil {
		return err
	}
	j.appendMu.Lock()
	j.mu.Lock()
	j.first = max(j.first, upTo+1)
	if j.last < upTo {
		j.last = upTo
	}
	// Segments whose records all lie below the new first index (never the active one).
	n := 0
	for n < len(j.segs)-1 && j.segs[n+1].base <= upTo+1 {
		n++
	}
	gone := append([]*segment(nil), j.segs[:n]...)
	j.segs = append(j.segs[:0:0], j.segs[n:]...)
	j.mu.Unlock()
	j.appendMu.Unlock()
	for _, s := range gone {
		s.f.Close()
		if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove journal segment: %w", err)
		}
	}
	if len(gone) > 0 {
		return disk.SyncDir(j.dir)
	}
	return nil
}

func (j *Journal) writeFirst(v uint64) error {
	j.markerMu.Lock()
	defer j.markerMu.Unlock()
	path := filepath.Join(j.dir, firstFile)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write journal marker: %w", err)
	}
	_, err = f.WriteString(strconv.FormatUint(v, 10) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = disk.SyncDir(j.dir)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write journal marker: %w", err)
	}
	return nil
}

// TruncateBack drops every record with an index from from on (raft's log conflicts).
// It is durable when it returns: later segments are deleted and the rest of the
// segment holding from is zeroed.
func (j *Journal) TruncateBack(from uint64) error {
	j.truncMu.Lock()
	defer j.truncMu.Unlock()
	j.appendMu.Lock()
	defer j.appendMu.Unlock()
	j.mu.RLock()
	closed, last := j.closed, j.last
	j.mu.RUnlock()
	if closed {
		return errors.New("journal is closed")
	}
	if from > last {
		return nil
	}
	if from == 0 {
		from = 1
	}
	// Later segments first (a crash in between leaves a consistent prefix).
	k := len(j.segs)
	for k > 0 && j.segs[k-1].base >= from {
		k--
	}
	if k < len(j.segs) {
		if err := j.removeSegments(k); err != nil {
			return err
		}
	}
	if s := j.active(); s != nil && len(s.offsets) > 0 && from <= s.lastIndex() {
		off := s.offsets[from-s.base]
		if err := disk.ZeroRange(s.f, off, max(s.end, j.dirtyTo)); err != nil {
			return fmt.Errorf("journal truncate: %w", err)
		}
		j.mu.Lock()
		s.offsets = s.offsets[:from-s.base]
		s.end = off
		j.mu.Unlock()
		j.dirtyTo = 0
	}
	j.mu.Lock()
	markerAhead := j.first > from
	j.mu.Unlock()
	if markerAhead {
		if err := j.writeFirst(from); err != nil {
			return err
		}
	}
	j.mu.Lock()
	j.last = from - 1
	j.first = min(j.first, from) // empty when it was at or above from
	j.mu.Unlock()
	return nil
}
