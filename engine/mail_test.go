package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// mailJudges creates judges with their login-code mails requested.
func (f *fixture) mailJudges(names ...string) []ID {
	f.t.Helper()
	nj := make([]NewJudge, len(names))
	codes := make([]string, len(names))
	for i, n := range names {
		nj[i] = NewJudge{Name: n, Email: n + "@example.com"}
		codes[i] = itoa(20000000 + int(f.n)*100 + i)
	}
	before := len(f.s().JudgeOrder)
	f.must(&CreateJudges{Judges: nj, Codes: codes, Mail: true})
	return append([]ID{}, f.s().JudgeOrder[before:]...)
}

func (f *fixture) mailStatus(id ID) string {
	m, ok := f.s().MailOf(id)
	if !ok {
		return "none"
	}
	return m.Status
}

// TestMailLifecycle walks mails through every state with the commands the outbox and the
// organiser submit, and checks what each refuses.
func TestMailLifecycle(t *testing.T) {
	f := newFixture(t)
	plain := f.judges("nomail")
	js := f.mailJudges("ann", "bob", "cid", "dan")
	ann, bob, cid, dan := js[0], js[1], js[2], js[3]
	for _, id := range js {
		if got := f.mailStatus(id); got != MailPending {
			t.Fatalf("new judge's mail %s, want pending", got)
		}
	}
	if got := f.mailStatus(plain[0]); got != "none" {
		t.Fatalf("judge created without mail has mail %s", got)
	}
	if w := f.s().MailWork("A", 10); len(w.Pending) != 4 || w.Pending[0] != ann || w.Pending[3] != dan || len(w.Claimed) != 0 {
		t.Fatalf("work %+v", w)
	}
	if w := f.s().MailWork("A", 2); len(w.Pending) != 2 || w.Pending[1] != bob {
		t.Fatalf("work capped at 2: %+v", w)
	}

	// Claims: all or nothing; an unknown judge is 404, a mail not pending 409.
	f.fail(&ClaimMail{Judges: []ID{ann}}, KindInvalid)
	f.fail(&ClaimMail{Judges: nil, Claim: "A"}, KindInvalid)
	f.fail(&ClaimMail{Judges: []ID{ann, {9, 9}}, Claim: "A"}, KindNotFound)
	f.fail(&ClaimMail{Judges: []ID{ann, plain[0]}, Claim: "A"}, KindConflict)
	f.must(&ClaimMail{Judges: []ID{ann, bob, cid, ann}, Claim: "A"})
	f.fail(&ClaimMail{Judges: []ID{ann}, Claim: "B"}, KindConflict) // at most once
	if w := f.s().MailWork("A", 10); len(w.Pending) != 1 || len(w.Claimed) != 0 {
		t.Fatalf("own claims are not work: %+v", w)
	}
	if w := f.s().MailWork("B", 10); len(w.Claimed) != 3 || w.Claimed[ann] != "A" {
		t.Fatalf("another outbox's claims: %+v", w)
	}

	// Outcomes only from the claiming outbox.
	f.fail(&RecordMailSent{Judges: []ID{ann}, Claim: "B"}, KindConflict)
	f.fail(&RecordMailSent{Judges: []ID{ann, dan}, Claim: "A"}, KindConflict) // dan is not claimed
	evs := f.must(&RecordMailSent{Judges: []ID{ann}, Claim: "A"})
	if len(eventsOf(evs, EvChanged)) != 1 || len(eventsOf(evs, EvLog)) != 1 {
		t.Fatalf("sent events %+v", evs)
	}
	f.must(&ReleaseMail{Judges: []ID{bob}, Claim: "A"})
	f.fail(&ReleaseMail{Judges: []ID{bob}, Claim: "A"}, KindConflict)
	if f.mailStatus(ann) != MailSent || f.mailStatus(bob) != MailPending {
		t.Fatalf("ann %s bob %s", f.mailStatus(ann), f.mailStatus(bob))
	}

	// A new leader reports the claim it found unknown; the old outbox may still report
	// the outcome it saw.
	f.fail(&ReportMailUnknown{Claims: map[ID]string{cid: "X"}}, KindConflict)
	f.fail(&ReportMailUnknown{Claims: map[ID]string{cid: "A", ann: "A"}}, KindConflict) // ann is sent
	f.must(&ReportMailUnknown{Claims: map[ID]string{cid: "A"}})
	if m, _ := f.s().MailOf(cid); m.Status != MailUnknown || m.Reason == "" {
		t.Fatalf("cid %+v", m)
	}
	f.must(&RecordMailFailed{Judges: []ID{cid}, Claim: "A", Reason: "550 no such\r\nuser"})
	if m, _ := f.s().MailOf(cid); m.Status != MailFailed || m.Reason != "550 no such user" {
		t.Fatalf("cid %+v", m)
	}

	// Failing pending mails (SMTP unreachable, nothing claimed) and skipping them.
	f.fail(&RecordMailFailed{Judges: []ID{ann}, Reason: "x"}, KindConflict)
	f.must(&RecordMailFailed{Judges: []ID{bob}, Reason: "dial tcp: connection refused"})
	f.fail(&EmailSkipped{Judges: []ID{bob}}, KindConflict)
	f.fail(&EmailSkipped{}, KindInvalid)
	f.must(&EmailSkipped{Judges: []ID{dan}})
	if f.mailStatus(bob) != MailFailed || f.mailStatus(dan) != MailSkipped {
		t.Fatalf("bob %s dan %s", f.mailStatus(bob), f.mailStatus(dan))
	}

	// The organiser resends any of them, and a judge that never had one; not one being
	// sent.
	f.must(&QueueMail{Judges: []ID{ann, bob, cid, dan, plain[0]}})
	for _, id := range append(js, plain[0]) {
		if f.mailStatus(id) != MailPending {
			t.Fatalf("requeued mail %s", f.mailStatus(id))
		}
	}
	f.must(&ClaimMail{Judges: []ID{ann}, Claim: "C"})
	f.fail(&QueueMail{Judges: []ID{bob, ann}}, KindConflict)
	f.fail(&QueueMail{Judges: []ID{bob, {7}}}, KindNotFound)

	// No audit line carries a login code.
	for _, l := range f.s().Log {
		for _, j := range f.s().Judges {
			if strings.Contains(l, j.Code) {
				t.Fatalf("audit line %q carries a login code", l)
			}
		}
	}
	// The legacy form of email.skipped (journals from before) still replays.
	f.must(&EmailSkipped{Recipients: []MailRecipient{{Judge: ann, Name: "ann", Email: "ann@example.com"}}})
	checkReplay(t, f)
}

