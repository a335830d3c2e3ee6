package worker

import (
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"time"

	"podium/engine"
)

// addTeams creates projects named name with the contact emails given and team links
// (token i = tokens[i]), and returns their ids.
func (n *outboxTestNode) addTeams(names []string, emails [][]string, tokens []string) []engine.ID {
	n.t.Helper()
	cmd := &engine.CreateProjects{}
	for i, name := range names {
		cmd.Projects = append(cmd.Projects, engine.NewProject{Name: name, ContactEmails: emails[i]})
	}
	ids := n.must(cmd).(engine.CreatedProjects).IDs
	links := &engine.IssueTeamLinks{}
	for i, id := range ids {
		links.Links = append(links.Links, engine.TeamLink{Project: id, Token: tokens[i]})
	}
	n.must(links)
	return ids
}

// queueTeams queues the team-link mails with links under base and kicks the outbox, as
// POST /api/admin/team-links/send does.
func (n *outboxTestNode) queueTeams(base string) engine.TeamMailsQueued {
	n.t.Helper()
	q := n.must(&engine.QueueTeamMails{Base: base}).(engine.TeamMailsQueued)
	if n.kick != nil {
		n.kick()
	}
	return q
}

// awaitProjectMail waits until project id's team-link mail has status.
func (n *outboxTestNode) awaitProjectMail(id engine.ID, status string) engine.LoginMail {
	n.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var m engine.LoginMail
		n.Read(func(st *engine.State) { m, _ = st.MailOf(id) })
		if m.Status == status {
			return m
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("team mail of %s is %q, want %q", id, m.Status, status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// noTokensInAudit fails when a team token appears in the audit log.
func (n *outboxTestNode) noTokensInAudit() {
	n.t.Helper()
	n.Read(func(st *engine.State) {
		for _, l := range st.Log {
			for _, p := range st.Projects {
				if p.TeamToken != "" && strings.Contains(l, p.TeamToken) {
					n.t.Errorf("team token in audit line %q", l)
				}
			}
		}
	})
}

// teamMail is a received team-link mail's headers and text.
type teamMail struct {
	to            []string
	subject, body string
}

func parseTeamMail(t *testing.T, data []byte) teamMail {
	t.Helper()
	m, err := mail.ReadMessage(strings.NewReader(string(data)))
	if err != nil {
		t.Fatalf("not an RFC 5322 message: %v\n%s", err, data)
	}
	list, err := mail.ParseAddressList(m.Header.Get("To"))
	if err != nil {
		t.Fatalf("To: %v", err)
	}
	var out teamMail
	for _, a := range list {
		out.to = append(out.to, a.Address)
	}
	if out.subject, err = new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject")); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(quotedprintable.NewReader(m.Body))
	if err != nil {
		t.Fatal(err)
	}
	out.body = string(b)
	return out
}

// TestTeamLinkMailSentOnce: a team-link mail goes to every contact address of the
// project in one message naming the event and the project, with the project's link
// and the line about results and feedback; it is recorded as sent, not sent again
// after a restart, and a refused address fails its project's mail only. No team token
// reaches the audit log.
func TestTeamLinkMailSentOnce(t *testing.T) {
	smtp := startSMTP(t, func(s *smtpServer) { s.refuse = "nobody@example.com" })
	obs := newMailCounter()
	node := newOutboxTestNode(t)
	_, stop := startOutbox(t, node, smtp, obs, 3, 5*time.Millisecond)
	event := "Spring Hack"
	node.must(&engine.SetOptions{EventName: &event})
	tokA, tokB, tokC := "AAAAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBBBB", "CCCCCCCCCCCCCCCCCCCCCCCC"
	ids := node.addTeams([]string{"Yonder Yoga", "No Mail", "Typo Team"},
		[][]string{{"ann@example.com", "bob@example.com"}, nil, {"nobody@example.com"}},
		[]string{tokA, tokB, tokC})
	if q := node.queueTeams("https://judge.example.org"); q.Queued != 2 || q.WithoutEmail != 1 {
		t.Fatalf("queued %+v", q)
	}

	got := smtp.await(t)
	if !slices.Equal(got.to, []string{"ann@example.com", "bob@example.com"}) || got.from != "jury@example.com" {
		t.Fatalf("envelope from %q to %q", got.from, got.to)
	}
	m := parseTeamMail(t, got.data)
	if !slices.Equal(m.to, []string{"ann@example.com", "bob@example.com"}) {
		t.Errorf("To: %q", m.to)
	}
	if m.subject != "Spring Hack: the team page of Yonder Yoga" {
		t.Errorf("subject %q", m.subject)
	}
	if !strings.Contains(m.body, "https://judge.example.org/team/"+tokA+"\r\n") ||
		!strings.Contains(m.body, "feedback judges wrote") || !strings.Contains(m.body, "Spring Hack") {
		t.Errorf("body without the link or the results line:\n%s", m.body)
	}
	node.awaitProjectMail(ids[0], engine.MailSent)
	if r := node.awaitProjectMail(ids[2], engine.MailFailed).Reason; !strings.Contains(r, "550") {
		t.Errorf("refused team mail's reason %q", r)
	}
	if l := node.auditLines("team link email sent to Yonder Yoga (table 1) <ann@example.com, bob@example.com>"); len(l) != 1 {
		t.Fatalf("sent audit lines %q", l)
	}
	if obs.sent.Load() != 1 || obs.failed.Load() != 1 {
		t.Fatalf("sent %d failed %d, want 1 and 1", obs.sent.Load(), obs.failed.Load())
	}
	stop()

	// After a restart nothing is sent again: the next mail to arrive is a new judge's.
	startOutbox(t, node, smtp, obs, 3, 5*time.Millisecond)
	node.addJudges(true, [2]string{"Dee", "dee@example.com"})
	smtp.nextMailTo(t, "dee@example.com")
	node.awaitMail("dee@example.com", engine.MailSent)
	if obs.sent.Load() != 2 {
		t.Fatalf("%d mails sent, want 2", obs.sent.Load())
	}
	node.noTokensInAudit()
}

// TestTeamLinkMailSkippedWithoutSMTP: without SMTP settings a team-link mail is recorded
// as skipped with an audit line that names the project and its addresses, not the link.
func TestTeamLinkMailSkippedWithoutSMTP(t *testing.T) {
	obs := newMailCounter()
	node := newOutboxTestNode(t)
	startOutbox(t, node, nil, obs, 3, time.Millisecond)
	tok := "SSSSSSSSSSSSSSSSSSSSSSSS"
	ids := node.addTeams([]string{"Vega Volunteer"}, [][]string{{"vega@example.com"}}, []string{tok})
	node.queueTeams("https://judge.example.org")
	if ev := obs.await(t); ev != "skipped" {
		t.Fatalf("outcome %s", ev)
	}
	node.awaitProjectMail(ids[0], engine.MailSkipped)
	l := node.auditLines("team link email to Vega Volunteer (table 1) <vega@example.com> skipped: SMTP is not configured")
	if len(l) != 1 {
		t.Fatalf("skipped audit lines %q", l)
	}
	node.noTokensInAudit()
}
