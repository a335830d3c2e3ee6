package persist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist/journal"
	"podium/persist/store"
)

// The recovery benchmarks' data directory (docs/performance.md): 10,000 projects, 5,000
// judges who finished 20 projects each, a snapshot of that, then tailRecords journal
// records of the realistic mix after it (replayMix).
const tailRecords = 40000

var (
	recoveryDirOnce sync.Once
	recoveryDir     string
	recoveryDirErr  error
)

// TestMain removes the recovery benchmarks' data directory after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if recoveryDir != "" {
		os.RemoveAll(recoveryDir)
	}
	os.Exit(code)
}

// recoveryFixture builds the data directory once per test binary, in the system temp
// dir (TestMain removes it), or returns $PODIUM_REPLAY_FIXTURE, a fixture written
// before by TestWriteRecoveryFixture (the benchmarks only read it: BenchmarkRecover
// opens a copy), to profile replay without building the fixture each time.
func recoveryFixture(tb testing.TB) string {
	tb.Helper()
	if dir := os.Getenv("PODIUM_REPLAY_FIXTURE"); dir != "" {
		return dir
	}
	recoveryDirOnce.Do(func() {
		recoveryDir, recoveryDirErr = buildRecoveryDir(filepath.Join(os.TempDir(), fmt.Sprintf("podium-recovery-bench-%d", os.Getpid())))
	})
	if recoveryDirErr != nil {
		tb.Fatal(recoveryDirErr)
	}
	return recoveryDir
}

// benchClock stamps envelopes with increasing times and seeds.
type benchClock struct {
	now  int64
	seed uint64
}

func (c *benchClock) env(actor engine.Actor, cmd engine.Command) *engine.Envelope {
	c.now += 3
	c.seed++
	return &engine.Envelope{Time: c.now, Seed: c.seed * 0x9e3779b97f4a7c15, Actor: actor, Cmd: cmd}
}

