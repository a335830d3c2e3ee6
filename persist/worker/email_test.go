package worker

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	smtpd "github.com/emersion/go-smtp"

	"podium/engine"
)

// mailCounter is a MailObserver that counts and signals each outcome.
type mailCounter struct {
	sent, failed, skipped, unknown atomic.Int64
	events                         chan string
}

func newMailCounter() *mailCounter { return &mailCounter{events: make(chan string, 100)} }

func (m *mailCounter) EmailSent()    { m.sent.Add(1); m.events <- "sent" }
func (m *mailCounter) EmailFailed()  { m.failed.Add(1); m.events <- "failed" }
func (m *mailCounter) EmailSkipped() { m.skipped.Add(1); m.events <- "skipped" }
func (m *mailCounter) EmailUnknown() { m.unknown.Add(1); m.events <- "unknown" }

// await waits for the next outcome (the test fails after 20 s without one).
func (m *mailCounter) await(t *testing.T) string {
	t.Helper()
	select {
	case ev := <-m.events:
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no email outcome reported")
		return ""
	}
}

// received is one message that reached the test SMTP server.
type received struct {
	from string
	to   []string
	data []byte
	user string
	tls  bool // the message came over a TLS connection
}

// smtpServer is a real SMTP server (go-smtp) on 127.0.0.1 for the tests.
type smtpServer struct {
	host string
	port int
	msgs chan received

	mu       sync.Mutex
	failNext int              // transient failures still to give
	failWith *smtpd.SMTPError // error for those failures
	attempts int              // DATA commands seen
	conns    int              // connections (sessions) opened
	refuse   string           // recipient refused with 550
	gate     chan struct{}    // when set, DATA waits for it
	drop     bool             // DATA reads the message, then drops the connection
	user     string           // required PLAIN user ("" = no auth)
	password string
	srv      *smtpd.Server
}

// startSMTP starts the server after applying the configuration functions.
func startSMTP(t *testing.T, configure ...func(*smtpServer)) *smtpServer {
	t.Helper()
	s := &smtpServer{msgs: make(chan received, 100)}
	srv := smtpd.NewServer(smtpd.BackendFunc(func(c *smtpd.Conn) (smtpd.Session, error) {
		s.mu.Lock()
		s.conns++
		s.mu.Unlock()
		return &smtpSessionT{srv: s, conn: c}, nil
	}))
	s.srv = srv
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	for _, f := range configure {
		f(s)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	s.host = "127.0.0.1"
	s.port = ln.Addr().(*net.TCPAddr).Port
	return s
}

// settings are the outbox's SMTP settings for this server.
func (s *smtpServer) settings() SMTPConfig {
	return SMTPConfig{Host: s.host, Port: s.port, From: "jury@example.com", FromName: "Hackathon Jury",
		Username: s.user, Password: s.password}
}

func (s *smtpServer) await(t *testing.T) received {
	t.Helper()
	select {
	case m := <-s.msgs:
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no email arrived")
		return received{}
	}
}

type smtpSessionT struct {
	srv  *smtpServer
	conn *smtpd.Conn
	from string
	to   []string
	user string
}

func (s *smtpSessionT) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSessionT) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != s.srv.user || password != s.srv.password {
			return errors.New("invalid username or password")
		}
		s.user = username
		return nil
	}), nil
}

