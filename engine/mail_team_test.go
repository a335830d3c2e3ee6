package engine

import (
	"strings"
	"testing"
)

// teamProjects creates projects with the contact emails given (one entry per project:
// its addresses) and gives each a team link.
func (f *fixture) teamProjects(emails ...[]string) []ID {
	f.t.Helper()
	np := make([]NewProject, len(emails))
	for i, e := range emails {
		np[i] = NewProject{Name: "Team " + string(rune('A'+i)), ContactEmails: e}
	}
	res, _, err := f.applyRes(&CreateProjects{Projects: np})
	if err != nil {
		f.t.Fatal(err)
	}
	ids := res.(CreatedProjects).IDs
	links := make([]TeamLink, len(ids))
	for i, id := range ids {
		links[i] = TeamLink{Project: id, Token: strings.Repeat(string(rune('a'+i)), 24)}
	}
	f.must(&IssueTeamLinks{Links: links})
	return ids
}

func (f *fixture) queueTeams(base string) TeamMailsQueued {
	f.t.Helper()
	res, _, err := f.applyRes(&QueueTeamMails{Base: base})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.(TeamMailsQueued)
}

// TestMailTeamLinks walks team-link mails through the same states as login-code mails:
// queued for active projects with contact emails only, listed after the login codes by
// table, claimed and recorded with project ids, queued again except while being sent,
// dropped with their project; no audit line carries a team token.
func TestMailTeamLinks(t *testing.T) {
	f := newFixture(t)
	ps := f.teamProjects([]string{"a1@example.com", "a2@example.com"}, nil, []string{"c@example.com"}, []string{"d@example.com"})
	a, b, cc, d := ps[0], ps[1], ps[2], ps[3]
	f.must(&HideProjects{Projects: []ID{d}, Hide: true})
	js := f.mailJudges("ann")

	f.fail(&QueueTeamMails{}, KindInvalid)
	f.fail(&QueueTeamMails{Base: "javascript:alert(1)"}, KindInvalid)
	if q := f.queueTeams("https://podium.example.org/"); q.Queued != 2 || q.WithoutEmail != 1 || q.Sending != 0 {
		t.Fatalf("queued %+v, want 2 queued and 1 without email", q)
	}
	if m, _ := f.s().MailOf(a); m.Status != MailPending || m.Base != "https://podium.example.org" {
		t.Fatalf("team mail %+v", m)
	}
	for _, id := range []ID{b, d} {
		if st := f.mailStatus(id); st != "none" {
			t.Fatalf("project without email or hidden has a mail %s", st)
		}
	}
	if w := f.s().MailWork("A", 10); len(w.Pending) != 3 || w.Pending[0] != js[0] || w.Pending[1] != a || w.Pending[2] != cc {
		t.Fatalf("work %+v, want ann, then the teams by table", w)
	}
	if w := f.s().MailWork("A", 2); len(w.Pending) != 2 || w.Pending[1] != a {
		t.Fatalf("work capped at 2: %+v", w)
	}

	// The outbox's commands take project ids; a mail being sent is not queued again.
	f.fail(&ClaimMail{Judges: []ID{a, b}, Claim: "A"}, KindConflict) // b has no mail
	f.must(&ClaimMail{Judges: []ID{a, cc}, Claim: "A"})
	if q := f.queueTeams("https://podium.example.org"); q.Queued != 0 || q.Sending != 2 {
		t.Fatalf("queued while sending: %+v", q)
	}
	f.must(&RecordMailSent{Judges: []ID{a}, Claim: "A"})
	f.must(&RecordMailFailed{Judges: []ID{cc}, Claim: "A", Reason: "550 no such user"})
	if m, _ := f.s().MailOf(a); m.Status != MailSent || m.Base != "https://podium.example.org" {
		t.Fatalf("sent team mail %+v", m)
	}
	f.fail(&QueueMail{Judges: []ID{a}}, KindNotFound) // the judges' resend takes judges only

	// Sending again queues again (a team that lost the mail); without SMTP it is skipped.
	if q := f.queueTeams("http://10.0.0.5:8080"); q.Queued != 2 {
		t.Fatalf("requeued %+v", q)
	}
	f.must(&EmailSkipped{Judges: []ID{a}})
	if m, _ := f.s().MailOf(a); m.Status != MailSkipped || m.Base != "http://10.0.0.5:8080" {
		t.Fatalf("skipped team mail %+v", m)
	}
	f.must(&QueueMail{Judges: js})
	f.must(&ClaimMail{Judges: []ID{cc, js[0]}, Claim: "B"})
	f.must(&ReportMailUnknown{Claims: map[ID]string{cc: "B", js[0]: "B"}})
	if m, _ := f.s().MailOf(cc); m.Status != MailUnknown || !strings.HasSuffix(m.Reason, "send it again if the team did not get it") {
		t.Fatalf("unknown team mail %+v", m)
	}
	if m, _ := f.s().MailOf(js[0]); m.Status != MailUnknown || !strings.HasSuffix(m.Reason, "resend it if the judge did not get it") {
		t.Fatalf("unknown login mail %+v", m)
	}

	// A deleted project takes its mail along; a judges reset keeps the teams' mails and
	// a projects reset drops them.
	f.must(&DeleteProject{Project: cc})
	if _, ok := f.s().MailOf(cc); ok {
		t.Fatal("deleted project's mail kept")
	}
	f.fail(&RecordMailSent{Judges: []ID{cc}, Claim: "B"}, KindNotFound)
	f.must(&Reset{Type: ResetJudges})
	if f.mailStatus(a) != MailSkipped {
		t.Fatalf("judges reset dropped a team mail: %s", f.mailStatus(a))
	}
	for _, l := range f.s().Log {
		for _, p := range f.s().Projects {
			if strings.Contains(l, p.TeamToken) {
				t.Fatalf("audit line %q carries a team token", l)
			}
		}
	}
	var skipped bool
	for _, l := range f.s().Log {
		skipped = skipped || strings.Contains(l, "team link email to Team A (table 1) <a1@example.com, a2@example.com> skipped")
	}
	if !skipped {
		t.Fatalf("no audit line for the skipped team mail in %q", f.s().Log)
	}
	checkReplay(t, f)
	f.must(&Reset{Type: ResetProjects})
	if len(f.s().Mail) != 0 {
		t.Fatalf("projects reset kept %d mails", len(f.s().Mail))
	}
}