// buildRecoveryDir writes the fixture into dir.
func buildRecoveryDir(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) > 0 {
		return "", fmt.Errorf("%s is not an empty directory (%v)", dir, err)
	}
	eng := engine.New()
	clk := &benchClock{now: 1_700_000_000_000}
	apply := func(actor engine.Actor, cmd engine.Command) (any, error) {
		res, _, err := eng.Apply(clk.env(actor, cmd))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cmd.Kind(), err)
		}
		return res, nil
	}
	ps := make([]engine.NewProject, 10000)
	for i := range ps {
		ps[i] = engine.NewProject{Name: fmt.Sprintf("Project %d", i), Description: "A project description of moderate length for the expo.", URL: "https://example.org/p", ChallengeList: []string{"AI", "Web"}}
	}
	if _, err := apply(engine.Admin, &engine.CreateProjects{Projects: ps}); err != nil {
		return "", err
	}
	js := make([]engine.NewJudge, 5000)
	codes := make([]string, len(js))
	for i := range js {
		js[i] = engine.NewJudge{Name: fmt.Sprintf("Judge %d", i), Email: fmt.Sprintf("judge%d@example.org", i)}
		codes[i] = fmt.Sprintf("%08d", i)
	}
	res, err := apply(engine.Admin, &engine.CreateJudges{Judges: js, Codes: codes})
	if err != nil {
		return "", err
	}
	judges := make([]engine.ID, 0, len(js))
	for _, cj := range res.([]engine.CreatedJudge) {
		judges = append(judges, cj.ID)
	}
	if _, err := apply(engine.Admin, &engine.ClockUnpause{}); err != nil {
		return "", err
	}
	for round := 0; round < 20; round++ {
		for _, j := range judges {
			if err := nextFinish(apply, j, "Good demo, clear pitch."); err != nil {
				return "", err
			}
		}
	}
	st, err := store.OpenForNode(dir, zerolog.Nop())
	if err != nil {
		return "", err
	}
	encode, seq := eng.Capture()
	if _, err := st.WriteSnapshotFrom(encode, seq, clk.now); err != nil {
		st.Close()
		return "", err
	}
	if err := st.Close(); err != nil {
		return "", err
	}
	tail, err := replayMix(eng, clk, judges, tailRecords)
	if err != nil {
		return "", err
	}
	j, err := journal.Open(journalDir(dir), journal.Options{Log: zerolog.Nop()})
	if err != nil {
		return "", err
	}
	defer j.Close()
	if err := j.TruncateFront(seq); err != nil {
		return "", err
	}
	for i := 0; i < len(tail); i += 256 {
		batch := tail[i:min(i+256, len(tail))]
		entries := make([]journal.Entry, len(batch))
		for k, b := range batch {
			entries[k] = journal.Entry{Index: seq + uint64(i+k) + 1, Data: b}
		}
		if err := j.Append(entries); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func nextFinish(apply func(engine.Actor, engine.Command) (any, error), j engine.ID, notes string) error {
	res, err := apply(engine.JudgeActor(j), &engine.JudgeNext{Judge: j})
	if err != nil {
		return err
	}
	if res.(engine.NextResult).ProjectID.IsZero() {
		return fmt.Errorf("judge %s got no project", j)
	}
	_, err = apply(engine.JudgeActor(j), &engine.JudgeFinish{Judge: j, Notes: notes, Starred: rand.IntN(4) == 0})
	return err
}

// replayMix applies n commands of the realistic mix after the snapshot to eng and
// returns their journal records: per 10 records 3 next + 3 finish, 2 notes edits, a
// ranking and a star; one ratings fit result per 10,000 records (all projects and
// judges).
func replayMix(eng *engine.Engine, clk *benchClock, judges []engine.ID, n int) ([][]byte, error) {
	var out [][]byte
	apply := func(actor engine.Actor, cmd engine.Command) (any, error) {
		env := clk.env(actor, cmd)
		res, _, err := eng.Apply(env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cmd.Kind(), err)
		}
		b, err := env.AppendJSON(nil)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		return res, nil
	}
	seenOf := func(j engine.ID) (ids []engine.ID) {
		eng.Read(func(s *engine.State) {
			for _, sp := range s.Judges[j].SeenProjects {
				ids = append(ids, sp.ProjectID)
			}
		})
		return ids
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for k := 0; len(out) < n; k++ {
		j := judges[k%len(judges)]
		var err error
		switch k % 7 {
		case 0, 1, 2:
			err = nextFinish(apply, j, fmt.Sprintf("Solid work on the demo; the team answered questions well (%d).", k))
		case 3, 4:
			seen := seenOf(j)
			_, err = apply(engine.JudgeActor(j), &engine.JudgeNotes{Judge: j, Project: seen[rnd.IntN(len(seen))], Notes: fmt.Sprintf("Edited after talking to the team again: strong backend, weak UI (%d).", k)})
		case 5:
			seen := seenOf(j)
			rnd.Shuffle(len(seen), func(a, b int) { seen[a], seen[b] = seen[b], seen[a] })
			_, err = apply(engine.JudgeActor(j), &engine.JudgeRank{Judge: j, Ranking: seen[:min(10, len(seen))]})
		case 6:
			seen := seenOf(j)
			_, err = apply(engine.JudgeActor(j), &engine.JudgeStar{Judge: j, Project: seen[rnd.IntN(len(seen))], Starred: rnd.IntN(2) == 0})
		}
		if err != nil {
			return nil, err
		}
		if len(out)%10000 == 5000 {
			if _, err := apply(engine.System, ratingsFor(eng, rnd)); err != nil {
				return nil, err
			}
		}
	}
	return out[:n], nil
}

// ratingsFor is a fit result listing what the fitter lists (RatingInput: the active
// projects by table, the judges who saw two or more in the judges' order, with their
// disagreement counts), with random values rounded to the 6 decimals the fitter gives them (engine/fit's result).
func ratingsFor(eng *engine.Engine, rnd *rand.Rand) *engine.SetRatings {
	cmd := &engine.SetRatings{}
	round6 := func(v float64) float64 { return math.Round(v*1e6) / 1e6 }
	eng.Read(func(s *engine.State) {
		in := s.RatingInput()
		cmd.Version = in.Version
		for _, id := range in.Projects {
			cmd.Projects = append(cmd.Projects, id)
			cmd.Rating = append(cmd.Rating, round6(rnd.NormFloat64()))
			cmd.SD = append(cmd.SD, round6(0.2+rnd.Float64()))
			cmd.PTop = append(cmd.PTop, round6(rnd.Float64()/100))
			cmd.PTop3 = append(cmd.PTop3, round6(rnd.Float64()/30))
		}
		for _, id := range in.Judges {
			cmd.Judges = append(cmd.Judges, id)
			cmd.Reliability = append(cmd.Reliability, round6(0.5+rnd.Float64()))
			cmd.Disagreement = append(cmd.Disagreement, round6(rnd.Float64()/4))
			cmd.Compared = append(cmd.Compared, rnd.IntN(40))
		}
	})
	return cmd
}

// copyDir copies the fixture so that a run may change it.
func copyDir(tb testing.TB, from string) string {
	tb.Helper()
	to := filepath.Join(tb.TempDir(), "data")
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		tb.Fatalf("cp: %v: %s", err, out)
	}
	return to
}

// BenchmarkReplay measures replaying the journal after the snapshot: records per second
// of the realistic mix (replayMix) onto a state of 10,000 projects and 5,000 judges × 20
// views restored from the fixture's snapshot (the restore is not timed), and per CPU
// second of the process (GC included).
//
//	go test ./persist -run '^$' -bench 'Replay$' -benchtime 3x -count 3
func BenchmarkReplay(b *testing.B) {
	benchReplays(b, func(eng *engine.Engine, after uint64, j *journal.Journal) func() (replayed, error) {
		return func() (replayed, error) { return replayJournal(eng, j, after) }
	})
}

