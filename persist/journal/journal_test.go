package journal

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/rs/zerolog"
)

func openJ(t *testing.T, dir string, seg int64) *Journal {
	t.Helper()
	j, err := Open(dir, Options{SegmentSize: seg, Log: zerolog.Nop()})
	if err != nil {
		t.Fatalf("open journal: %v", err)
	}
	return j
}

func payload(i uint64) []byte {
	return []byte(fmt.Sprintf("record %d %s", i, strings.Repeat("x", int(i%37))))
}

// appendRange appends records from..to, batch records per Append.
func appendRange(t *testing.T, j *Journal, from, to uint64, batch int) {
	t.Helper()
	for i := from; i <= to; {
		var es []Entry
		for k := 0; k < batch && i <= to; k++ {
			es = append(es, Entry{Index: i, Data: payload(i)})
			i++
		}
		if err := j.Append(es); err != nil {
			t.Fatalf("append %d..: %v", es[0].Index, err)
		}
	}
}

func checkRange(t *testing.T, j *Journal, first, last uint64) {
	t.Helper()
	if f, l := j.FirstIndex(), j.LastIndex(); f != first || l != last {
		t.Fatalf("first/last = %d/%d, want %d/%d", f, l, first, last)
	}
	for i := first; i <= last && last > 0; i++ {
		b, err := j.Get(i)
		if err != nil || !bytes.Equal(b, payload(i)) {
			t.Fatalf("get %d: %q, %v", i, b, err)
		}
	}
	if last > 0 {
		for _, i := range []uint64{first - 1, last + 1} {
			if _, err := j.Get(i); !errors.Is(err, ErrNotFound) {
				t.Fatalf("get %d outside the range: %v", i, err)
			}
		}
	}
	next := first
	if err := j.Replay(0, func(i uint64, b []byte) error {
		if i != next || !bytes.Equal(b, payload(i)) {
			return fmt.Errorf("replay gave %d %q, want %d", i, b, next)
		}
		next++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if last > 0 && next != last+1 {
		t.Fatalf("replay stopped at %d, want %d", next, last+1)
	}
}

func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	sort.Strings(m)
	return m
}

func dirDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d %x\n", e.Name(), len(b), sha256.Sum256(b))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// treeDigest hashes every file under dir (names, sizes, contents).
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %x\n", p, len(b), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestJournalAppendGetReplayAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	j := openJ(t, dir, 4096)
	checkRange(t, j, 0, 0)
	appendRange(t, j, 1, 500, 7)
	checkRange(t, j, 1, 500)
	if n := len(segFiles(t, dir)); n < 5 {
		t.Fatalf("%d segments, want several at 4 KiB each", n)
	}
	// Records not following the last one are refused.
	if err := j.Append([]Entry{{Index: 502, Data: []byte("x")}}); err == nil {
		t.Fatal("append with a gap accepted")
	}
	if err := j.Append([]Entry{{Index: 501}, {Index: 503}}); err == nil {
		t.Fatal("append with non-contiguous indexes accepted")
	}
	// A record bigger than a segment gets a segment of its own.
	big := bytes.Repeat([]byte("B"), 10000)
	if err := j.Append([]Entry{{Index: 501, Data: big}}); err != nil {
		t.Fatal(err)
	}
	if b, err := j.Get(501); err != nil || !bytes.Equal(b, big) {
		t.Fatalf("big record: %v", err)
	}
	if err := j.TruncateBack(501); err != nil {
		t.Fatal(err)
	}
	j.Close()
	j = openJ(t, dir, 4096)
	defer j.Close()
	checkRange(t, j, 1, 500)
	appendRange(t, j, 501, 600, 3)
	checkRange(t, j, 1, 600)
}

