package worker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"podium/engine"
)

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
	node := newOutboxTestNode(t)
	_, stop := startOutbox(t, node, smtp, obs, 3, 5*time.Millisecond)
	node.addJudges(true, [2]string{"Ada", "ada@example.com"})
	got := smtp.nextMailTo(t, "ada@example.com")
	if !strings.Contains(parseMail(t, got.data).body, node.loginCodeOf("ada@example.com")) {
		t.Fatal("mail without the code")
	}
	node.awaitMail("ada@example.com", engine.MailSent)
	if l := node.auditLines("login code email sent to Ada <ada@example.com>"); len(l) != 1 {
		t.Fatalf("sent audit lines %q", l)
	}
	node.noCodesInAudit()
	stop()

	startOutbox(t, node, smtp, obs, 3, 5*time.Millisecond)
	node.addJudges(true, [2]string{"Bob", "bob@example.com"})
	smtp.nextMailTo(t, "bob@example.com")
	node.awaitMail("bob@example.com", engine.MailSent)
	if st, _ := node.mailOf("ada@example.com"); st != engine.MailSent {
		t.Fatalf("Ada's mail after the restart: %q", st)
	}
	if obs.sent.Load() != 2 {
		t.Fatalf("%d mails sent, want 2", obs.sent.Load())
	}
}

// TestMailPendingSurvivesRestart: while the SMTP server is down nothing is claimed; the
// mail stays pending across a restart and goes out once the server is up.
func TestMailPendingSurvivesRestart(t *testing.T) {
	node := newOutboxTestNode(t)
	down := &smtpServer{host: "127.0.0.1", port: closedSMTPPort(t)}
	_, stop := startOutbox(t, node, down, nil, 5, time.Hour)
	node.addJudges(true, [2]string{"Ada", "ada@example.com"})
	if st, _ := node.mailOf("ada@example.com"); st != engine.MailPending {
		t.Fatalf("mail %q while the SMTP server is down, want pending", st)
	}
	stop() // interrupts the retry wait

	smtp := startSMTP(t)
	startOutbox(t, node, smtp, nil, 3, 5*time.Millisecond)
	smtp.nextMailTo(t, "ada@example.com")
	node.awaitMail("ada@example.com", engine.MailSent)
	node.addJudges(true, [2]string{"Bob", "bob@example.com"})
	smtp.nextMailTo(t, "bob@example.com") // Ada's did not go out twice
}

// TestMailClaimedBeforeRestartIsReportedNotResent: a mail claimed by an outbox that is
// gone (the server died inside the SMTP exchange) is marked unknown, in the audit log
// and on the judge list, and not sent; the organiser's resend sends it once.
func TestMailClaimedBeforeRestartIsReportedNotResent(t *testing.T) {
	node := newOutboxTestNode(t)
	ada := node.addJudges(true, [2]string{"Ada", "ada@example.com"})[0]
	if _, err := node.Submit(context.Background(), engine.System, &engine.ClaimMail{Judges: []engine.ID{ada}, Claim: "dead-outbox"}); err != nil {
		t.Fatal(err)
	}

	smtp := startSMTP(t)
	obs := newMailCounter()
	startOutbox(t, node, smtp, obs, 3, 5*time.Millisecond)
	if reason := node.awaitMail("ada@example.com", engine.MailUnknown); !strings.Contains(reason, "resend") {
		t.Errorf("unknown reason %q", reason)
	}
	if ev := obs.await(t); ev != "unknown" {
		t.Fatalf("outcome %s, want unknown counted", ev)
	}
	if l := node.auditLines("login code email outcome unknown for Ada <ada@example.com>"); len(l) != 1 {
		t.Fatalf("unknown audit lines %q", l)
	}
	node.addJudges(true, [2]string{"Bob", "bob@example.com"})
	smtp.nextMailTo(t, "bob@example.com") // Ada's was not resent

	// The organiser resends (POST /api/judge/email): all or nothing, unknown ids 404.
	_, err := node.Submit(context.Background(), engine.Admin, &engine.QueueMail{Judges: []engine.ID{ada, {0xab, 0xc}}})
	if ee := (*engine.Error)(nil); !errors.As(err, &ee) || ee.Kind != engine.KindNotFound {
		t.Fatalf("resend with an unknown judge: %v, want not found", err)
	}
	if st, _ := node.mailOf("ada@example.com"); st != engine.MailUnknown {
		t.Fatalf("refused resend changed the mail to %q", st)
	}
	node.must(&engine.QueueMail{Judges: []engine.ID{ada}})
	node.kick()
	smtp.nextMailTo(t, "ada@example.com")
	node.awaitMail("ada@example.com", engine.MailSent)
	node.noCodesInAudit()
}

// TestMailOfDeletedJudgeNotSent: a judge deleted while its batch is being sent gets no
// mail, and the others' outcomes are still recorded.
func TestMailOfDeletedJudgeNotSent(t *testing.T) {
	smtp := startSMTP(t, func(s *smtpServer) { s.gate = make(chan struct{}) })
	node := newOutboxTestNode(t)
	startOutbox(t, node, smtp, nil, 2, time.Millisecond)
	node.addJudges(true, [2]string{"Ada", "ada@example.com"}, [2]string{"Bob", "bob@example.com"}, [2]string{"Cid", "cid@example.com"})
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
	if st, _ := node.mailOf("bob@example.com"); st != engine.MailSending {
		t.Fatalf("Bob's mail %q, want sending (claimed with Ada's)", st)
	}
	bob, _ := node.judge("bob@example.com")
	_, err := node.Submit(context.Background(), engine.Admin, &engine.QueueMail{Judges: []engine.ID{bob}})
	if ee := (*engine.Error)(nil); !errors.As(err, &ee) || ee.Kind != engine.KindConflict {
		t.Fatalf("resend of a mail being sent: %v, want a conflict", err)
	}
	node.must(&engine.DeleteJudge{Judge: bob})
	close(smtp.gate)
	smtp.nextMailTo(t, "ada@example.com")
	smtp.nextMailTo(t, "cid@example.com")
	node.awaitMail("ada@example.com", engine.MailSent)
	node.awaitMail("cid@example.com", engine.MailSent)
	node.addJudges(true, [2]string{"Dee", "dee@example.com"})
	smtp.nextMailTo(t, "dee@example.com")
}

// TestMailConnectionLostAfterDataIsUnknown: the connection drops after the whole message
// was handed over, so the server may have accepted it: the mail is reported unknown,
// not retried.
func TestMailConnectionLostAfterDataIsUnknown(t *testing.T) {
	smtp := startSMTP(t, func(s *smtpServer) { s.drop = true })
	obs := newMailCounter()
	node := newOutboxTestNode(t)
	startOutbox(t, node, smtp, obs, 3, time.Millisecond)
	node.addJudges(true, [2]string{"Ada", "ada@example.com"})
	if reason := node.awaitMail("ada@example.com", engine.MailUnknown); !strings.Contains(reason, "connection to the SMTP server was lost") {
		t.Fatalf("reason %q", reason)
	}
	if ev := obs.await(t); ev != "unknown" {
		t.Fatalf("outcome %s", ev)
	}
	smtp.mu.Lock()
	smtp.drop = false
	smtp.mu.Unlock()
	node.addJudges(true, [2]string{"Bob", "bob@example.com"})
	smtp.nextMailTo(t, "bob@example.com")
	smtp.mu.Lock()
	defer smtp.mu.Unlock()
	if smtp.attempts != 2 {
		t.Fatalf("%d DATA commands, want 2 (Ada's not retried)", smtp.attempts)
	}
}
