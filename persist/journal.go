package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/rs/zerolog"
)

// The journal is a sequence of records with contiguous indexes, kept in segment files
// that Podium writes itself (no memory maps, so a full disk is an error, never SIGBUS):
//
//	<dir>/<first index:020d>.seg   records, each 8-byte aligned, then zeros
//	<dir>/first                    the first live index after TruncateFront (optional)
//
// A segment is preallocated (fallocate) when it is created, so the space its records
// need is reserved before any of them is acknowledged. A record is
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
// GetLog = Get (ErrJournalNotFound -> raft.ErrLogNotFound), FirstIndex/LastIndex as
// they are (0 when empty), DeleteRange(min, max) = TruncateFront(max) when min is the
// first index, else TruncateBack(min). After everything is deleted, Append may start
// at any index above the last one (a snapshot install).

// JournalEntry is one record: its index and its bytes.
type JournalEntry struct {
	Index uint64
	Data  []byte
}

// JournalOptions configure OpenJournal.
type JournalOptions struct {
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

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("journal is corrupt: segment %s, offset %d, record %d: %s; valid records follow it, so this is not a torn write: refusing to start without touching anything (restore a backup or move the segment away)", e.Segment, e.Offset, e.Index, e.Reason)
}

// ErrJournalNotFound is returned by Get for an index outside [FirstIndex, LastIndex].
var ErrJournalNotFound = errors.New("journal: no record with that index")

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
	opts JournalOptions

	truncMu  sync.Mutex // one TruncateFront/TruncateBack at a time (taken before appendMu)
	appendMu sync.Mutex // one Append/Probe at a time; truncations take it to change segs
	markerMu sync.Mutex // one write of the marker file at a time
	mu       sync.RWMutex
	segs     []*segment
	first    uint64 // first live index (records below it in segs are dead)
	last     uint64 // last index written; first > last means empty
	// dirtyTo: a failed write may have left bytes in the active segment up to here.
	dirtyTo int64
	closed  bool
	// fault, when set (tests only), fails every write and allocation as a full disk or
	// an I/O error would, before touching the file.
	fault func() error
}

func align8(n int64) int64 { return (n + 7) &^ 7 }

func segName(base uint64) string { return fmt.Sprintf("%020d%s", base, segSuffix) }

// OpenJournal opens (creating when needed) the journal in dir and checks every record.
// It allocates nothing: the first Append (or Probe) creates a segment, so opening on a
// full disk works.
func OpenJournal(dir string, opts JournalOptions) (*Journal, error) {
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

type tornTail struct {
	seg   *segment
	from  int64
	to    int64 // last non-zero byte + 1
	index uint64
	batch int // valid records of the torn batch found after the bad one
}

func (j *Journal) load() error {
	entries, err := os.ReadDir(j.dir)
	if err != nil {
		return fmt.Errorf("read journal dir: %w", err)
	}
	var bases []uint64
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, segSuffix) {
			continue
		}
		b, err := strconv.ParseUint(strings.TrimSuffix(name, segSuffix), 10, 64)
		if err != nil || b == 0 {
			return fmt.Errorf("journal: unexpected file %s", filepath.Join(j.dir, name))
		}
		bases = append(bases, b)
	}
	sort.Slice(bases, func(a, b int) bool { return bases[a] < bases[b] })
	markFirst, err := j.readFirst()
	if err != nil {
		return err
	}
	var torn *tornTail
	var unused []string // segments without records: deleted once all checks pass
	var prevLast uint64
	for _, base := range bases {
		path := filepath.Join(j.dir, segName(base))
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read journal segment: %w", err)
		}
		if torn != nil {
			// Anything valid in a segment after a bad record means corruption.
			if off, idx, ok := scanValid(data, 0); ok {
				return &CorruptionError{Segment: torn.seg.path, Offset: torn.from, Index: torn.index,
					Reason: fmt.Sprintf("bad record, and a later segment %s holds record %d at offset %d", path, idx, off)}
			}
			unused = append(unused, path)
			continue
		}
		seg := &segment{base: base, path: path, size: int64(len(data))}
		off, expected := int64(0), base
		for {
			n, reason := checkRecord(data, off, expected)
			if reason == "" {
				seg.offsets = append(seg.offsets, off)
				off = align8(off + recHeader + int64(n))
				expected++
				continue
			}
			nz := lastNonZero(data)
			if nz <= off {
				break // clean end: zeros up to the end of the segment
			}
			// Something non-zero that is not the next record: torn or corrupt.
			t := &tornTail{seg: seg, from: off, to: nz, index: expected}
			for p := off + 8; ; p += 8 {
				q, idx, ok := scanValid(data, p)
				if !ok {
					break
				}
				if batch := binary.LittleEndian.Uint64(data[q+16:]); batch > expected {
					return &CorruptionError{Segment: path, Offset: off, Index: expected,
						Reason: fmt.Sprintf("%s; record %d of a later write follows at offset %d", reason, idx, q)}
				}
				t.batch++
				p = q
			}
			torn = t
			break
		}
		seg.end = off
		if len(seg.offsets) == 0 {
			unused = append(unused, path)
			continue
		}
		if prevLast != 0 && base != prevLast+1 && (base <= prevLast || base > markFirst) {
			return &CorruptionError{Segment: path, Offset: 0, Index: prevLast + 1,
				Reason: fmt.Sprintf("the segment starts at record %d but the one before ends at %d", base, prevLast)}
		}
		prevLast = seg.lastIndex()
		j.segs = append(j.segs, seg)
	}
	j.first, j.last = 0, 0
	if len(j.segs) > 0 {
		j.first, j.last = j.segs[0].base, prevLast
	}
	if markFirst > j.first {
		j.first = markFirst
		j.last = max(j.last, markFirst-1)
	}
	if j.first == 0 {
		j.first = 1
	}
	// Everything checked out: now open the files, and repair a torn tail.
	for _, s := range j.segs {
		f, err := os.OpenFile(s.path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("open journal segment: %w", err)
		}
		s.f = f
	}
	if torn != nil {
		if torn.seg.f != nil {
			if err := zeroRange(torn.seg.f, torn.from, torn.to); err != nil {
				return fmt.Errorf("drop torn journal tail in %s: %w", torn.seg.path, err)
			}
		}
		j.opts.Log.Warn().Str("segment", torn.seg.path).Int64("offset", torn.from).Uint64("record", torn.index).
			Int("records_dropped", torn.batch+1).
			Msg("journal: discarded a torn final write (it was never acknowledged)")
	}
	for _, p := range unused {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("remove unused journal segment: %w", err)
		}
	}
	if len(unused) > 0 {
		if err := syncDir(j.dir); err != nil {
			return err
		}
	}
	return nil
}

