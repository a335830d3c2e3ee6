package transport

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist"
)

// mailOf returns the state of the login-code mail of the judge with that email, as the
// judge list shows it ("" when the judge has none).
func (ts *testServer) mailOf(email string) (status, reason string) {
	ts.t.Helper()
	var list []struct {
		Email string
		Mail  *struct{ Status, Reason string }
	}
	ts.must(200, "GET", "/api/judge/list", nil, asAdmin, &list)
	for _, j := range list {
		if j.Email == email && j.Mail != nil {
			return j.Mail.Status, j.Mail.Reason
		}
	}
	return "", ""
}

// awaitMail waits until the judge's mail has status (the test fails after 20 s).
func (ts *testServer) awaitMail(email, status string) (reason string) {
	ts.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, reason := ts.mailOf(email)
		if got == status {
			return reason
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("mail to %s is %q, want %q", email, got, status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// auditLines returns the audit log lines that contain sub.
func (ts *testServer) auditLines(sub string) []string {
	var out []string
	ts.Node.Read(func(st *engine.State) {
		for _, l := range st.Log {
			if strings.Contains(l, sub) {
				out = append(out, l)
			}
		}
	})
	return out
}

// noCodesInAudit fails when any login code appears in the audit log.
func (ts *testServer) noCodesInAudit() {
	ts.t.Helper()
	ts.Node.Read(func(st *engine.State) {
		for _, l := range st.Log {
			for _, j := range st.Judges {
				if strings.Contains(l, j.Code) {
					ts.t.Errorf("login code in audit line %q", l)
				}
			}
		}
	})
}

// nextMailTo waits for the next message and checks it is to want: a mail sent twice
// would arrive before it, since the outbox sends mails in order.
func (s *smtpServer) nextMailTo(t *testing.T, want string) received {
	t.Helper()
	got := s.await(t)
	if len(got.to) != 1 || got.to[0] != want {
		t.Fatalf("mail to %q, want %s", got.to, want)
	}
	return got
}

// TestMailSentIsRecordedAndNotResent: a sent mail is recorded through the log (state,
// audit line without the code) and a restart does not send it again.
func TestMailSentIsRecordedAndNotResent(t *testing.T) {
	smtp := startSMTP(t)
	obs := newMailCounter()
	dir := t.TempDir()
	ts := startServerOptsIn(t, dir, smtp.config, WithMailObserver(obs), WithMailRetry(3, 5*time.Millisecond))
	ts.must(200, "POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com"}, asAdmin, nil)
	got := smtp.nextMailTo(t, "ada@example.com")
	if !strings.Contains(parseMail(t, got.data).body, ts.loginCodeOf("ada@example.com")) {
		t.Fatal("mail without the code")
	}
	ts.awaitMail("ada@example.com", engine.MailSent)
	if l := ts.auditLines("login code email sent to Ada <ada@example.com>"); len(l) != 1 {
		t.Fatalf("sent audit lines %q", l)
	}
	ts.noCodesInAudit()
	ts.Stop()

	ts = startServerOptsIn(t, dir, smtp.config, WithMailObserver(obs), WithMailRetry(3, 5*time.Millisecond))
	ts.must(200, "POST", "/api/judge/new", map[string]any{"name": "Bob", "email": "bob@example.com"}, asAdmin, nil)
	smtp.nextMailTo(t, "bob@example.com")
	ts.awaitMail("bob@example.com", engine.MailSent)
	if st, _ := ts.mailOf("ada@example.com"); st != engine.MailSent {
		t.Fatalf("Ada's mail after the restart: %q", st)
	}
	if obs.sent.Load() != 2 {
		t.Fatalf("%d mails sent, want 2", obs.sent.Load())
	}
}

// TestMailPendingSurvivesRestart: while the SMTP server is down nothing is claimed; the
// mail stays pending across a restart and goes out once the server is up.
func TestMailPendingSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	down := func(c *Config) { c.SMTP = SMTPConfig{Host: "127.0.0.1", Port: closedSMTPPort(t)} }
	ts := startServerOptsIn(t, dir, down, WithMailRetry(5, time.Hour))
	ts.must(200, "POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com"}, asAdmin, nil)
	if st, _ := ts.mailOf("ada@example.com"); st != engine.MailPending {
		t.Fatalf("mail %q while the SMTP server is down, want pending", st)
	}
	ts.Stop() // interrupts the retry wait

	smtp := startSMTP(t)
	ts = startServerOptsIn(t, dir, smtp.config, WithMailRetry(3, 5*time.Millisecond))
	smtp.nextMailTo(t, "ada@example.com")
	ts.awaitMail("ada@example.com", engine.MailSent)
	ts.must(200, "POST", "/api/judge/new", map[string]any{"name": "Bob", "email": "bob@example.com"}, asAdmin, nil)
	smtp.nextMailTo(t, "bob@example.com") // Ada's did not go out twice
}

