// Package journal is Podium's write-ahead log: records with contiguous indexes in
// preallocated segment files, a CRC per record, one write and one fdatasync per
// append, and the torn-tail and corruption rules of opening. It knows nothing of what
// the records hold.
package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/rs/zerolog"

	"podium/persist/internal/disk"
)

// The journal is a sequence of records with contiguous indexes, kept in segment files
// that Podium writes itself (no memory maps, so a full disk is an error, never SIGBUS):
//
//	<dir>/<first index:020d>.seg   records, each 8-byte aligned, then zeros
//	<dir>/first                    the first live index after TruncateFront (optional)
//
// A segment is preallocated (fallocate, then zeros written over it) when it is created,
// so the space its records need is reserved before any of them is acknowledged, and a
// record's fdatasync has no extent metadata to write (persist/internal/disk). A record is
//
//	crc32c (4) | length (4) | index (8) | batch (8) | data (length) | zero padding to 8
//
// all little-endian; the CRC covers everything after itself up to the end of data;
// batch is the index of the first record of the Append call that wrote it. An Append
// is one pwrite and one fdatasync; a batch never spans two segments.
//
// Opening checks every record. Reading stops at the first record that does not check
// out. If nothing valid follows it except records of the same batch, it is a torn tail
// (a write the crash interrupted, never acknowledged): it is zeroed with a warning. If
// a record of a later batch follows, the journal is corrupt: Open returns a
// *CorruptionError naming segment, offset and index, and writes nothing.

// As hashicorp/raft's LogStore: StoreLogs = Append (encoded raft.Log per record),
// GetLog = Get (ErrNotFound -> raft.ErrLogNotFound), FirstIndex/LastIndex as
// they are (0 when empty), DeleteRange(min, max) = TruncateFront(max) when min is the
// first index, else TruncateBack(min). After everything is deleted, Append may start
// at any index above the last one (a snapshot install).

// Entry is one record: its index and its bytes.
type Entry struct {
	Index uint64
	Data  []byte
}

// Options configure Open.
type Options struct {
	// SegmentSize is how much each segment preallocates (default 16 MiB). A batch that
	// does not fit in an empty segment gets a segment of its own size.
	SegmentSize int64
	Log         zerolog.Logger
}

// CorruptionError says where the journal is damaged.
type CorruptionError struct {
	Segment string // file path
	Offset  int64
	Index   uint64 // the index the damaged record should have had
	Reason  string
}

// Error says where the journal is damaged and that the start is refused.
func (e *CorruptionError) Error() string {
	return fmt.Sprintf("journal is corrupt: segment %s, offset %d, record %d: %s; valid records follow it, so this is not a torn write: refusing to start without touching anything (restore a backup or move the segment away)", e.Segment, e.Offset, e.Index, e.Reason)
}

// ErrNotFound is returned by Get for an index outside [FirstIndex, LastIndex].
var ErrNotFound = errors.New("journal: no record with that index")

const (
	recHeader          = 24
	defaultSegmentSize = 16 << 20
	segSuffix          = ".seg"
	firstFile          = "first"
)

type segment struct {
	base    uint64 // index of its first record (from the name)
	path    string
	f       *os.File
	offsets []int64 // offsets[i]: where record base+i starts
	end     int64   // end of the last record (where the next one goes)
	size    int64   // allocated size
}

func (s *segment) lastIndex() uint64 { return s.base + uint64(len(s.offsets)) - 1 }

// Journal is an append-only log of records with contiguous indexes. All methods are
// safe for concurrent use; appends and truncations are serialised, and Get runs
// alongside an Append's fsync.
type Journal struct {
	dir  string
	opts Options

	truncMu  sync.Mutex // one TruncateFront/TruncateBack at a time (taken before appendMu)
	appendMu sync.Mutex // one Append/Probe at a time; truncations take it to change segs
	markerMu sync.Mutex // one write of the marker file at a time
	mu       sync.RWMutex
	segs     []*segment
	first    uint64 // first live index (records below it in segs are dead)
	last     uint64 // last index written; first > last means empty
	// dirtyTo: a failed write may have left bytes in the active segment up to here.
	dirtyTo int64
	wbuf    []byte // Append's write buffer (under appendMu)
	closed  bool
	// fault, when set (tests only), fails every write and allocation as a full disk or
	// an I/O error would, before touching the file.
	fault func() error
}

