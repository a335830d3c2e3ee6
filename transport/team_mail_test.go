package transport

import (
	"context"
	"io"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"time"

	smtpd "github.com/emersion/go-smtp"
	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist/worker"
)

// teamSMTP is a real SMTP server (go-smtp) on 127.0.0.1 that hands every message it
// accepts to msgs.
type teamSMTP struct {
	port int
	msgs chan teamSMTPMsg
}

type teamSMTPMsg struct {
	to   []string
	data []byte
}

type teamSMTPSession struct {
	srv *teamSMTP
	to  []string
}

func (s *teamSMTPSession) Mail(string, *smtpd.MailOptions) error { return nil }
func (s *teamSMTPSession) Rcpt(to string, _ *smtpd.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}
func (s *teamSMTPSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.srv.msgs <- teamSMTPMsg{to: s.to, data: b}
	return nil
}
func (s *teamSMTPSession) Reset()        { s.to = nil }
func (s *teamSMTPSession) Logout() error { return nil }

func startTeamSMTP(t *testing.T) *teamSMTP {
	t.Helper()
	s := &teamSMTP{msgs: make(chan teamSMTPMsg, 20)}
	srv := smtpd.NewServer(smtpd.BackendFunc(func(*smtpd.Conn) (smtpd.Session, error) {
		return &teamSMTPSession{srv: s}, nil
	}))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	s.port = ln.Addr().(*net.TCPAddr).Port
	return s
}

func (s *teamSMTP) await(t *testing.T) teamSMTPMsg {
	t.Helper()
	select {
	case m := <-s.msgs:
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no email arrived")
		return teamSMTPMsg{}
	}
}

// none checks that no further message arrives for a while.
func (s *teamSMTP) none(t *testing.T, wait time.Duration) {
	t.Helper()
	select {
	case m := <-s.msgs:
		t.Fatalf("unexpected email to %q", m.to)
	case <-time.After(wait):
	}
}

// startServerWithSMTP is startServerWithOutbox with the outbox sending through smtp
// (nil: no SMTP settings) and mod applied to the server's config.
func startServerWithSMTP(t *testing.T, smtp *teamSMTP, mod func(*Config)) *testServer {
	t.Helper()
	late := &lateOutbox{}
	ts := startServerOpts(t, mod, WithOutbox(late))
	var cfg worker.SMTPConfig
	if smtp != nil {
		cfg = worker.SMTPConfig{Host: "127.0.0.1", Port: smtp.port, From: "jury@example.com"}
	}
	ob := worker.NewOutbox(cfg, ts.Srv.cfg.PublicURL, nil, ts.Node, zerolog.Nop())
	go ob.Run()
	late.ob.Store(ob)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ob.Stop(ctx)
	})
	return ts
}

// teamMailStatus is project id's team-link mail state as GET /api/admin/team-links
// shows it ("" when it has none).
func (ts *testServer) teamMailStatus(id string) string {
	ts.t.Helper()
	var links []struct {
		ID   string
		Mail *struct{ Status string }
	}
	ts.must(200, "GET", "/api/admin/team-links", nil, asAdmin, &links)
	for _, l := range links {
		if l.ID == id && l.Mail != nil {
			return l.Mail.Status
		}
	}
	return ""
}