// checkReplay replays f's journal into a fresh engine, and restores f's snapshot into
// another: both equal f's state, mails included.
func checkReplay(t *testing.T, f *fixture) {
	t.Helper()
	want, _, _ := f.e.Snapshot()
	replay := New()
	for i, rec := range f.journal {
		var env Envelope
		if err := json.Unmarshal(rec, &env); err != nil {
			t.Fatal(err)
		}
		if _, _, err := replay.Apply(&env); err != nil {
			t.Fatalf("replay record %d: %v", i, err)
		}
	}
	if got, _, _ := replay.Snapshot(); string(got) != string(want) {
		t.Fatal("replayed state differs")
	}
	restored := New()
	if err := restored.Restore(want); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := restored.Snapshot(); string(got) != string(want) {
		t.Fatal("restored state differs")
	}
	if !strings.Contains(string(want), `"mail":{`) {
		t.Fatal("snapshot has no mails")
	}
	var captured strings.Builder
	encode, _ := f.e.Capture()
	if err := encode(&captured); err != nil || captured.String() != string(want) {
		t.Fatalf("capture differs from the snapshot (%v)", err)
	}
}

// TestMailFollowsJudges: deleting a judge drops its mail (a mail being sent then cannot
// be recorded: 404), and resets that remove judges drop them all.
func TestMailFollowsJudges(t *testing.T) {
	f := newFixture(t)
	js := f.mailJudges("ann", "bob", "cid")
	f.must(&ClaimMail{Judges: []ID{js[0]}, Claim: "A"})
	f.must(&DeleteJudge{Judge: js[0]})
	if _, ok := f.s().MailOf(js[0]); ok {
		t.Fatal("deleted judge's mail kept")
	}
	f.fail(&RecordMailSent{Judges: []ID{js[0]}, Claim: "A"}, KindNotFound)
	if w := f.s().MailWork("B", 10); len(w.Pending) != 2 || len(w.Claimed) != 0 {
		t.Fatalf("work %+v", w)
	}
	f.must(&Reset{Type: ResetJudgingData})
	if len(f.s().Mail) != 2 {
		t.Fatalf("judging-data reset dropped mails: %d left", len(f.s().Mail))
	}
	f.must(&Reset{Type: ResetJudges})
	if len(f.s().Mail) != 0 {
		t.Fatalf("judges reset kept %d mails", len(f.s().Mail))
	}
	f.mailJudges("dee")
	f.must(&Reset{Type: ResetAll})
	if len(f.s().Mail) != 0 {
		t.Fatalf("full reset kept %d mails", len(f.s().Mail))
	}
	f.mailJudges("eve")
	checkReplay(t, f)
}

// TestMailSnapshotFromBefore: a snapshot written before mails were part of the state
// loads with no mails.
func TestMailSnapshotFromBefore(t *testing.T) {
	e := New()
	b, _, _ := e.Snapshot()
	old := strings.Replace(string(b), `,"mail":{}`, "", 1)
	if old == string(b) {
		t.Fatal("no mail field to remove")
	}
	r := New()
	if err := r.Restore([]byte(old)); err != nil {
		t.Fatal(err)
	}
	r.Read(func(s *State) {
		if s.Mail == nil {
			t.Fatal("nil mail map after restoring an old snapshot")
		}
	})
	if got, _, _ := r.Snapshot(); string(got) != string(b) {
		t.Fatal("old snapshot does not restore to the new encoding")
	}
}
