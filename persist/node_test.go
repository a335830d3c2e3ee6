package persist

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist/journal"
	"podium/persist/store"
)

func openNode(t *testing.T, dir string, opts Options) *Node {
	t.Helper()
	opts.Log = zerolog.Nop()
	n, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return n
}

// crash stops the node the way SIGKILL would leave the disk: no final snapshot. (The
// real SIGKILL test of the binary is in cmd/podium.)
func crash(n *Node) {
	n.closing.Store(true)
	close(n.quit)
	<-n.loopDone
	<-n.gcDone
	<-n.probeDone
	n.waitSnapshot()
	n.st.Close()
	n.j.Close()
}

func stateHash(t *testing.T, n *Node) string {
	t.Helper()
	b, _, err := n.eng.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func mustSubmit(t *testing.T, n *Node, cmd engine.Command) any {
	t.Helper()
	res, err := n.Submit(context.Background(), engine.Admin, cmd)
	if err != nil {
		t.Fatalf("submit %s: %v", cmd.Kind(), err)
	}
	return res
}

func addJudge(t *testing.T, n *Node, i int) engine.ID {
	t.Helper()
	res := mustSubmit(t, n, &engine.CreateJudges{
		Judges: []engine.NewJudge{{Name: fmt.Sprintf("Judge %d", i), Email: fmt.Sprintf("j%d@example.com", i)}},
		Codes:  []string{fmt.Sprintf("%08d", 10000000+i)},
	})
	return res.([]engine.CreatedJudge)[0].ID
}

func addProject(t *testing.T, n *Node, i int) engine.ID {
	t.Helper()
	res := mustSubmit(t, n, &engine.CreateProjects{Projects: []engine.NewProject{{Name: fmt.Sprintf("Project %d", i), ChallengeList: []string{"AI"}}}})
	return res.(engine.CreatedProjects).IDs[0]
}

func TestRecoveryFromJournalOnly(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{})
	for i := 0; i < 30; i++ {
		addJudge(t, n, i)
		addProject(t, n, i)
	}
	mustSubmit(t, n, &engine.ClockUnpause{})
	want := stateHash(t, n)
	crash(n)

	n2 := openNode(t, dir, Options{})
	defer n2.Close()
	if got := stateHash(t, n2); got != want {
		t.Fatalf("state after crash differs: %s vs %s", got, want)
	}
	if a := n2.eng.Applied(); a != 61 {
		t.Fatalf("applied = %d, want 61", a)
	}
	// The next command continues the sequence.
	addJudge(t, n2, 100)
	if a := n2.eng.Applied(); a != 62 {
		t.Fatalf("applied after one more = %d, want 62", a)
	}
}

func TestRecoveryFromSnapshotAndJournal(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{SnapshotEvery: 7})
	for i := 0; i < 40; i++ {
		addProject(t, n, i)
	}
	n.waitSnapshot()
	want := stateHash(t, n)
	crash(n)

	// A snapshot exists and the journal before it is gone.
	st, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ptr, found, err := storePointer(st)
	if err != nil || !found || ptr.Seq == 0 {
		t.Fatalf("no snapshot pointer: %+v %v %v", ptr, found, err)
	}
	first := uint64(0)
	_ = st.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixJournal})
		defer it.Close()
		it.Rewind()
		if it.Valid() {
			first = decodeSeq(it.Item().Key())
		}
		return nil
	})
	if first != 0 && first <= ptr.Seq {
		t.Fatalf("journal record %d at or below snapshot %d was kept", first, ptr.Seq)
	}
	st.Close()

	n2 := openNode(t, dir, Options{SnapshotEvery: 7})
	defer n2.Close()
	if got := stateHash(t, n2); got != want {
		t.Fatal("state after snapshot+journal recovery differs")
	}
}

func decodeSeq(k []byte) uint64 {
	var s uint64
	for _, b := range k[len(prefixJournal):] {
		s = s<<8 | uint64(b)
	}
	return s
}

