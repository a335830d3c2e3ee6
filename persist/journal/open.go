package journal

// Opening the journal: every segment is read and every record checked; a torn tail is
// repaired, anything else refuses the start (see journal.go).

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

	"podium/persist/internal/disk"
)

type tornTail struct {
	seg   *segment
	from  int64
	to    int64 // last non-zero byte + 1
	index uint64
	batch int // valid records of the torn batch found after the bad one
}

// load reads the journal's segments, checks every record, and then (only when nothing
// refuses the start) opens the segment files, repairs a torn tail and removes
// segments without records.
func (j *Journal) load() error {
	bases, err := j.listSegments()
	if err != nil {
		return err
	}
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
		if torn, err = verifySegment(seg, data); err != nil {
			return err
		}
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
	j.setBounds(prevLast, markFirst)
	return j.repair(torn, unused)
}

// listSegments returns the first indexes of the segment files, in order.
func (j *Journal) listSegments() ([]uint64, error) {
	entries, err := os.ReadDir(j.dir)
	if err != nil {
		return nil, fmt.Errorf("read journal dir: %w", err)
	}
	var bases []uint64
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, segSuffix) {
			continue
		}
		b, err := strconv.ParseUint(strings.TrimSuffix(name, segSuffix), 10, 64)
		if err != nil || b == 0 {
			return nil, fmt.Errorf("journal: unexpected file %s", filepath.Join(j.dir, name))
		}
		bases = append(bases, b)
	}
	sort.Slice(bases, func(a, b int) bool { return bases[a] < bases[b] })
	return bases, nil
}

// verifySegment checks the records of one segment (data is its content) and records
// their offsets and its end in seg. Something non-zero after the last valid record is
// a torn tail when only records of the same batch follow it, and corruption when a
// record of a later batch does.
func verifySegment(seg *segment, data []byte) (*tornTail, error) {
	var torn *tornTail
	off, expected := int64(0), seg.base
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
				return nil, &CorruptionError{Segment: seg.path, Offset: off, Index: expected,
					Reason: fmt.Sprintf("%s; record %d of a later write follows at offset %d", reason, idx, q)}
			}
			t.batch++
			p = q
		}
		torn = t
		break
	}
	seg.end = off
	return torn, nil
}

// setBounds sets the first and last index from the segments read (prevLast is the last
// record found) and the first index TruncateFront recorded (markFirst).
func (j *Journal) setBounds(prevLast, markFirst uint64) {
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
}

// repair runs once everything checked out: it opens the segment files, zeroes a torn
// tail and removes the segments without records.
func (j *Journal) repair(torn *tornTail, unused []string) error {
	for _, s := range j.segs {
		f, err := os.OpenFile(s.path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("open journal segment: %w", err)
		}
		s.f = f
	}
	if torn != nil {
		if torn.seg.f != nil {
			if err := disk.ZeroRange(torn.seg.f, torn.from, torn.to); err != nil {
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
		if err := disk.SyncDir(j.dir); err != nil {
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
	if crc32.Checksum(h[4:recHeader+n], disk.CRCTable) != binary.LittleEndian.Uint32(h) {
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
		if crc32.Checksum(data[p+4:p+recHeader+n], disk.CRCTable) == binary.LittleEndian.Uint32(data[p:]) {
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
