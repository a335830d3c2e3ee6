package main

import (
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	smtpd "github.com/emersion/go-smtp"
)

// binSMTP is an SMTP server inside the test for the binaries: every message goes to
// msgs; with hold set, DATA reports the recipients on entered instead and then waits
// until the test ends (a server that never answers).
type binSMTP struct {
	port    int
	msgs    chan []string // recipients of each message
	entered chan []string
}

func startBinSMTP(t *testing.T, hold bool) *binSMTP {
	t.Helper()
	return startBinSMTPAt(t, "127.0.0.1:0", hold)
}

// startBinSMTPAt is startBinSMTP listening on addr.
func startBinSMTPAt(t *testing.T, addr string, hold bool) *binSMTP {
	t.Helper()
	s := &binSMTP{msgs: make(chan []string, 10), entered: make(chan []string, 10)}
	release := make(chan struct{})
	var once sync.Once
	srv := smtpd.NewServer(smtpd.BackendFunc(func(*smtpd.Conn) (smtpd.Session, error) {
		return &binSMTPSession{deliver: func(_ string, to []string, _ []byte) {
			if hold {
				s.entered <- to
				<-release
				return
			}
			s.msgs <- to
		}}, nil
	}))
	srv.Domain = "localhost"
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { once.Do(func() { close(release) }); _ = srv.Close() })
	s.port = ln.Addr().(*net.TCPAddr).Port
	return s
}

func (s *binSMTP) env() []string {
	return []string{"SMTP_HOST=127.0.0.1", "SMTP_PORT=" + strconv.Itoa(s.port), "EMAIL_FROM=jury@example.com"}
}

// nextMailTo waits for the next message and checks it is to want alone (the outbox
// sends in order: a mail sent twice would arrive first).
func (s *binSMTP) nextMailTo(t *testing.T, want string) {
	t.Helper()
	select {
	case to := <-s.msgs:
		if len(to) != 1 || to[0] != want {
			t.Fatalf("mail to %q, want %s", to, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no mail to %s arrived", want)
	}
}

// nextHeldTo waits until a message to want alone is held in DATA.
func (s *binSMTP) nextHeldTo(t *testing.T, want string) {
	t.Helper()
	select {
	case to := <-s.entered:
		if len(to) != 1 || to[0] != want {
			t.Fatalf("message to %q held, want %s", to, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no message to %s reached DATA", want)
	}
}

// awaitMailStatus waits until the judge list shows the judge's login-code mail with
// status, and returns its reason.
func (p *proc) awaitMailStatus(email, status string) string {
	p.t.Helper()
	var got string
	for i := 0; i < 3000; i++ {
		var list []struct {
			Email string
			Mail  *struct{ Status, Reason string }
		}
		_ = json.Unmarshal(p.must("GET", "/api/judge/list", nil, ""), &list)
		for _, j := range list {
			if j.Email == email && j.Mail != nil {
				if got = j.Mail.Status; got == status {
					return j.Mail.Reason
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.t.Fatalf("mail to %s is %q, want %q", email, got, status)
	return ""
}

// auditLog returns the audit log.
func (p *proc) auditLog() string {
	p.t.Helper()
	var out struct{ Log string }
	if err := json.Unmarshal(p.must("GET", "/api/admin/log", nil, ""), &out); err != nil {
		p.t.Fatal(err)
	}
	return out.Log
}

// TestSIGKILLWithMailPendingSendsItOnce: the SMTP server is down, so the new judge's
// mail stays pending (nothing is claimed); the server is SIGKILLed, restarted with the
// SMTP server up, and the mail goes out exactly once.
func TestSIGKILLWithMailPendingSendsItOnce(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	p := startBinary(t, dir, "SMTP_HOST=127.0.0.1", "SMTP_PORT="+strconv.Itoa(down))
	p.must("POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com"}, "")
	p.awaitMailStatus("ada@example.com", "pending")
	p.kill()

	smtp := startBinSMTP(t, false)
	p2 := startBinary(t, dir, smtp.env()...)
	smtp.nextMailTo(t, "ada@example.com")
	p2.awaitMailStatus("ada@example.com", "sent")
	p2.must("POST", "/api/judge/new", map[string]any{"name": "Bob", "email": "bob@example.com"}, "")
	smtp.nextMailTo(t, "bob@example.com")
	if log := p2.auditLog(); strings.Count(log, "login code email sent to Ada <ada@example.com>") != 1 {
		t.Fatalf("audit log:\n%s", log)
	}
}

// TestSIGKILLDuringSendReportsUnknown: the server dies while the SMTP server holds the
// message (claimed, outcome not recorded). The restarted server does not send it again:
// it reports the outcome unknown in the audit log and on the judge list.
func TestSIGKILLDuringSendReportsUnknown(t *testing.T) {
	dir := t.TempDir()
	stuck := startBinSMTP(t, true)
	p := startBinary(t, dir, stuck.env()...)
	p.must("POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com"}, "")
	stuck.nextHeldTo(t, "ada@example.com")
	p.awaitMailStatus("ada@example.com", "sending")
	p.kill()

	smtp := startBinSMTP(t, false)
	p2 := startBinary(t, dir, smtp.env()...)
	if reason := p2.awaitMailStatus("ada@example.com", "unknown"); reason == "" {
		t.Error("no reason for the unknown outcome")
	}
	if log := p2.auditLog(); !strings.Contains(log, "login code email outcome unknown for Ada <ada@example.com>") {
		t.Fatalf("audit log:\n%s", log)
	}
	p2.must("POST", "/api/judge/new", map[string]any{"name": "Bob", "email": "bob@example.com"}, "")
	smtp.nextMailTo(t, "bob@example.com") // Ada's was not resent
}
