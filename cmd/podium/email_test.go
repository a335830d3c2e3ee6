package main

import (
	"io"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"testing"
	"time"

	smtpd "github.com/emersion/go-smtp"
)

// TestBinaryMailsLoginCode runs the real binary configured by SMTP_* and PUBLIC_URL
// environment variables against an SMTP server inside the test: the new judge's mail
// arrives with its code and login link, and /metrics counts it as sent.
func TestBinaryMailsLoginCode(t *testing.T) {
	type msg struct {
		from string
		to   []string
		data []byte
	}
	msgs := make(chan msg, 10)
	srv := smtpd.NewServer(smtpd.BackendFunc(func(*smtpd.Conn) (smtpd.Session, error) {
		return &binSMTPSession{deliver: func(from string, to []string, data []byte) { msgs <- msg{from, to, data} }}, nil
	}))
	srv.Domain = "localhost"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	port := ln.Addr().(*net.TCPAddr).Port

	p := startBinary(t, t.TempDir(), "SMTP_HOST=127.0.0.1", "SMTP_PORT="+strconv.Itoa(port),
		"EMAIL_FROM=jury@example.com", "EMAIL_FROM_NAME=Expo Jury", "PUBLIC_URL=http://podium.example.com")
	p.must("POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com"}, "")
	var got msg
	select {
	case got = <-msgs:
	case <-time.After(30 * time.Second):
		t.Fatal("no mail arrived")
	}
	list := string(p.must("GET", "/api/judge/list", nil, ""))
	i := strings.Index(list, `"code":"`)
	code := list[i+8 : i+16]
	m, err := mail.ReadMessage(strings.NewReader(string(got.data)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(m.Body)
	if got.from != "jury@example.com" || len(got.to) != 1 || got.to[0] != "ada@example.com" ||
		!strings.Contains(m.Header.Get("From"), "Expo Jury") ||
		!strings.Contains(string(body), "http://podium.example.com/?code=3D"+code) { // quoted-printable "="
		t.Fatalf("mail from %q to %q:\n%s", got.from, got.to, got.data)
	}
	for i := 0; ; i++ {
		_, b, err := p.req("GET", "/metrics", nil, "")
		if err == nil && strings.Contains(string(b), `podium_emails_total{result="sent"} 1`) {
			break
		}
		if i > 300 {
			t.Fatalf("podium_emails_total{result=\"sent\"} not 1:\n%s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type binSMTPSession struct {
	deliver func(from string, to []string, data []byte)
	from    string
	to      []string
}

func (s *binSMTPSession) Mail(from string, _ *smtpd.MailOptions) error { s.from = from; return nil }
func (s *binSMTPSession) Rcpt(to string, _ *smtpd.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}
func (s *binSMTPSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.deliver(s.from, s.to, b)
	return nil
}
func (s *binSMTPSession) Reset()        { s.from, s.to = "", nil }
func (s *binSMTPSession) Logout() error { return nil }