func TestCleanShutdownWritesSnapshot(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{})
	for i := 0; i < 5; i++ {
		addJudge(t, n, i)
	}
	want := stateHash(t, n)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ptr, found, _ := storePointer(st)
	st.Close()
	if !found || ptr.Seq != 5 {
		t.Fatalf("snapshot pointer after clean shutdown = %+v (found %v), want seq 5", ptr, found)
	}
	n2 := openNode(t, dir, Options{})
	defer n2.Close()
	if stateHash(t, n2) != want {
		t.Fatal("state differs after clean restart")
	}
}

// lastSegment returns the path of the newest journal segment of a data directory.
func lastSegment(t *testing.T, dir string) string {
	t.Helper()
	segs := segFiles(t, journalDir(dir))
	if len(segs) == 0 {
		t.Fatal("no journal segment")
	}
	return segs[len(segs)-1]
}

// segmentEnd is where the next record of a segment goes: after its last record (JSON,
// so it ends in a non-zero byte) and the zeros that pad it to 8 bytes.
func segmentEnd(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := len(b) - 1
	for i >= 0 && b[i] == 0 {
		i--
	}
	return (int64(i+1) + 7) &^ 7
}

func TestTornFinalRecordIsDiscarded(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{})
	for i := 0; i < 10; i++ {
		addProject(t, n, i)
	}
	want := stateHash(t, n)
	crash(n)

	// Half of a record after the last good one, as a crash during its write leaves it.
	seg := lastSegment(t, dir)
	end := segmentEnd(t, seg)
	f, err := os.OpenFile(seg, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{0x12, 0x34, 0x56, 0x78, 0x40, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0, '{', '"'}, end)
	f.Close()

	n2 := openNode(t, dir, Options{})
	if got := stateHash(t, n2); got != want {
		t.Fatal("state differs after discarding torn record")
	}
	addProject(t, n2, 99) // takes sequence 11 cleanly
	want2 := stateHash(t, n2)
	crash(n2)
	n3 := openNode(t, dir, Options{})
	defer n3.Close()
	if stateHash(t, n3) != want2 {
		t.Fatal("state differs after writing over the torn record's sequence")
	}
}

// recordOffset is the offset of the k-th record (from 0) of a segment: each record is
// a 24-byte header whose bytes 4..8 hold the data's length, the data, and zeros to 8.
func recordOffset(t *testing.T, path string, k int) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var off int64
	for ; k > 0; k-- {
		off = (off + 24 + int64(binary.LittleEndian.Uint32(b[off+4:])) + 7) &^ 7
	}
	return off
}

// TestCorruptMiddleRecordStopsStartup: eight bytes flipped in record 4 of 10 stop the
// start with an error naming segment, offset and record, and leave every file of the
// data directory as it was.
func TestCorruptMiddleRecordStopsStartup(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{})
	for i := 0; i < 10; i++ {
		addProject(t, n, i)
	}
	crash(n)
	seg := lastSegment(t, dir)
	off := recordOffset(t, seg, 3)
	f, _ := os.OpenFile(seg, os.O_RDWR, 0)
	b := make([]byte, 8)
	f.ReadAt(b, off+40)
	for i := range b {
		b[i] ^= 0xff
	}
	f.WriteAt(b, off+40)
	f.Close()
	before := treeDigest(t, dir)
	_, err := Open(dir, Options{Log: zerolog.Nop()})
	if err == nil || !strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), seg) ||
		!strings.Contains(err.Error(), fmt.Sprintf("offset %d", off)) || !strings.Contains(err.Error(), "record 4") {
		t.Fatalf("open with a corrupt middle record: err = %v, want a corruption error naming %s, offset %d, record 4", err, seg, off)
	}
	if treeDigest(t, dir) != before {
		t.Fatal("the refused start changed files in the data directory")
	}
}

