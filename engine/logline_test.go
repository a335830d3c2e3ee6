package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The audit line's hand-written time and line-break check against the library's.
func TestAppendLogTimeMatchesFormat(t *testing.T) {
	r := NewRand(11)
	cases := []int64{0, 1, 999, 1_700_000_000_000, 253402300799999, 253402300800000, -1, -62135596800000, -62135596800001}
	for i := 0; i < 20000; i++ {
		cases = append(cases, int64(r.Uint64()%400_000_000_000_000)-100_000_000_000_000)
	}
	for _, ms := range cases {
		want := time.UnixMilli(ms).UTC().Format(logTimeLayout)
		if got := string(appendLogTime(nil, ms)); got != want {
			t.Fatalf("%d: %q, want %q", ms, got, want)
		}
	}
}

func TestHasLineBreak(t *testing.T) {
	for _, s := range []string{"", "plain", "a\rb", "a\nb", "x\u2028", "\u2029y", "é€☃", "\xe2\x80", "\xe2\x80\xa7", "tab\there",
		"€\u2028", "€☃x\u2029z", "\xe2\xe2\x80\xa8", "€€€", "end\xe2\x80\xa8", "\xe2\x80\xa8\xe2"} {
		want := strings.ContainsAny(s, "\r\n\u2028\u2029")
		if got := hasLineBreak([]byte(s)); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
	// Random strings over the bytes that matter, against the library.
	r := NewRand(5)
	alphabet := []byte{'a', '\r', '\n', 0xE2, 0x80, 0xA8, 0xA9, 0x82}
	for i := 0; i < 50000; i++ {
		b := make([]byte, r.Uint64()%9)
		for k := range b {
			b[k] = alphabet[r.Uint64()%uint64(len(alphabet))]
		}
		if got, want := hasLineBreak(b), strings.ContainsAny(string(b), "\r\n\u2028\u2029"); got != want {
			t.Fatalf("%q: %v, want %v", b, got, want)
		}
	}
}

// TestLogProjectMatchesLogf: the judging flow's hand-built lines are the ones logf
// writes from their format, line breaks in names included, for every actor, and the
// reused buffer carries nothing from one line into the next.
func TestLogProjectMatchesLogf(t *testing.T) {
	s := NewState()
	jid := ID{1}
	s.Judges[jid] = &Judge{ID: jid, Name: "Ada\nLovelace"}
	names := append(append([]string(nil), awkwardTexts...), "", "Project 7", strings.Repeat("long name ", 600))
	for i, name := range names {
		p := &Project{Name: name, Location: []int{0, 1, -3, 1 << 40, 42}[i%5]}
		for _, actor := range []Actor{Admin, JudgeActor(jid), JudgeActor(ID{9}), {Kind: ActorPublic}} {
			for _, tail := range [][]string{nil, {": ", "busy"}} {
				a := &Ctx{Time: int64(1_700_000_000_000 + i), Actor: actor, state: s}
				a.logProject("skipped", p, tail...)
				b := &Ctx{Time: a.Time, Actor: actor, state: s}
				b.logf("skipped project %s (table %d)%s", p.Name, p.Location, strings.Join(tail, ""))
				got, want := s.Log[len(s.Log)-2], s.Log[len(s.Log)-1]
				if got != want {
					t.Fatalf("%s by %v: %q, want %q", fmt.Sprintf("%.40q", name), actor, got, want)
				}
				if ev := a.events[0].Data.(LogEvent); len(ev.Lines) != 1 || ev.Lines[0] != got {
					t.Fatalf("event %v, want the line %q", ev, got)
				}
			}
		}
	}
}

// The audit log keeps the newest MaxLogLines lines, oldest first, through repeated
// trims, and never holds more than logTrimAt.
func TestAuditLogKeepsNewestLines(t *testing.T) {
	s := NewState()
	total := 3*logTrimAt + 17
	for i := 0; i < total; i++ {
		c := &Ctx{Time: 1_700_000_000_000, Actor: Admin, state: s}
		c.logf("line %d", i)
		if len(s.Log) > logTrimAt {
			t.Fatalf("after line %d the log holds %d lines", i, len(s.Log))
		}
	}
	if len(s.Log) < MaxLogLines {
		t.Fatalf("log holds %d lines, want at least %d", len(s.Log), MaxLogLines)
	}
	first := total - len(s.Log)
	for k, line := range s.Log {
		if want := fmt.Sprintf("line %d", first+k); !strings.HasSuffix(line, "] "+want) {
			t.Fatalf("line %d is %q, want it to end in %q", k, line, want)
		}
	}
}

// BenchmarkAuditLine is one judging-flow audit line at steady state (the log full, so
// trims included): go test ./engine -run '^$' -bench AuditLine -benchmem
func BenchmarkAuditLine(b *testing.B) {
	s := NewState()
	jid := ID{1}
	s.Judges[jid] = &Judge{ID: jid, Name: "Ada Lovelace"}
	p := &Project{Name: "A project of the ratio benchmark", Location: 42}
	c := &Ctx{Time: 1_700_000_000_000, Actor: JudgeActor(jid), state: s}
	for i := 0; i < logTrimAt; i++ {
		c.events = nil
		c.logProject("finished", p)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.events = nil
		c.logProject("finished", p)
	}
}