func align8(n int64) int64 { return (n + 7) &^ 7 }

func segName(base uint64) string { return fmt.Sprintf("%020d%s", base, segSuffix) }

// Open opens (creating when needed) the journal in dir and checks every record.
// It allocates nothing: the first Append (or Probe) creates a segment, so opening on a
// full disk works.
func Open(dir string, opts Options) (*Journal, error) {
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = defaultSegmentSize
	}
	opts.SegmentSize = align8(opts.SegmentSize)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create journal dir: %w", err)
	}
	j := &Journal{dir: dir, opts: opts}
	if err := j.load(); err != nil {
		j.closeFiles()
		return nil, err
	}
	return j, nil
}

// FirstIndex is the index of the first record, 0 when the journal is empty.
func (j *Journal) FirstIndex() uint64 {
	j.mu.RLock()
	defer j.mu.RUnlock()
	if j.first > j.last {
		return 0
	}
	return j.first
}

// LastIndex is the index of the last record, 0 when the journal is empty.
func (j *Journal) LastIndex() uint64 {
	j.mu.RLock()
	defer j.mu.RUnlock()
	if j.first > j.last {
		return 0
	}
	return j.last
}

// segFor returns the segment holding index (caller holds mu).
func (j *Journal) segFor(index uint64) *segment {
	i := sort.Search(len(j.segs), func(i int) bool { return j.segs[i].base > index }) - 1
	if i < 0 {
		return nil
	}
	s := j.segs[i]
	if len(s.offsets) == 0 || index > s.lastIndex() {
		return nil
	}
	return s
}

// Get returns a copy of the record's data.
func (j *Journal) Get(index uint64) ([]byte, error) {
	j.mu.RLock()
	defer j.mu.RUnlock()
	if j.closed {
		return nil, errors.New("journal is closed")
	}
	if index < j.first || index > j.last {
		return nil, ErrNotFound
	}
	s := j.segFor(index)
	if s == nil {
		return nil, ErrNotFound
	}
	i := index - s.base
	off, end := s.offsets[i], s.end
	if int(i)+1 < len(s.offsets) {
		end = s.offsets[i+1]
	}
	buf := make([]byte, end-off)
	if _, err := s.f.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("read journal record %d: %w", index, err)
	}
	n, reason := checkRecord(buf, 0, index)
	if reason != "" {
		return nil, &CorruptionError{Segment: s.path, Offset: off, Index: index, Reason: reason}
	}
	return buf[recHeader : recHeader+n], nil
}

// Replay calls fn for every record with an index above after, in order. data is only
// valid during the call. fn must not call the journal's writing methods.
func (j *Journal) Replay(after uint64, fn func(index uint64, data []byte) error) error {
	j.mu.RLock()
	defer j.mu.RUnlock()
	if j.closed {
		return errors.New("journal is closed")
	}
	if after < j.first-1 {
		after = j.first - 1
	}
	var buf []byte
	for _, s := range j.segs {
		if len(s.offsets) == 0 || s.lastIndex() <= after || s.base > j.last {
			continue
		}
		first := 0
		if after >= s.base {
			first = int(after - s.base + 1)
		}
		var from, to int64 // buf holds the segment's bytes [from, to)
		for i := first; i < len(s.offsets) && s.base+uint64(i) <= j.last; i++ {
			idx, off, end := s.base+uint64(i), s.offsets[i], s.end
			if i+1 < len(s.offsets) {
				end = s.offsets[i+1]
			}
			if off < from || end > to || to == 0 {
				from, to = off, min(max(off+replayChunk, end), s.end)
				if int64(cap(buf)) < to-from {
					buf = make([]byte, max(to-from, replayChunk))
				}
				buf = buf[:to-from]
				if _, err := s.f.ReadAt(buf, from); err != nil {
					return fmt.Errorf("read journal segment %s: %w", s.path, err)
				}
			}
			n, reason := checkRecord(buf, off-from, idx)
			if reason != "" {
				return &CorruptionError{Segment: s.path, Offset: off, Index: idx, Reason: reason}
			}
			if err := fn(idx, buf[off-from+recHeader:off-from+recHeader+int64(n)]); err != nil {
				return err
			}
		}
	}
	return nil
}