func (ts *testServer) awaitTeamMail(id, status string) {
	ts.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for ts.teamMailStatus(id) != status {
		if time.Now().After(deadline) {
			ts.t.Fatalf("team mail of %s is %q, want %q", id, ts.teamMailStatus(id), status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type sendAnswer struct {
	OK           int `json:"ok"`
	Queued       int `json:"queued"`
	WithoutEmail int `json:"without_email"`
	Sending      int `json:"sending"`
}

// teamLinkOf returns project id's link from GET /api/admin/team-links.
func (ts *testServer) teamLinkOf(id string) string {
	ts.t.Helper()
	var links []struct{ ID, Link string }
	ts.must(200, "GET", "/api/admin/team-links", nil, asAdmin, &links)
	for _, l := range links {
		if l.ID == id {
			return l.Link
		}
	}
	ts.t.Fatalf("no team link for %s", id)
	return ""
}

// mailBody decodes a received message's text.
func mailBody(t *testing.T, data []byte) (to []string, subject, body string) {
	t.Helper()
	m, err := mail.ReadMessage(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	list, err := mail.ParseAddressList(m.Header.Get("To"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		to = append(to, a.Address)
	}
	b, err := io.ReadAll(quotedprintable.NewReader(m.Body))
	if err != nil {
		t.Fatal(err)
	}
	return to, m.Header.Get("Subject"), string(b)
}

// TestTeamLinksSendMailsEachTeamOnce: POST /api/admin/team-links/send mails each active
// project's link (as GET /api/admin/team-links shows it) to all its contact emails
// through the outbox and a real SMTP server, once; projects without contact emails and
// hidden ones get none; sending again mails again, but not a mail being sent.
func TestTeamLinksSendMailsEachTeamOnce(t *testing.T) {
	smtp := startTeamSMTP(t)
	ts := startServerWithSMTP(t, smtp, func(c *Config) { c.PublicURL = "https://podium.example.org/" })
	ts.must(401, "POST", "/api/admin/team-links/send", nil, anon, nil)

	var a, b, c, d struct{ ID string }
	ts.must(200, "POST", "/api/project/new", map[string]any{"name": "Yonder Yoga", "contact_emails": "ann@example.com, bob@example.com"}, asAdmin, &a)
	ts.must(200, "POST", "/api/project/new", map[string]any{"name": "No Mail"}, asAdmin, &b)
	ts.must(200, "POST", "/api/project/new", map[string]any{"name": "Vega Volunteer", "contact_emails": []string{"vega@example.com"}}, asAdmin, &c)
	ts.must(200, "POST", "/api/project/new", map[string]any{"name": "Hidden", "contact_emails": "hidden@example.com"}, asAdmin, &d)
	ts.must(200, "PUT", "/api/project/hide/"+d.ID, nil, asAdmin, nil)

	var res sendAnswer
	ts.must(200, "POST", "/api/admin/team-links/send", nil, asAdmin, &res)
	if res.OK != 1 || res.Queued != 2 || res.WithoutEmail != 1 || res.Sending != 0 {
		t.Fatalf("answer %+v, want 2 queued and 1 without email", res)
	}
	want := map[string][]string{
		ts.teamLinkOf(a.ID): {"ann@example.com", "bob@example.com"},
		ts.teamLinkOf(c.ID): {"vega@example.com"},
	}
	for range 2 {
		m := smtp.await(t)
		to, subject, body := mailBody(t, m.data)
		var link string
		for l := range want {
			if strings.Contains(body, l+"\r\n") {
				link = l
			}
		}
		if link == "" || !strings.HasPrefix(link, "https://podium.example.org/team/") {
			t.Fatalf("mail to %q without a team link:\n%s", m.to, body)
		}
		if !slices.Equal(m.to, want[link]) || !slices.Equal(to, want[link]) {
			t.Fatalf("mail with %s went to %q (To: %q), want %q", link, m.to, to, want[link])
		}
		if !strings.Contains(subject, "team page of") {
			t.Errorf("subject %q", subject)
		}
		delete(want, link)
	}
	ts.awaitTeamMail(a.ID, engine.MailSent)
	ts.awaitTeamMail(c.ID, engine.MailSent)
	if st := ts.teamMailStatus(b.ID) + ts.teamMailStatus(d.ID); st != "" {
		t.Fatalf("project without email or hidden has a mail: %q", st)
	}
	smtp.none(t, 300*time.Millisecond) // once: nothing more went out

	// Sending again mails again (a team that lost its mail).
	ts.must(200, "POST", "/api/admin/team-links/send", nil, asAdmin, &res)
	if res.Queued != 2 {
		t.Fatalf("sent again: %+v", res)
	}
	got := map[string]bool{}
	for range 2 {
		got[smtp.await(t).to[0]] = true
	}
	if !got["ann@example.com"] || !got["vega@example.com"] {
		t.Fatalf("sent again to %v", got)
	}
	ts.awaitTeamMail(a.ID, engine.MailSent)
	ts.awaitTeamMail(c.ID, engine.MailSent)
	smtp.none(t, 300*time.Millisecond)
}

// TestTeamLinksSendNotClaimedTwice: a team-link mail claimed by an outbox is not queued
// again (counted as sending).
func TestTeamLinksSendNotClaimedTwice(t *testing.T) {
	ts := startServer(t)
	var a struct{ ID string }
	ts.must(200, "POST", "/api/project/new", map[string]any{"name": "Yonder Yoga", "contact_emails": "ann@example.com"}, asAdmin, &a)
	var res sendAnswer
	ts.must(200, "POST", "/api/admin/team-links/send", nil, asAdmin, &res)
	if res.Queued != 1 || ts.teamMailStatus(a.ID) != engine.MailPending {
		t.Fatalf("answer %+v, mail %q", res, ts.teamMailStatus(a.ID))
	}
	aID, _ := engine.ParseID(a.ID)
	if _, err := ts.Node.Submit(context.Background(), engine.System, &engine.ClaimMail{Judges: []engine.ID{aID}, Claim: "outbox"}); err != nil {
		t.Fatal(err)
	}
	ts.must(200, "POST", "/api/admin/team-links/send", nil, asAdmin, &res)
	if res.Queued != 0 || res.Sending != 1 || ts.teamMailStatus(a.ID) != engine.MailSending {
		t.Fatalf("answer %+v, mail %q: a mail being sent was queued again", res, ts.teamMailStatus(a.ID))
	}
}

// TestTeamLinksSendSkippedWithoutSMTP: without SMTP settings each team-link mail is
// recorded as skipped, with an audit line naming the project and its addresses but
// never the link.
func TestTeamLinksSendSkippedWithoutSMTP(t *testing.T) {
	ts := startServerWithSMTP(t, nil, nil)
	var a struct{ ID string }
	ts.must(200, "POST", "/api/project/new", map[string]any{"name": "Yonder Yoga", "contact_emails": "ann@example.com"}, asAdmin, &a)
	ts.must(200, "POST", "/api/admin/team-links/send", nil, asAdmin, nil)
	ts.awaitTeamMail(a.ID, engine.MailSkipped)
	link := ts.teamLinkOf(a.ID)
	token := link[strings.LastIndex(link, "/")+1:]
	var log struct{ Log string }
	ts.must(200, "GET", "/api/admin/log", nil, asAdmin, &log)
	if !strings.Contains(log.Log, "team link email to Yonder Yoga (table 1) <ann@example.com> skipped: SMTP is not configured") {
		t.Fatalf("no skipped line in the audit log:\n%s", log.Log)
	}
	if strings.Contains(log.Log, token) {
		t.Fatalf("the audit log carries the team token:\n%s", log.Log)
	}
}