func TestJournalTruncateFrontIsExactAndDurable(t *testing.T) {
	dir := t.TempDir()
	j := openJ(t, dir, 4096)
	appendRange(t, j, 1, 300, 5)
	before := len(segFiles(t, dir))
	if err := j.TruncateFront(123); err != nil {
		t.Fatal(err)
	}
	checkRange(t, j, 124, 300)
	if after := len(segFiles(t, dir)); after >= before {
		t.Fatalf("segments %d -> %d: covered segments not deleted", before, after)
	}
	j.Close()
	j = openJ(t, dir, 4096)
	checkRange(t, j, 124, 300)
	// Everything: the journal is empty but continues at 301.
	if err := j.TruncateFront(300); err != nil {
		t.Fatal(err)
	}
	checkRange(t, j, 0, 0)
	if len(segFiles(t, dir)) != 1 {
		t.Fatalf("segments left: %v", segFiles(t, dir))
	}
	appendRange(t, j, 301, 310, 4)
	checkRange(t, j, 301, 310)
	j.Close()
	j = openJ(t, dir, 4096)
	defer j.Close()
	checkRange(t, j, 301, 310)
	// An empty journal may jump ahead (raft after a snapshot install).
	if err := j.TruncateFront(310); err != nil {
		t.Fatal(err)
	}
	appendRange(t, j, 1000, 1010, 4)
	checkRange(t, j, 1000, 1010)
	j.Close()
	j = openJ(t, dir, 4096)
	checkRange(t, j, 1000, 1010)
}

func TestJournalTruncateBackReplacesRecords(t *testing.T) {
	dir := t.TempDir()
	j := openJ(t, dir, 4096)
	appendRange(t, j, 1, 300, 9)
	if err := j.TruncateBack(150); err != nil {
		t.Fatal(err)
	}
	checkRange(t, j, 1, 149)
	// New, shorter records at the same indexes: nothing of the old ones comes back.
	if err := j.Append([]Entry{{Index: 150, Data: []byte("new")}}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	j = openJ(t, dir, 4096)
	defer j.Close()
	if j.LastIndex() != 150 {
		t.Fatalf("last after reopen = %d, want 150", j.LastIndex())
	}
	if b, _ := j.Get(150); string(b) != "new" {
		t.Fatalf("record 150 = %q", b)
	}
	if err := j.TruncateBack(1); err != nil {
		t.Fatal(err)
	}
	checkRange(t, j, 0, 0)
	appendRange(t, j, 1, 20, 3)
	checkRange(t, j, 1, 20)
}

// TestJournalTornTailIsDropped: the last write cut short (part of a batch on disk, or
// garbage) is dropped at open with a warning; everything before it is kept, and the
// index can be written again.
func TestJournalTornTailIsDropped(t *testing.T) {
	for _, mode := range []string{"cut", "garbage", "first-of-batch"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			j := openJ(t, dir, 1<<20)
			appendRange(t, j, 1, 40, 4)
			off38 := j.segs[0].offsets[37]
			j.Close()
			seg := segFiles(t, dir)[0]
			data, _ := os.ReadFile(seg)
			end := lastNonZero(data)
			f, _ := os.OpenFile(seg, os.O_RDWR, 0)
			switch mode {
			case "cut": // the last batch (records 37..40): 38's first bytes never reached the disk
				f.WriteAt(make([]byte, recHeader), off38)
			case "garbage":
				f.WriteAt([]byte("half a record"), align8(end))
			case "first-of-batch": // a page of the last batch never reached the disk
				j2 := openJ(t, t.TempDir(), 1<<20)
				appendRange(t, j2, 1, 36, 4)
				off := j2.active().end
				j2.Close()
				f.WriteAt(make([]byte, 16), off)
			}
			f.Close()
			var logBuf bytes.Buffer
			j, err := Open(dir, Options{Log: zerolog.New(&logBuf)})
			if err != nil {
				t.Fatalf("open with a torn tail: %v", err)
			}
			defer j.Close()
			if !strings.Contains(logBuf.String(), "torn") || !strings.Contains(logBuf.String(), seg) {
				t.Errorf("no warning naming the segment: %s", logBuf.String())
			}
			last := j.LastIndex()
			if want := map[string]uint64{"cut": 37, "garbage": 40, "first-of-batch": 36}[mode]; last != want {
				t.Fatalf("last = %d after dropping the torn tail", last)
			}
			checkRange(t, j, 1, last)
			appendRange(t, j, last+1, 50, 2)
			j.Close()
			j = openJ(t, dir, 1<<20)
			checkRange(t, j, 1, 50)
		})
	}
}

