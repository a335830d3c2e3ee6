package engine

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

var auditLineRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z \[(SYSTEM|ADMIN|JUDGE [^\]]+)\] \S`)

// stateWithoutLog encodes the state minus the audit log and the counters every command
// moves, to tell whether a command changed anything else.
func stateWithoutLog(t *testing.T, e *Engine) string {
	t.Helper()
	b, _, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	json.Unmarshal(b, &m)
	delete(m, "log")
	delete(m, "applied")
	delete(m, "last_time")
	out, _ := json.Marshal(m)
	return string(out)
}

// TestAuditEveryChangeWritesALine applies every admin command of the foundation with
// each actor and checks docs/behaviour.md#admin-operations: every state change writes an audit line of the form
// "<RFC3339 ms UTC> [SYSTEM|ADMIN|JUDGE <name>] <message>". Unauthenticated requests
// (QR self-signup) have no role of their own in that format: they are SYSTEM.
func TestAuditEveryChangeWritesALine(t *testing.T) {
	e := New()
	n := int64(0)
	run := func(actor Actor, cmd Command) {
		t.Helper()
		n++
		before := stateWithoutLog(t, e)
		logLen := len(e.s.Log)
		_, _, err := e.Apply(&Envelope{Time: 1_700_000_000_000 + n*1000, Seed: uint64(n), Actor: actor, Cmd: cmd})
		if err != nil {
			t.Fatalf("%s: %v", cmd.Kind(), err)
		}
		if stateWithoutLog(t, e) == before {
			return
		}
		if len(e.s.Log) == logLen {
			t.Errorf("%s changed the state without an audit line", cmd.Kind())
			return
		}
		for _, l := range e.s.Log[logLen:] {
			if !auditLineRE.MatchString(l) {
				t.Errorf("%s wrote %q", cmd.Kind(), l)
			}
		}
	}
	codes := []string{"11111111", "22222222", "33333333", "44444444"}
	run(Public, &CreateJudges{Judges: []NewJudge{{Name: "Self Signup", Email: "s@example.com"}}, Codes: codes})
	run(Admin, &CreateJudges{Judges: []NewJudge{{Name: "Ada", Email: "a@example.com"}, {Name: "Bob", Email: "b@example.com"}}, Codes: codes})
	run(Admin, &CreateProjects{Projects: []NewProject{{Name: "P1"}, {Name: "P2"}, {Name: "P3"}}})
	ada := e.s.JudgeOrder[1]
	var pids []ID
	for _, p := range e.s.ProjectsByLocation() {
		pids = append(pids, p.ID)
	}
	run(JudgeActor(ada), &JudgeLogin{Judge: ada, TokenHash: strings.Repeat("a", 64)})
	run(JudgeActor(ada), &JudgeLogout{Judge: ada})
	run(Admin, &AdminLogin{SessionHash: strings.Repeat("b", 64)})
	run(Admin, &AdminLogout{SessionHash: strings.Repeat("b", 64)})
	name := "Ada L"
	run(Admin, &UpdateJudge{Judge: ada, Name: &name})
	run(Admin, &HideJudges{Judges: []ID{ada}, Hide: true})
	run(Admin, &HideJudges{Judges: []ID{ada}, Hide: false})
	run(Admin, &MoveJudgesGroup{Judges: []ID{ada}, Group: 2})
	run(Admin, &SwapGroups{})
	run(Admin, &ReassignJudges{})
	pname := "P1b"
	run(Admin, &UpdateProject{Project: pids[0], Name: &pname})
	run(Admin, &HideProjects{Projects: []ID{pids[1]}, Hide: true})
	run(Admin, &PrioritizeProjects{Projects: []ID{pids[2]}, Prioritize: true})
	run(Admin, &MoveProject{Project: pids[2], Location: 40})
	run(Admin, &MoveProjectsGroup{Projects: []ID{pids[0]}, Group: 1})
	run(Admin, &ReassignProjects{})
	run(Admin, &BalanceGroups{})
	mv, clockSync := 7, false
	run(Admin, &SetOptions{MinViews: &mv, ClockSync: &clockSync}) // ClockRecover below needs clock_sync off
	run(Admin, &ClockUnpause{})
	run(Admin, &SetDeliberation{Start: true})
	run(Admin, &SetDeliberation{Start: false})
	run(Admin, &ClockUnpause{})
	run(Admin, &ClockPause{})
	run(Admin, &ClockReset{})
	run(Admin, &ClockUnpause{})
	run(System, &ClockRecover{PauseAt: 1_700_000_000_000 + n*1000})
	run(Admin, &DeleteProject{Project: pids[1]})
	run(Admin, &DeleteJudge{Judge: ada})
	for _, typ := range []string{ResetRankings, ResetJudgingData, ResetJudges, ResetProjects, ResetAll} {
		run(Admin, &Reset{Type: typ})
	}
	if !strings.Contains(e.s.Log[0], "[SYSTEM] ") {
		t.Errorf("self-signup line %q is not attributed to SYSTEM", e.s.Log[0])
	}
}

// TestAuditLogLinesCannotBeForged: names are user input; a name with a line break must
// not split its audit entry into a second, forged line of the newline-joined log.
func TestAuditLogLinesCannotBeForged(t *testing.T) {
	f := newFixture(t)
	forged := "Eve\n2020-01-01T00:00:00.000Z [ADMIN] deleted everything\r"
	f.must(&CreateJudges{Judges: []NewJudge{{Name: forged, Email: "eve@example.com"}}, Codes: []string{"12345678"}})
	f.must(&CreateProjects{Projects: []NewProject{{Name: "P\nQ"}}})
	ev, start, end := "Talk\n2020-01-01T00:00:00.000Z [ADMIN] forged", int64(1), int64(2)
	f.must(&CreateScheduleEntry{Entry: ScheduleFields{EventName: &ev, StartTime: &start, EndTime: &end}})
	joined := strings.Join(f.s().Log, "\n")
	lines := strings.Split(joined, "\n")
	if len(lines) != len(f.s().Log) {
		t.Fatalf("%d entries became %d lines: %q", len(f.s().Log), len(lines), joined)
	}
	for _, l := range lines {
		if !auditLineRE.MatchString(l) || strings.ContainsAny(l, "\r\n") {
			t.Errorf("bad line %q", l)
		}
	}
}
