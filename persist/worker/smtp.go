package worker

import (
	"crypto/tls"
	"errors"
	"net"
	"net/smtp"
	"net/textproto"
	"strconv"
	"time"
)

// SMTP limits: connection and per-mail timeouts, and how many mails go over one
// connection before it is renewed (many servers cap messages per connection).
const (
	smtpDialTimeout  = 10 * time.Second
	smtpMailTimeout  = 60 * time.Second
	smtpMailsPerConn = 100
)

// permanentSMTP reports whether err is a permanent SMTP refusal (5xx): retrying cannot
// help.
func permanentSMTP(err error) bool {
	var te *textproto.Error
	return errors.As(err, &te) && te.Code >= 500 && te.Code < 600
}

// smtpSession is one SMTP connection, reused for the mails of a round.
type smtpSession struct {
	conn net.Conn
	c    *smtp.Client
}

// dial connects to the SMTP server: implicit TLS on port 465, otherwise STARTTLS when the
// server offers it; PLAIN auth when a username is set (net/smtp refuses to send the
// password unencrypted except to localhost).
func (o *Outbox) dial() (*smtpSession, error) {
	addr := net.JoinHostPort(o.cfg.Host, strconv.Itoa(o.cfg.Port))
	d := &net.Dialer{Timeout: smtpDialTimeout}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.tls != nil {
		tlsCfg = o.tls.Clone()
	}
	tlsCfg.ServerName = o.cfg.Host
	if tlsCfg.MinVersion < tls.VersionTLS12 {
		tlsCfg.MinVersion = tls.VersionTLS12
	}
	var conn net.Conn
	var err error
	if o.cfg.Port == 465 {
		conn, err = tls.DialWithDialer(d, "tcp", addr, tlsCfg)
	} else {
		conn, err = d.Dial("tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(smtpMailTimeout))
	c, err := smtp.NewClient(conn, o.cfg.Host)
	if err != nil {
		conn.Close()
		return nil, err
	}
	sess := &smtpSession{conn: conn, c: c}
	if o.cfg.Port != 465 {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsCfg); err != nil {
				sess.close()
				return nil, err
			}
		}
	}
	if o.cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", o.cfg.Username, o.cfg.Password, o.cfg.Host)); err != nil {
			sess.close()
			return nil, err
		}
	}
	return sess, nil
}

// errOutcomeUnknown wraps an error that cut the connection after the whole message was
// handed over: the server may have accepted it, so it is not retried (at most once).
type errOutcomeUnknown struct{ err error }

func (e *errOutcomeUnknown) Error() string {
	return "connection lost after the message was sent, the server may have accepted it: " + e.err.Error()
}
func (e *errOutcomeUnknown) Unwrap() error { return e.err }

// send transmits one message to every address of to; a recipient the server refuses
// fails the whole message (nothing is sent).
func (ss *smtpSession) send(from string, to []string, msg []byte) error {
	_ = ss.conn.SetDeadline(time.Now().Add(smtpMailTimeout))
	if err := ss.c.Mail(from); err != nil {
		return err
	}
	for _, rcpt := range to {
		if err := ss.c.Rcpt(rcpt); err != nil {
			return err
		}
	}
	w, err := ss.c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		var te *textproto.Error
		if !errors.As(err, &te) {
			return &errOutcomeUnknown{err}
		}
		return err
	}
	return nil
}

// close ends the session politely when it can.
func (ss *smtpSession) close() {
	_ = ss.conn.SetDeadline(time.Now().Add(5 * time.Second))
	if err := ss.c.Quit(); err != nil {
		_ = ss.c.Close()
	}
}