// TestMailClaimedBeforeRestartIsReportedNotResent: a mail claimed by an outbox that is
// gone (the server died inside the SMTP exchange) is marked unknown, in the audit log
// and on the judge list, and not sent; the organiser's resend sends it once.
func TestMailClaimedBeforeRestartIsReportedNotResent(t *testing.T) {
	dir := t.TempDir()
	node, err := persist.Open(dir, persist.Options{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := node.Submit(ctx, engine.Admin, &engine.CreateJudges{
		Judges: []engine.NewJudge{{Name: "Ada", Email: "ada@example.com"}}, Codes: []string{"12345678"}, Mail: true})
	if err != nil {
		t.Fatal(err)
	}
	ada := res.([]engine.CreatedJudge)[0].ID
	if _, err := node.Submit(ctx, engine.System, &engine.ClaimMail{Judges: []engine.ID{ada}, Claim: "dead-outbox"}); err != nil {
		t.Fatal(err)
	}
	if err := node.Close(); err != nil {
		t.Fatal(err)
	}

	smtp := startSMTP(t)
	obs := newMailCounter()
	ts := startServerOptsIn(t, dir, smtp.config, WithMailObserver(obs), WithMailRetry(3, 5*time.Millisecond))
	if reason := ts.awaitMail("ada@example.com", engine.MailUnknown); !strings.Contains(reason, "resend") {
		t.Errorf("unknown reason %q", reason)
	}
	if ev := obs.await(t); ev != "unknown" {
		t.Fatalf("outcome %s, want unknown counted", ev)
	}
	if l := ts.auditLines("login code email outcome unknown for Ada <ada@example.com>"); len(l) != 1 {
		t.Fatalf("unknown audit lines %q", l)
	}
	ts.must(200, "POST", "/api/judge/new", map[string]any{"name": "Bob", "email": "bob@example.com"}, asAdmin, nil)
	smtp.nextMailTo(t, "bob@example.com") // Ada's was not resent

	// The organiser resends: all or nothing, unknown ids 404.
	ts.must(404, "POST", "/api/judge/email", map[string]any{"items": []string{ada.String(), "000000000000000000000abc"}}, asAdmin, nil)
	ts.must(400, "POST", "/api/judge/email", map[string]any{"items": []string{"nope"}}, asAdmin, nil)
	ts.must(400, "POST", "/api/judge/email", map[string]any{}, asAdmin, nil)
	if st, _ := ts.mailOf("ada@example.com"); st != engine.MailUnknown {
		t.Fatalf("refused resend changed the mail to %q", st)
	}
	ts.must(200, "POST", "/api/judge/email", map[string]any{"items": []string{ada.String()}}, asAdmin, nil)
	smtp.nextMailTo(t, "ada@example.com")
	ts.awaitMail("ada@example.com", engine.MailSent)
	ts.noCodesInAudit()
}

// TestMailOfDeletedJudgeNotSent: a judge deleted while its batch is being sent gets no
// mail, and the others' outcomes are still recorded.
func TestMailOfDeletedJudgeNotSent(t *testing.T) {
	smtp := startSMTP(t, func(s *smtpServer) { s.gate = make(chan struct{}) })
	ts := startServerOpts(t, smtp.config, WithMailRetry(2, time.Millisecond))
	ts.mustUploadCSV(200, "/api/judge/csv", []byte("Ada,ada@example.com\nBob,bob@example.com\nCid,cid@example.com\n"), nil, nil)
	for i := 0; ; i++ { // Ada's mail is inside DATA
		smtp.mu.Lock()
		n := smtp.attempts
		smtp.mu.Unlock()
		if n > 0 {
			break
		}
		if i > 4000 {
			t.Fatal("the worker never reached DATA")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st, _ := ts.mailOf("bob@example.com"); st != engine.MailSending {
		t.Fatalf("Bob's mail %q, want sending (claimed with Ada's)", st)
	}
	var bob string
	for _, j := range ts.judgeList() {
		if j.Email == "bob@example.com" {
			bob = j.ID
		}
	}
	ts.must(409, "POST", "/api/judge/email", map[string]any{"items": []string{bob}}, asAdmin, nil) // being sent
	ts.must(200, "DELETE", "/api/judge/"+bob, nil, asAdmin, nil)
	close(smtp.gate)
	smtp.nextMailTo(t, "ada@example.com")
	smtp.nextMailTo(t, "cid@example.com")
	ts.awaitMail("ada@example.com", engine.MailSent)
	ts.awaitMail("cid@example.com", engine.MailSent)
	ts.must(200, "POST", "/api/judge/new", map[string]any{"name": "Dee", "email": "dee@example.com"}, asAdmin, nil)
	smtp.nextMailTo(t, "dee@example.com")
}

// TestMailConnectionLostAfterDataIsUnknown: the connection drops after the whole message
// was handed over, so the server may have accepted it: the mail is reported unknown,
// not retried.
func TestMailConnectionLostAfterDataIsUnknown(t *testing.T) {
	smtp := startSMTP(t, func(s *smtpServer) { s.drop = true })
	obs := newMailCounter()
	ts := startServerOpts(t, smtp.config, WithMailObserver(obs), WithMailRetry(3, time.Millisecond))
	ts.must(200, "POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com"}, asAdmin, nil)
	if reason := ts.awaitMail("ada@example.com", engine.MailUnknown); !strings.Contains(reason, "connection to the SMTP server was lost") {
		t.Fatalf("reason %q", reason)
	}
	if ev := obs.await(t); ev != "unknown" {
		t.Fatalf("outcome %s", ev)
	}
	smtp.mu.Lock()
	smtp.drop = false
	smtp.mu.Unlock()
	ts.must(200, "POST", "/api/judge/new", map[string]any{"name": "Bob", "email": "bob@example.com"}, asAdmin, nil)
	smtp.nextMailTo(t, "bob@example.com")
	smtp.mu.Lock()
	defer smtp.mu.Unlock()
	if smtp.attempts != 2 {
		t.Fatalf("%d DATA commands, want 2 (Ada's not retried)", smtp.attempts)
	}
}