// BenchmarkReplayDecode measures the decoding side of BenchmarkReplay alone: reading
// and decoding the fixture's journal records after the snapshot, as replayJournal's
// decoder does, without applying them: per tailRecords records, wall (ns/op) and CPU
// of the process (cpu-ms/op, GC included).
//
//	go test ./persist -run '^$' -bench 'ReplayDecode$' -benchtime 20x -count 3
func BenchmarkReplayDecode(b *testing.B) {
	_, ptr, j := replayInputs(b)
	b.ResetTimer()
	c0 := processCPU()
	for i := 0; i < b.N; i++ {
		recs, err := decodeJournal(j, ptr.Seq)
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) != tailRecords {
			b.Fatalf("decoded %d records", len(recs))
		}
	}
	b.ReportMetric(float64(processCPU()-c0)/1e6/float64(b.N), "cpu-ms/op")
}

// replayInputs opens the replay benchmarks' fixture: its snapshot, the snapshot's
// pointer and the journal (closed when the benchmark ends).
func replayInputs(b *testing.B) ([]byte, store.Pointer, *journal.Journal) {
	dir := recoveryFixture(b)
	st, err := store.Open(dir, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	data, ptr, _, err := st.LoadSnapshot()
	st.Close()
	if err != nil {
		b.Fatal(err)
	}
	j, err := journal.Open(journalDir(dir), journal.Options{Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { j.Close() })
	return data, ptr, j
}

// benchReplays times b.N replays of the fixture's journal, each onto an engine restored
// from its snapshot: setup (not timed) gets the engine, the snapshot's sequence number
// and the journal, and returns the replay to time.
func benchReplays(b *testing.B, setup func(eng *engine.Engine, after uint64, j *journal.Journal) func() (replayed, error)) {
	data, ptr, j := replayInputs(b)
	b.ResetTimer()
	var m replayTimes
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		eng := engine.New()
		if err := eng.Restore(data); err != nil {
			b.Fatal(err)
		}
		replay := setup(eng, ptr.Seq, j)
		runtime.GC() // the restore's garbage is not the replay's to collect
		b.StartTimer()
		m.run(b, replay)
	}
	m.report(b)
}

// replayTimes adds up the wall and CPU time of a benchmark's replays.
type replayTimes struct{ took, cpu time.Duration }

// run times one replay of the whole tail.
func (m *replayTimes) run(b *testing.B, replay func() (replayed, error)) {
	t0, c0 := time.Now(), processCPU()
	r, err := replay()
	m.took += time.Since(t0)
	m.cpu += processCPU() - c0
	if err != nil {
		b.Fatal(err)
	}
	if r.records != tailRecords {
		b.Fatalf("replayed %d records", r.records)
	}
}

// report gives records per second of wall time and of the process's CPU time.
func (m *replayTimes) report(b *testing.B) {
	b.ReportMetric(float64(tailRecords*b.N)/m.took.Seconds(), "records/s")
	b.ReportMetric(float64(tailRecords*b.N)/m.cpu.Seconds(), "records/cpu-s")
}

// processCPU is the CPU time (user + system) the process has used: on a machine
// shared with other work, records per CPU second move less than records per second.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRecover measures Open on a copy of the fixture (snapshot + 40,000 journal
// records), as after a kill -9: the whole recovery before the node takes commands.
//
//	go test ./persist -run '^$' -bench 'Recover$' -benchtime 3x -count 3
func BenchmarkRecover(b *testing.B) {
	src := recoveryFixture(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := copyDir(b, src)
		b.StartTimer()
		n, err := Open(dir, Options{Log: zerolog.Nop()})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		crash(n)
		b.StartTimer()
	}
}

// TestWriteRecoveryFixture writes the recovery benchmarks' data directory to
// $PODIUM_RECOVERY_FIXTURE (skipped without it), for the binary's measurement of
// recovery (cmd/podium TestRecoveryTimes):
//
//	PODIUM_RECOVERY_FIXTURE=/tmp/recovery-fixture go test ./persist -run WriteRecoveryFixture
func TestWriteRecoveryFixture(t *testing.T) {
	dir := os.Getenv("PODIUM_RECOVERY_FIXTURE")
	if dir == "" {
		t.Skip("PODIUM_RECOVERY_FIXTURE not set")
	}
	if _, err := buildRecoveryDir(dir); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkReplayApply measures the applying half of BenchmarkReplay alone: the records
// are decoded before the timer starts (as recovery decodes them while the snapshot
// decodes), then applied on one goroutine.
//
//	go test ./persist -run '^$' -bench 'ReplayApply$' -benchtime 5x -count 3
func BenchmarkReplayApply(b *testing.B) {
	benchReplays(b, func(eng *engine.Engine, after uint64, j *journal.Journal) func() (replayed, error) {
		recs, err := decodeJournal(j, after)
		if err != nil {
			b.Fatal(err)
		}
		return func() (replayed, error) { return applyRecords(eng, recs) }
	})
}