// TestJournalCorruptMiddleRefusesAndTouchesNothing: bytes flipped in a record that
// later writes follow stop Open with an error naming segment, offset and
// record, and every file stays byte for byte as it was.
func TestJournalCorruptMiddleRefusesAndTouchesNothing(t *testing.T) {
	for _, where := range []string{"data", "length", "index", "later-segment"} {
		t.Run(where, func(t *testing.T) {
			dir := t.TempDir()
			j := openJ(t, dir, 4096)
			appendRange(t, j, 1, 150, 1)
			segs := segFiles(t, dir)
			seg := segs[0]
			s0 := j.segs[0]
			rec := uint64(5)
			off := s0.offsets[rec-1]
			if where == "later-segment" { // the last record of a full segment
				rec = s0.lastIndex()
				off = s0.offsets[len(s0.offsets)-1]
			}
			j.Close()
			flip := map[string]int64{"data": off + recHeader + 4, "length": off + 5, "index": off + 9, "later-segment": off + recHeader}[where]
			f, _ := os.OpenFile(seg, os.O_RDWR, 0)
			b := make([]byte, 8)
			f.ReadAt(b, flip)
			for i := range b {
				b[i] ^= 0xa5
			}
			f.WriteAt(b, flip)
			f.Close()
			before := dirDigest(t, dir)
			_, err := Open(dir, Options{SegmentSize: 4096, Log: zerolog.Nop()})
			var ce *CorruptionError
			if !errors.As(err, &ce) {
				t.Fatalf("open: %v, want a CorruptionError", err)
			}
			if ce.Segment != seg || ce.Offset != off || ce.Index != rec {
				t.Errorf("error names %s@%d record %d, want %s@%d record %d", ce.Segment, ce.Offset, ce.Index, seg, off, rec)
			}
			for _, want := range []string{seg, fmt.Sprint(off), fmt.Sprintf("record %d", rec)} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q lacks %q", err, want)
				}
			}
			if after := dirDigest(t, dir); after != before {
				t.Fatal("the refused open changed files on disk")
			}
		})
	}
}

// TestJournalFullDiskOnTmpfs: on a small tmpfs the journal fails at segment allocation
// (an error, no SIGBUS), stays consistent and readable, and works again once space is
// freed (Probe, then Append). Without permission to mount, the same run uses an
// injected write error.
func TestJournalFullDiskOnTmpfs(t *testing.T) {
	dir := t.TempDir()
	mounted := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir).Run() == nil
	if mounted {
		defer exec.Command("umount", dir).Run()
	} else {
		t.Log("cannot mount a tmpfs here: using an injected write error instead")
	}
	j := openJ(t, dir, 256<<10)
	defer j.Close()
	var fill *os.File
	if mounted {
		// Fill the disk except for the first segment.
		appendRange(t, j, 1, 1, 1)
		fill, _ = os.Create(filepath.Join(dir, "filler"))
		buf := make([]byte, 64<<10)
		for {
			if _, err := fill.Write(buf); err != nil {
				break
			}
		}
	} else {
		appendRange(t, j, 1, 1, 1)
		j.SetFault(func() error { return syscall.ENOSPC })
	}
	var err error
	i := uint64(2)
	for ; i < 100000; i++ {
		if err = j.Append([]Entry{{Index: i, Data: payload(i)}}); err != nil {
			break
		}
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v, want ENOSPC", err)
	}
	checkRange(t, j, 1, i-1)
	if err := j.Probe(); err == nil {
		t.Fatal("probe succeeded on a full disk")
	}
	if mounted {
		fill.Close()
		os.Remove(fill.Name())
	} else {
		j.SetFault(nil)
	}
	if err := j.Probe(); err != nil {
		t.Fatalf("probe after freeing space: %v", err)
	}
	appendRange(t, j, i, i+10, 3)
	checkRange(t, j, 1, i+10)
}