func TestJournalWriteFailureMakesReadOnly(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{})
	defer n.Close()
	addProject(t, n, 1)
	n.j.SetFault(func() error { return errors.New("no space left on device") })
	_, err := n.Submit(context.Background(), engine.Admin, &engine.ClockUnpause{})
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("submit during failure: %v, want ErrReadOnly", err)
	}
	if n.Ready() {
		t.Fatal("node still ready after a journal failure")
	}
	if _, err := n.Submit(context.Background(), engine.Admin, &engine.ClockPause{}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("later submit: %v, want ErrReadOnly", err)
	}
	// Reads keep working.
	count := 0
	n.Read(func(s *engine.State) { count = len(s.Projects) })
	if count != 1 {
		t.Fatalf("projects visible = %d", count)
	}
}

// TestGroupCommit queues many commands while the writer is held, then checks they are
// journaled in one transaction and all acknowledged.
func TestGroupCommit(t *testing.T) {
	dir := t.TempDir()
	obs := &countingObserver{}
	n := openNode(t, dir, Options{Observer: obs})
	defer n.Close()
	release := make(chan struct{})
	held := make(chan struct{})
	go n.do(func() { close(held); <-release })
	<-held
	const writers = 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := n.Submit(context.Background(), engine.Admin, &engine.CreateProjects{Projects: []engine.NewProject{{Name: fmt.Sprint("p", i)}}})
			errs <- err
		}(i)
	}
	for len(n.in) < writers {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.commits != 1 || obs.records != writers {
		t.Fatalf("commits = %d records = %d, want 1 commit of %d records", obs.commits, obs.records, writers)
	}
}

type countingObserver struct {
	nopObserver
	mu               sync.Mutex
	commits, records int
}

func (o *countingObserver) JournalCommitted(records int, d time.Duration) {
	o.mu.Lock()
	o.commits++
	o.records += records
	o.mu.Unlock()
}

func TestRefusedCommandIsNotJournaled(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{})
	_, err := n.Submit(context.Background(), engine.Admin, &engine.CreateProjects{Projects: []engine.NewProject{{Name: ""}}})
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Kind != engine.KindInvalid {
		t.Fatalf("err = %v, want invalid", err)
	}
	if n.eng.Applied() != 0 {
		t.Fatal("refused command advanced the sequence")
	}
	addProject(t, n, 1)
	want := stateHash(t, n)
	crash(n)
	n2 := openNode(t, dir, Options{})
	defer n2.Close()
	if stateHash(t, n2) != want || n2.eng.Applied() != 1 {
		t.Fatal("replay differs")
	}
}

// TestLargeRecordSurvives journals a command bigger than a journal segment and
// recovers it.
func TestLargeRecordSurvives(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{SegmentSize: 1 << 20})
	ps := make([]engine.NewProject, 300)
	for i := range ps {
		ps[i] = engine.NewProject{Name: fmt.Sprint("big ", i), Description: strings.Repeat("x", 19000)}
	}
	mustSubmit(t, n, &engine.CreateProjects{Projects: ps})
	want := stateHash(t, n)
	crash(n)
	n2 := openNode(t, dir, Options{SegmentSize: 1 << 20})
	defer n2.Close()
	if stateHash(t, n2) != want {
		t.Fatal("large record did not survive")
	}
}