func (s *smtpSessionT) Mail(from string, _ *smtpd.MailOptions) error {
	if s.srv.user != "" && s.user == "" {
		return smtpd.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *smtpSessionT) Rcpt(to string, _ *smtpd.RcptOptions) error {
	if s.srv.refuse != "" && to == s.srv.refuse {
		return &smtpd.SMTPError{Code: 550, EnhancedCode: smtpd.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *smtpSessionT) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.srv.mu.Lock()
	s.srv.attempts++
	gate := s.srv.gate
	if s.srv.drop {
		s.srv.mu.Unlock()
		_ = s.conn.Conn().Close()
		return errors.New("dropped")
	}
	if s.srv.failNext > 0 {
		s.srv.failNext--
		e := s.srv.failWith
		s.srv.mu.Unlock()
		return e
	}
	s.srv.mu.Unlock()
	if gate != nil {
		<-gate
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.srv.msgs <- received{from: s.from, to: s.to, data: b, user: s.user, tls: isTLS}
	return nil
}

func (s *smtpSessionT) Reset()        { s.from, s.to = "", nil }
func (s *smtpSessionT) Logout() error { return nil }

var errBusy = &smtpd.SMTPError{Code: 451, EnhancedCode: smtpd.EnhancedCode{4, 3, 0}, Message: "try again later"}

// parsedMail is the part of a received message the tests check.
type parsedMail struct {
	to, toName, from, fromName, subject, body string
}

func parseMail(t *testing.T, data []byte) parsedMail {
	t.Helper()
	m, err := mail.ReadMessage(strings.NewReader(string(data)))
	if err != nil {
		t.Fatalf("not an RFC 5322 message: %v\n%s", err, data)
	}
	to, err := mail.ParseAddress(m.Header.Get("To"))
	if err != nil {
		t.Fatalf("To: %v", err)
	}
	from, err := mail.ParseAddress(m.Header.Get("From"))
	if err != nil {
		t.Fatalf("From: %v", err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	if ct := m.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if m.Header.Get("Date") == "" || m.Header.Get("Message-Id") == "" {
		t.Errorf("missing Date or Message-ID: %v", m.Header)
	}
	var body io.Reader = m.Body
	if strings.EqualFold(m.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		body = quotedprintable.NewReader(m.Body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return parsedMail{to: to.Address, toName: to.Name, from: from.Address, fromName: from.Name, subject: subject, body: string(b)}
}

// TestEmailLoginCode: a new judge's mail carries the code and login link from the
// configured sender, over PLAIN auth; judges created without mail get none; the subject
// names the event; codes never reach the audit log.
func TestEmailLoginCode(t *testing.T) {
	smtp := startSMTP(t, func(s *smtpServer) { s.user, s.password = "mailer", "s3cret" })
	obs := newMailCounter()
	node := newOutboxTestNode(t)
	startOutbox(t, node, smtp, obs, 3, 10*time.Millisecond)

	node.addJudges(true, [2]string{"Ada Lövelace", "ada@example.com"})
	got := smtp.await(t)
	if ev := obs.await(t); ev != "sent" {
		t.Fatalf("outcome %s", ev)
	}
	code := node.loginCodeOf("ada@example.com")
	if got.from != "jury@example.com" || len(got.to) != 1 || got.to[0] != "ada@example.com" || got.user != "mailer" {
		t.Fatalf("envelope from %q to %q user %q", got.from, got.to, got.user)
	}
	m := parseMail(t, got.data)
	if m.to != "ada@example.com" || m.toName != "Ada Lövelace" || m.from != "jury@example.com" || m.fromName != "Hackathon Jury" {
		t.Errorf("headers %+v", m)
	}
	if m.subject != "Podium: your judging login code" {
		t.Errorf("subject %q, want the default event name in it", m.subject)
	}
	if !strings.Contains(m.body, code) || !strings.Contains(m.body, "https://podium.example.com/?code="+code) ||
		!strings.Contains(m.body, "Hello Ada Lövelace") {
		t.Errorf("body does not carry the code %s and link:\n%s", code, m.body)
	}

	// Judges created without mail get none; with it every new judge gets one. Mails go
	// out in order, so the next ones to arrive are the second batch's.
	node.addJudges(false, [2]string{"No Mail", "nomail@example.com"})
	node.addJudges(true, [2]string{"Bob", "bob@example.com"}, [2]string{"Cleo", "cleo@example.com"})
	for _, want := range []string{"bob@example.com", "cleo@example.com"} {
		got := smtp.await(t)
		m := parseMail(t, got.data)
		if got.to[0] != want || m.to != want || !strings.Contains(m.body, "?code="+node.loginCodeOf(want)) {
			t.Fatalf("mail to %q (%q), want %s", got.to, m.to, want)
		}
		obs.await(t)
	}
	// The subject names the event (options.event_name).
	name := "  Spring Hack ✨ 2026 "
	node.must(&engine.SetOptions{EventName: &name})
	node.addJudges(true, [2]string{"Dee", "dee@example.com"})
	got = smtp.await(t)
	dee := node.loginCodeOf("dee@example.com")
	if got.to[0] != "dee@example.com" || !strings.Contains(parseMail(t, got.data).body, dee) {
		t.Fatalf("mail to %q", got.to)
	}
	if sub := parseMail(t, got.data).subject; sub != "Spring Hack ✨ 2026: your judging login code" {
		t.Errorf("subject with event_name = %q", sub)
	}
	obs.await(t)
	if obs.sent.Load() != 4 || obs.failed.Load() != 0 || obs.skipped.Load() != 0 {
		t.Fatalf("sent %d failed %d skipped %d", obs.sent.Load(), obs.failed.Load(), obs.skipped.Load())
	}
	// Codes never reach the audit log.
	node.noCodesInAudit()
}

func TestEmailRetryDelivers(t *testing.T) {
	smtp := startSMTP(t, func(s *smtpServer) { s.failNext, s.failWith = 2, errBusy })
	obs := newMailCounter()
	node := newOutboxTestNode(t)
	startOutbox(t, node, smtp, obs, 4, 5*time.Millisecond)
	node.addJudges(true, [2]string{"Retry", "retry@example.com"})
	got := smtp.await(t)
	if ev := obs.await(t); ev != "sent" {
		t.Fatalf("outcome %s", ev)
	}
	smtp.mu.Lock()
	attempts := smtp.attempts
	smtp.mu.Unlock()
	if attempts != 3 {
		t.Fatalf("%d attempts, want 3 (two failures, then success)", attempts)
	}
	if got.to[0] != "retry@example.com" || !strings.Contains(parseMail(t, got.data).body, node.loginCodeOf("retry@example.com")) {
		t.Fatalf("retried mail %q", got.to)
	}
	if obs.sent.Load() != 1 || obs.failed.Load() != 0 {
		t.Fatalf("sent %d failed %d", obs.sent.Load(), obs.failed.Load())
	}
}

func TestEmailGivesUp(t *testing.T) {
	smtp := startSMTP(t)
	obs := newMailCounter()
	node := newOutboxTestNode(t)
	startOutbox(t, node, smtp, obs, 3, 5*time.Millisecond)

	// Temporary failures: tried 3 times, then reported failed.
	smtp.mu.Lock()
	smtp.failNext, smtp.failWith = 100, errBusy
	smtp.mu.Unlock()
	node.addJudges(true, [2]string{"Busy", "busy@example.com"})
	if ev := obs.await(t); ev != "failed" {
		t.Fatalf("outcome %s", ev)
	}
	smtp.mu.Lock()
	if smtp.attempts != 3 {
		t.Errorf("%d attempts, want 3", smtp.attempts)
	}
	// A permanent refusal (5xx) is not retried.
	smtp.attempts = 0
	smtp.failWith = &smtpd.SMTPError{Code: 550, EnhancedCode: smtpd.EnhancedCode{5, 1, 1}, Message: "no such user"}
	smtp.mu.Unlock()
	node.addJudges(true, [2]string{"Gone", "gone@example.com"})
	if ev := obs.await(t); ev != "failed" {
		t.Fatalf("outcome %s", ev)
	}
	smtp.mu.Lock()
	if smtp.attempts != 1 {
		t.Errorf("%d attempts for a permanent error, want 1", smtp.attempts)
	}
	smtp.mu.Unlock()
	// The server being down is a temporary failure too.
	node2 := newOutboxTestNode(t)
	down := &smtpServer{host: "127.0.0.1", port: closedSMTPPort(t)}
	startOutbox(t, node2, down, obs, 2, time.Millisecond)
	node2.addJudges(true, [2]string{"Down", "down@example.com"})
	if ev := obs.await(t); ev != "failed" {
		t.Fatalf("outcome %s", ev)
	}
}

// TestEmailSTARTTLS: a server that offers STARTTLS and accepts AUTH only over TLS gets
// the credentials and the mail over TLS.
func TestEmailSTARTTLS(t *testing.T) {
	cert, pool := selfSignedCert(t)
	smtp := startSMTP(t, func(s *smtpServer) {
		s.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		s.srv.AllowInsecureAuth = false
		s.user, s.password = "mailer", "s3cret"
	})
	obs := newMailCounter()
	node := newOutboxTestNode(t)
	startOutbox(t, node, smtp, obs, 2, time.Millisecond, func(o *Outbox) { o.tls = &tls.Config{RootCAs: pool} })
	node.addJudges(true, [2]string{"Tls", "tls@example.com"})
	got := smtp.await(t)
	if !got.tls || got.user != "mailer" || got.to[0] != "tls@example.com" {
		t.Fatalf("tls %v user %q to %q", got.tls, got.user, got.to)
	}
	if ev := obs.await(t); ev != "sent" {
		t.Fatalf("outcome %s", ev)
	}
	// A certificate the client does not trust: nothing is sent.
	node2 := newOutboxTestNode(t)
	startOutbox(t, node2, smtp, obs, 1, time.Millisecond)
	node2.addJudges(true, [2]string{"Untrusted", "untrusted@example.com"})
	if ev := obs.await(t); ev != "failed" {
		t.Fatalf("outcome with an untrusted certificate: %s", ev)
	}
}

// selfSignedCert makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSignedCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// TestEmailBatchOverFewConnections: a 150-judge import goes out over two connections
// (renewed after 100 mails), every judge getting its own code; a refused recipient in
// the middle does not stop the others.
func TestEmailBatchOverFewConnections(t *testing.T) {
	smtp := startSMTP(t, func(s *smtpServer) { s.refuse = "judge75@example.com" })
	obs := newMailCounter()
	obs.events = make(chan string, 200)
	node := newOutboxTestNode(t)
	startOutbox(t, node, smtp, obs, 1, time.Millisecond)
	var judges [][2]string
	for i := 0; i < 150; i++ {
		judges = append(judges, [2]string{fmt.Sprintf("Judge %d", i), fmt.Sprintf("judge%d@example.com", i)})
	}
	node.addJudges(true, judges...) // as one CSV import
	codes := map[string]string{}
	for _, j := range judges {
		codes[j[1]] = node.loginCodeOf(j[1])
	}
	for i := 0; i < 150; i++ {
		if i == 75 {
			continue
		}
		got := smtp.await(t)
		want := fmt.Sprintf("judge%d@example.com", i)
		if got.to[0] != want || !strings.Contains(parseMail(t, got.data).body, "    "+codes[want]+"\r\n") {
			t.Fatalf("mail %d to %q, want %s with its code", i, got.to, want)
		}
	}
	for i := 0; i < 150; i++ {
		obs.await(t)
	}
	smtp.mu.Lock()
	conns := smtp.conns
	smtp.mu.Unlock()
	if conns != 2 || obs.sent.Load() != 149 || obs.failed.Load() != 1 {
		t.Fatalf("%d connections, %d sent, %d failed", conns, obs.sent.Load(), obs.failed.Load())
	}
}

// closedSMTPPort returns a loopback port nothing listens on.
func closedSMTPPort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return p
}

// TestEmailNeverBlocksRequests holds the SMTP server inside DATA: commands that create
// judges (what requests submit) still go through while the worker waits.
func TestEmailNeverBlocksRequests(t *testing.T) {
	smtp := startSMTP(t, func(s *smtpServer) { s.gate = make(chan struct{}) })
	obs := newMailCounter()
	node := newOutboxTestNode(t)
	startOutbox(t, node, smtp, obs, 2, time.Millisecond)
	node.addJudges(true, [2]string{"First", "first@example.com"})
	// Wait until the worker is stuck in DATA.
	for i := 0; ; i++ {
		smtp.mu.Lock()
		n := smtp.attempts
		smtp.mu.Unlock()
		if n > 0 {
			break
		}
		if i > 2000 {
			t.Fatal("the worker never reached DATA")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i, email := range []string{"second@example.com", "third@example.com"} {
		node.addJudges(true, [2]string{"N" + string(rune('a'+i)), email})
	}
	node.addJudges(true, [2]string{"Fourth", "fourth@example.com"})
	close(smtp.gate)
	for _, want := range []string{"first@example.com", "second@example.com", "third@example.com", "fourth@example.com"} {
		if got := smtp.await(t); got.to[0] != want {
			t.Fatalf("mail to %q, want %s", got.to, want)
		}
	}
}

// TestEmailSkippedWithoutSMTP: without SMTP_HOST each mail is recorded as skipped, with
// an audit line that names the judge but not the code.
func TestEmailSkippedWithoutSMTP(t *testing.T) {
	obs := newMailCounter()
	node := newOutboxTestNode(t)
	startOutbox(t, node, nil, obs, 3, time.Millisecond)
	node.addJudges(true, [2]string{"Ada", "ada@example.com"})
	node.addJudges(true, [2]string{"Bob", "bob@example.com"}, [2]string{"Cleo", "cleo@example.com"})
	for i := 0; i < 3; i++ {
		if ev := obs.await(t); ev != "skipped" {
			t.Fatalf("outcome %s", ev)
		}
	}
	codes := map[string]string{}
	for _, email := range []string{"ada@example.com", "bob@example.com", "cleo@example.com"} {
		codes[email] = node.loginCodeOf(email)
	}
	// The audit lines are written by a journaled command: wait for it.
	var lines []string
	for i := 0; ; i++ {
		lines = lines[:0]
		node.Read(func(st *engine.State) {
			for _, l := range st.Log {
				if strings.Contains(l, "skipped") {
					lines = append(lines, l)
				}
			}
		})
		if len(lines) == 3 || i > 2000 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(lines) != 3 {
		t.Fatalf("skipped lines %q", lines)
	}
	for i, email := range []string{"ada@example.com", "bob@example.com", "cleo@example.com"} {
		if !strings.Contains(lines[i], "<"+email+">") || !strings.Contains(lines[i], "SMTP is not configured") {
			t.Errorf("line %q does not name %s", lines[i], email)
		}
		if strings.Contains(lines[i], codes[email]) {
			t.Errorf("line %q carries the login code", lines[i])
		}
	}
	// Judges created without mail (noSend): nothing recorded.
	node.addJudges(false, [2]string{"Dan", "dan@example.com"})
	node.addJudges(false, [2]string{"Eve", "eve@example.com"})
	node.addJudges(true, [2]string{"Fay", "fay@example.com"})
	obs.await(t)
	if obs.skipped.Load() != 4 {
		t.Fatalf("skipped %d, want 4 (Dan and Eve asked for no mail)", obs.skipped.Load())
	}
}