// TestJournalConcurrentReadsDuringAppends: Get and FirstIndex/LastIndex run while
// another goroutine appends and truncates (raft reads its log while storing to it).
func TestJournalConcurrentReadsDuringAppends(t *testing.T) {
	j := openJ(t, t.TempDir(), 8192)
	defer j.Close()
	appendRange(t, j, 1, 10, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		appendRange(t, j, 11, 400, 3)
		if err := j.TruncateFront(200); err != nil {
			t.Error(err)
		}
	}()
	for {
		select {
		case <-done:
			checkRange(t, j, 201, 400)
			return
		default:
		}
		f, l := j.FirstIndex(), j.LastIndex()
		for i := l; i >= f && i > l-5; i-- {
			if b, err := j.Get(i); err == nil && !bytes.Equal(b, payload(i)) {
				t.Fatalf("get %d = %q", i, b)
			} else if err != nil && !errors.Is(err, ErrNotFound) {
				t.Fatal(err)
			}
		}
	}
}

// TestJournalAppendZeroesOverFailedWrite: after a failed write, the next Append writes
// zeros over everything the failed one may have left (up to where it reached), even
// when its own records are fewer and the write buffer last held other records; a
// reopen then finds a clean end after the last record.
func TestJournalAppendZeroesOverFailedWrite(t *testing.T) {
	dir := t.TempDir()
	j := openJ(t, dir, 1<<20)
	appendRange(t, j, 1, 40, 40) // fills the write buffer with records
	// The failed write "reached" as far as 40 more records would.
	j.SetFault(func() error { return syscall.EIO })
	var big []Entry
	for i := uint64(41); i <= 80; i++ {
		big = append(big, Entry{Index: i, Data: payload(i)})
	}
	if err := j.Append(big); err == nil {
		t.Fatal("append with a fault succeeded")
	}
	seg := j.active()
	end, dirty := seg.end, j.dirtyTo
	if dirty <= end {
		t.Fatalf("dirtyTo %d not past the end %d", dirty, end)
	}
	// Leftovers of the failed write on disk: non-zero bytes up to dirtyTo.
	if _, err := seg.f.WriteAt(bytes.Repeat([]byte{0xAB}, int(dirty-end)), end); err != nil {
		t.Fatal(err)
	}
	j.SetFault(nil)
	appendRange(t, j, 41, 41, 1)
	data, err := os.ReadFile(seg.path)
	if err != nil {
		t.Fatal(err)
	}
	if nz := lastNonZero(data); nz > seg.end {
		t.Fatalf("non-zero bytes up to %d after the last record's end %d", nz, seg.end)
	}
	j.Close()
	j = openJ(t, dir, 1<<20)
	defer j.Close()
	checkRange(t, j, 1, 41)
}

// Replay reads a segment a chunk at a time: records on both sides of a chunk's end,
// records bigger than a chunk, and replays from any point give every record whole.
func TestJournalReplayAcrossChunks(t *testing.T) {
	dir := t.TempDir()
	j := openJ(t, dir, 64<<20)
	defer j.Close()
	want := map[uint64][]byte{}
	var es []Entry
	for i := uint64(1); i <= 300; i++ {
		size := 1000 + int(i*7919%30000)
		if i%97 == 0 {
			size = replayChunk + int(i) // bigger than a chunk
		}
		b := bytes.Repeat([]byte{byte(i)}, size)
		want[i], es = b, append(es, Entry{Index: i, Data: b})
	}
	if err := j.Append(es); err != nil {
		t.Fatal(err)
	}
	for _, after := range []uint64{0, 1, 96, 97, 150, 299, 300} {
		next := after + 1
		err := j.Replay(after, func(idx uint64, data []byte) error {
			if idx != next || !bytes.Equal(data, want[idx]) {
				return fmt.Errorf("record %d (want %d): %d bytes", idx, next, len(data))
			}
			next++
			return nil
		})
		if err != nil || next != 301 {
			t.Fatalf("replay after %d: %v, ended at %d", after, err, next)
		}
	}
}