// replayChunk is how many bytes of a segment Replay reads at a time (more for a bigger
// record): the first records reach fn after one small read, not after the whole
// segment, and the buffer is reused (docs/behaviour.md#recovery-at-memory-speed).
const replayChunk = 1 << 20

// Append writes the records (indexes contiguous, the first one LastIndex()+1, or any
// index when the journal is empty) with one write and one fdatasync, and returns once
// they are durable. On an error none of them counts as written: the journal stays as
// it was (and the bytes a failed write may have left are zeroed before the next one).
func (j *Journal) Append(entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	j.appendMu.Lock()
	defer j.appendMu.Unlock()
	j.mu.RLock()
	closed, first, last := j.closed, j.first, j.last
	j.mu.RUnlock()
	if closed {
		return errors.New("journal is closed")
	}
	empty := first > last
	start := entries[0].Index
	if start == 0 || (!empty && start != last+1) || (empty && start <= last) {
		return fmt.Errorf("journal append: record %d does not follow %d", start, last)
	}
	size := int64(0)
	for i, e := range entries {
		if e.Index != start+uint64(i) {
			return fmt.Errorf("journal append: indexes not contiguous at %d", e.Index)
		}
		size += align8(recHeader + int64(len(e.Data)))
	}
	if empty && start != last+1 {
		// A jump (raft after a snapshot install): the marker makes it survive a restart.
		if err := j.writeFirst(start); err != nil {
			return err
		}
	}
	seg := j.active()
	if seg == nil || start != seg.base+uint64(len(seg.offsets)) || seg.end+size > seg.size {
		var err error
		if seg, err = j.newSegment(start, size); err != nil {
			return err
		}
	}
	// One buffer for every Append (they are serialised): the write is synchronous.
	need := max(size, j.dirtyTo-seg.end)
	if int64(cap(j.wbuf)) < need || cap(j.wbuf) > 4<<20 && need < 1<<20 {
		j.wbuf = make([]byte, need)
	}
	clear(j.wbuf[:need]) // padding, and the zeros over a failed write's leftovers below
	buf := j.wbuf[:size]
	offsets := make([]int64, len(entries))
	p := int64(0)
	for i, e := range entries {
		offsets[i] = seg.end + p
		h := buf[p:]
		binary.LittleEndian.PutUint32(h[4:], uint32(len(e.Data)))
		binary.LittleEndian.PutUint64(h[8:], e.Index)
		binary.LittleEndian.PutUint64(h[16:], start)
		copy(h[recHeader:], e.Data)
		binary.LittleEndian.PutUint32(h, crc32.Checksum(h[4:recHeader+len(e.Data)], disk.CRCTable))
		p += align8(recHeader + int64(len(e.Data)))
	}
	if j.dirtyTo > seg.end+size {
		buf = buf[:j.dirtyTo-seg.end] // zeros over what a failed write may have left
	}
	if err := j.writeSync(seg.f, buf, seg.end); err != nil {
		j.dirtyTo = max(j.dirtyTo, seg.end+int64(len(buf)))
		return fmt.Errorf("journal write (%s): %w", seg.path, err)
	}
	j.dirtyTo = 0
	j.mu.Lock()
	seg.offsets = append(seg.offsets, offsets...)
	seg.end += size
	if empty {
		j.first = start
	}
	j.last = entries[len(entries)-1].Index
	j.mu.Unlock()
	return nil
}