// checkRecord validates the record at off; it returns its data length, or why not.
func checkRecord(data []byte, off int64, want uint64) (int, string) {
	if off+recHeader > int64(len(data)) {
		return 0, "record header past the end of the segment"
	}
	h := data[off:]
	n := int64(binary.LittleEndian.Uint32(h[4:]))
	idx := binary.LittleEndian.Uint64(h[8:])
	if idx != want {
		return 0, fmt.Sprintf("record has index %d", idx)
	}
	if off+recHeader+n > int64(len(data)) {
		return 0, "record length past the end of the segment"
	}
	if crc32.Checksum(h[4:recHeader+n], crcTable) != binary.LittleEndian.Uint32(h) {
		return 0, "checksum mismatch"
	}
	return int(n), ""
}

// scanValid finds the first well-formed record (any index, checksum correct) at an
// 8-byte aligned offset from 'from' on.
func scanValid(data []byte, from int64) (int64, uint64, bool) {
	for p := align8(from); p+recHeader <= int64(len(data)); p += 8 {
		idx := binary.LittleEndian.Uint64(data[p+8:])
		if idx == 0 {
			continue
		}
		n := int64(binary.LittleEndian.Uint32(data[p+4:]))
		if p+recHeader+n > int64(len(data)) {
			continue
		}
		if crc32.Checksum(data[p+4:p+recHeader+n], crcTable) == binary.LittleEndian.Uint32(data[p:]) {
			return p, idx, true
		}
	}
	return 0, 0, false
}

func lastNonZero(data []byte) int64 {
	i := len(data)
	for i >= 8 && binary.LittleEndian.Uint64(data[i-8:]) == 0 {
		i -= 8
	}
	for i > 0 && data[i-1] == 0 {
		i--
	}
	return int64(i)
}

func (j *Journal) readFirst() (uint64, error) {
	b, err := os.ReadFile(filepath.Join(j.dir, firstFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read journal marker: %w", err)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("journal marker %s is damaged: %q", filepath.Join(j.dir, firstFile), b)
	}
	return v, nil
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
		return nil, ErrJournalNotFound
	}
	s := j.segFor(index)
	if s == nil {
		return nil, ErrJournalNotFound
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
		if int64(cap(buf)) < s.end {
			buf = make([]byte, s.end)
		}
		buf = buf[:s.end]
		if _, err := s.f.ReadAt(buf, 0); err != nil {
			return fmt.Errorf("read journal segment %s: %w", s.path, err)
		}
		for i, off := range s.offsets {
			idx := s.base + uint64(i)
			if idx <= after || idx > j.last {
				continue
			}
			n, reason := checkRecord(buf, off, idx)
			if reason != "" {
				return &CorruptionError{Segment: s.path, Offset: off, Index: idx, Reason: reason}
			}
			if err := fn(idx, buf[off+recHeader:off+recHeader+int64(n)]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Append writes the records (indexes contiguous, the first one LastIndex()+1, or any
// index when the journal is empty) with one write and one fdatasync, and returns once
// they are durable. On an error none of them counts as written: the journal stays as
// it was (and the bytes a failed write may have left are zeroed before the next one).
func (j *Journal) Append(entries []JournalEntry) error {
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
	buf := make([]byte, size, max(size, j.dirtyTo-seg.end))
	offsets := make([]int64, len(entries))
	p := int64(0)
	for i, e := range entries {
		offsets[i] = seg.end + p
		h := buf[p:]
		binary.LittleEndian.PutUint32(h[4:], uint32(len(e.Data)))
		binary.LittleEndian.PutUint64(h[8:], e.Index)
		binary.LittleEndian.PutUint64(h[16:], start)
		copy(h[recHeader:], e.Data)
		binary.LittleEndian.PutUint32(h, crc32.Checksum(h[4:recHeader+len(e.Data)], crcTable))
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
	return fdatasync(f)
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
	err = preallocate(f, size)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = syncDir(j.dir)
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
	return syncDir(j.dir)
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
		return syncDir(j.dir)
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
		err = syncDir(j.dir)
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
		if err := zeroRange(s.f, off, max(s.end, j.dirtyTo)); err != nil {
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

func zeroRange(f *os.File, from, to int64) error {
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
	return fdatasync(f)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