func TestBackupAndRestore(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{})
	for i := 0; i < 12; i++ {
		addJudge(t, n, i)
	}
	name, err := n.Backup()
	if err != nil {
		t.Fatal(err)
	}
	want := stateHash(t, n)
	addJudge(t, n, 50) // after the backup: must not be in it
	p, err := n.BackupPath(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.BackupPath("../../etc/passwd"); err == nil {
		t.Fatal("BackupPath accepted a path")
	}
	n.Close()

	into := filepath.Join(t.TempDir(), "restored")
	if err := Restore(p, into, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	if err := Restore(p, into, zerolog.Nop()); err == nil {
		t.Fatal("restore into a non-empty directory succeeded")
	}
	n2 := openNode(t, into, Options{})
	defer n2.Close()
	if got := stateHash(t, n2); got != want {
		t.Fatal("restored state differs from the backed-up state")
	}
	addJudge(t, n2, 51)
	if n2.eng.Applied() != 13 {
		t.Fatalf("sequence after restore = %d", n2.eng.Applied())
	}
	// A file that is not a backup is refused with a clear error.
	junk := filepath.Join(t.TempDir(), "junk")
	os.WriteFile(junk, []byte("hello"), 0o600)
	if err := Restore(junk, filepath.Join(t.TempDir(), "x"), zerolog.Nop()); err == nil {
		t.Fatal("restored junk")
	}
}

func TestSubmitWithBackupWritesBackupFirst(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{})
	defer n.Close()
	addProject(t, n, 1)
	before := stateHash(t, n)
	_, name, err := n.SubmitWithBackup(context.Background(), engine.Admin, &engine.ClockUnpause{})
	if err != nil || name == "" {
		t.Fatalf("SubmitWithBackup: %q %v", name, err)
	}
	p, _ := n.BackupPath(name)
	f, _ := os.Open(p)
	defer f.Close()
	h, data, err := ReadBackup(f)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%x", sha256.Sum256(data)) != before || h.Seq != 1 {
		t.Fatal("pre-command backup is not the state before the command")
	}
}

// TestJournalReplayIsDeterministic replays the raw journal records into a fresh engine
// and compares the snapshot hash with the live one.
func TestJournalReplayIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				addJudge(t, n, w*100+i)
				addProject(t, n, w*100+i)
			}
		}(w)
	}
	wg.Wait()
	mustSubmit(t, n, &engine.ClockUnpause{})
	mustSubmit(t, n, &engine.ClockPause{})
	want := stateHash(t, n)
	crash(n)

	j, err := journal.Open(journalDir(dir), journal.Options{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	fresh := engine.New()
	if err := j.Replay(0, func(seq uint64, payload []byte) error {
		var env engine.Envelope
		if err := json.Unmarshal(payload, &env); err != nil {
			return err
		}
		_, _, err := fresh.Apply(&env)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b, _, _ := fresh.Snapshot()
	if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != want {
		t.Fatal("replaying the journal into a fresh engine gave a different state")
	}
}

// replayJournal, which decodes batches ahead of the applying, leaves the state the
// node had over more records than a batch, and stops at a record that does not apply
// (the decoder then stops too).
func TestReplayJournalInBatches(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, Options{SnapshotEvery: 1 << 30})
	for i := 0; i < 2*replayBatch+10; i++ {
		addProject(t, n, i)
	}
	want := stateHash(t, n)
	crash(n)
	j, err := journal.Open(journalDir(dir), journal.Options{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	fresh := engine.New()
	r, err := replayJournal(fresh, j, 0)
	if err != nil || r.records != 2*replayBatch+10 {
		t.Fatalf("replayed %d records: %v", r.records, err)
	}
	b, _, _ := fresh.Snapshot()
	if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != want {
		t.Fatal("replaying in batches gave a different state")
	}
	// On an engine that already holds the records, the first one lands on the wrong
	// sequence number: the replay stops there.
	if r, err := replayJournal(fresh, j, 0); err == nil || r.records != 0 {
		t.Fatalf("replay onto a state that has the records: %d records, %v", r.records, err)
	}
	// A gap in the sequence numbers: the records before it apply, the rest do not.
	recs, err := decodeJournal(j, 0)
	if err != nil {
		t.Fatal(err)
	}
	gapped := append(append([]journalRecord{}, recs[:4]...), recs[5:9]...)
	other := engine.New()
	r, err = applyJournal(other, gapped)
	if err == nil || !strings.Contains(err.Error(), "journal record 6 follows sequence 4") || r.records != 4 || other.Applied() != 4 {
		t.Fatalf("replay over a gap: %d records, engine at %d, %v", r.records, other.Applied(), err)
	}
}