func (j *Journal) writeSync(f *os.File, b []byte, off int64) error {
	if j.fault != nil {
		if err := j.fault(); err != nil {
			return err
		}
	}
	if _, err := f.WriteAt(b, off); err != nil {
		return err
	}
	return disk.Fdatasync(f)
}

func (j *Journal) active() *segment {
	if len(j.segs) == 0 {
		return nil
	}
	return j.segs[len(j.segs)-1]
}

// newSegment creates and preallocates a segment for records from base on, at least
// need bytes, and makes it the active one. An active segment without records is
// replaced.
func (j *Journal) newSegment(base uint64, need int64) (*segment, error) {
	size := max(j.opts.SegmentSize, align8(need))
	path := filepath.Join(j.dir, segName(base))
	if a := j.active(); a != nil && len(a.offsets) == 0 {
		if err := j.removeSegments(len(j.segs) - 1); err != nil {
			return nil, err
		}
	}
	if j.fault != nil {
		if err := j.fault(); err != nil {
			return nil, fmt.Errorf("allocate journal segment %s: %w", path, err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create journal segment: %w", err)
	}
	err = disk.Preallocate(f, size)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = disk.SyncDir(j.dir)
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("allocate journal segment %s (%d bytes): %w", path, size, err)
	}
	s := &segment{base: base, path: path, f: f, size: size}
	j.mu.Lock()
	j.segs = append(j.segs, s)
	j.mu.Unlock()
	j.dirtyTo = 0
	return s, nil
}

// removeSegments closes and deletes segs[from:] (caller holds appendMu, not mu).
func (j *Journal) removeSegments(from int) error {
	j.mu.Lock()
	gone := append([]*segment(nil), j.segs[from:]...)
	j.segs = j.segs[:from]
	j.mu.Unlock()
	for i := len(gone) - 1; i >= 0; i-- {
		gone[i].f.Close()
		if err := os.Remove(gone[i].path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove journal segment: %w", err)
		}
	}
	return disk.SyncDir(j.dir)
}

// Probe checks that the journal can be written again after a failure: it makes sure a
// segment with room is allocated and writes and fdatasyncs zeros at the tail (over
// anything a failed write left). Nothing changes logically.
func (j *Journal) Probe() error {
	j.appendMu.Lock()
	defer j.appendMu.Unlock()
	j.mu.RLock()
	closed, next := j.closed, j.last+1
	j.mu.RUnlock()
	if closed {
		return errors.New("journal is closed")
	}
	seg := j.active()
	if seg == nil || seg.end+64<<10 > seg.size || next != seg.base+uint64(len(seg.offsets)) {
		var err error
		if seg, err = j.newSegment(next, 0); err != nil {
			return err
		}
	}
	n := max(int64(recHeader), j.dirtyTo-seg.end)
	n = min(n, seg.size-seg.end)
	if err := j.writeSync(seg.f, make([]byte, n), seg.end); err != nil {
		return fmt.Errorf("journal probe write (%s): %w", seg.path, err)
	}
	j.dirtyTo = 0
	return nil
}

// SetFault makes every later write and segment allocation fail with the error fn
// returns before touching the disk (nil fn removes it). For fault-injection tests.
func (j *Journal) SetFault(fn func() error) {
	j.appendMu.Lock()
	j.fault = fn
	j.appendMu.Unlock()
}

// Close closes the segment files.
func (j *Journal) Close() error {
	j.appendMu.Lock()
	defer j.appendMu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	return j.closeFiles()
}

func (j *Journal) closeFiles() error {
	var err error
	for _, s := range j.segs {
		if s.f != nil {
			if e := s.f.Close(); e != nil && err == nil {
				err = e
			}
		}
	}
	return err
}
