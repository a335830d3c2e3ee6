package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/smtp"
	"net/textproto"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"podium/engine"
)

// outboxCapacity bounds the queue (in batches: one batch per request that created
// judges). A full queue drops the new batch and reports it; it never blocks.
const outboxCapacity = 1024

// SMTP limits: connection and per-mail timeouts, and how many mails go over one
// connection before it is renewed (many servers cap messages per connection).
const (
	smtpDialTimeout  = 10 * time.Second
	smtpMailTimeout  = 60 * time.Second
	smtpMailsPerConn = 100
)

// outbox sends login-code emails from one worker goroutine: over SMTP with retries and
// exponential backoff, or, without SMTP_HOST, records each mail as skipped in the audit
// log (without the code).
type outbox struct {
	cfg       SMTPConfig
	publicURL string
	obs       MailObserver
	attempts  int
	backoff   time.Duration
	node      Node
	log       zerolog.Logger
	tls       *tls.Config // base TLS settings (nil: system roots)

	mu     sync.Mutex
	closed bool
	queue  chan []loginMail
	quit   chan struct{}
	done   chan struct{}
}

func newOutbox(cfg SMTPConfig, publicURL string, obs MailObserver, attempts int, backoff time.Duration, node Node, log zerolog.Logger) *outbox {
	if cfg.Port == 0 {
		cfg.Port = 587
	}
	return &outbox{
		cfg: cfg, publicURL: publicURL, obs: obs, attempts: attempts, backoff: backoff, node: node,
		log:   log.With().Str("component", "outbox").Logger(),
		queue: make(chan []loginMail, outboxCapacity),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
}

// enqueue hands a batch to the worker without ever blocking.
func (o *outbox) enqueue(batch []loginMail) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		o.drop(batch, "server is shutting down")
		return
	}
	select {
	case o.queue <- batch:
	default:
		o.drop(batch, "outbox is full")
	}
}

func (o *outbox) drop(batch []loginMail, why string) {
	for _, m := range batch {
		o.obs.EmailFailed()
		o.log.Error().Str("judge", m.judge.String()).Str("reason", why).Msg("login code email not sent")
	}
}

// run is the worker. After stop it gives every mail still queued one attempt and exits.
func (o *outbox) run() {
	defer close(o.done)
	for {
		select {
		case b := <-o.queue:
			o.deliver(b, true)
		case <-o.quit:
			for {
				select {
				case b := <-o.queue:
					o.deliver(b, false)
				default:
					return
				}
			}
		}
	}
}

// stop ends the worker (registered with onShutdown). It waits for the worker until ctx
// ends.
func (o *outbox) stop(ctx context.Context) error {
	o.mu.Lock()
	if !o.closed {
		o.closed = true
		close(o.quit)
	}
	o.mu.Unlock()
	select {
	case <-o.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deliver sends one batch: all mails in rounds over one SMTP connection, retrying the
// ones that failed temporarily after 1, 2, 4, ... times the backoff.
func (o *outbox) deliver(batch []loginMail, retry bool) {
	if o.cfg.Host == "" {
		o.skip(batch)
		return
	}
	pending := batch
	for attempt := 1; len(pending) > 0; attempt++ {
		last := !retry || attempt >= o.attempts
		pending = o.round(pending, attempt, last)
		if len(pending) == 0 || last {
			return
		}
		select {
		case <-time.After(o.backoff << (attempt - 1)):
		case <-o.quit:
			retry = false // one last attempt, then give up
		}
	}
}

// round tries every mail once over one connection. It returns the mails that failed
// temporarily and may be retried; with last set they are reported as failed instead.
func (o *outbox) round(batch []loginMail, attempt int, last bool) []loginMail {
	var retry []loginMail
	fail := func(m loginMail, err error, permanent bool) {
		if permanent || last {
			o.obs.EmailFailed()
			o.log.Error().Err(err).Str("judge", m.judge.String()).Int("attempt", attempt).Msg("login code email failed")
			return
		}
		o.log.Warn().Err(err).Str("judge", m.judge.String()).Int("attempt", attempt).Msg("login code email failed; will retry")
		retry = append(retry, m)
	}
	var sess *smtpSession
	sessMails := 0
	defer func() {
		if sess != nil {
			sess.close()
		}
	}()
	for i, m := range batch {
		if sess != nil && sessMails >= smtpMailsPerConn {
			sess.close()
			sess = nil
		}
		if sess == nil {
			sessMails = 0
			var err error
			if sess, err = o.dial(); err != nil {
				for _, rest := range batch[i:] {
					fail(rest, err, permanentSMTP(err))
				}
				return retry
			}
		}
		sessMails++
		msg := composeLoginMail(o.cfg, o.publicURL, m, time.Now())
		if err := sess.send(senderAddress(o.cfg, o.publicURL), m.email, msg); err != nil {
			// After a refusal the server is still talking: reset and go on; after
			// anything else the connection is dropped and the next mail redials.
			var te *textproto.Error
			if !errors.As(err, &te) || sess.c.Reset() != nil {
				sess.close()
				sess = nil
			}
			fail(m, err, permanentSMTP(err))
			continue
		}
		o.obs.EmailSent()
		o.log.Info().Str("judge", m.judge.String()).Int("attempt", attempt).Msg("login code email sent")
	}
	return retry
}

// permanentSMTP reports whether err is a permanent SMTP refusal (5xx): retrying cannot
// help.
func permanentSMTP(err error) bool {
	var te *textproto.Error
	return errors.As(err, &te) && te.Code >= 500 && te.Code < 600
}

// skip records the batch as skipped in the audit log (one command for the batch).
func (o *outbox) skip(batch []loginMail) {
	rec := make([]engine.MailRecipient, len(batch))
	for i, m := range batch {
		rec[i] = engine.MailRecipient{Judge: m.judge, Name: m.name, Email: m.email}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := o.node.Submit(ctx, engine.System, &engine.EmailSkipped{Recipients: rec}); err != nil {
		o.log.Error().Err(err).Int("emails", len(batch)).Msg("cannot record skipped login code emails")
	}
	for range batch {
		o.obs.EmailSkipped()
	}
	o.log.Info().Int("emails", len(batch)).Msg("login code emails skipped: SMTP is not configured")
}

// smtpSession is one SMTP connection, reused for the mails of a round.
type smtpSession struct {
	conn net.Conn
	c    *smtp.Client
}

// dial connects to the SMTP server: implicit TLS on port 465, otherwise STARTTLS when the
// server offers it; PLAIN auth when a username is set (net/smtp refuses to send the
// password unencrypted except to localhost).
func (o *outbox) dial() (*smtpSession, error) {
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

// send transmits one message.
func (ss *smtpSession) send(from, to string, msg []byte) error {
	_ = ss.conn.SetDeadline(time.Now().Add(smtpMailTimeout))
	if err := ss.c.Mail(from); err != nil {
		return err
	}
	if err := ss.c.Rcpt(to); err != nil {
		return err
	}
	w, err := ss.c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	return w.Close()
}

// close ends the session politely when it can.
func (ss *smtpSession) close() {
	_ = ss.conn.SetDeadline(time.Now().Add(5 * time.Second))
	if err := ss.c.Quit(); err != nil {
		_ = ss.c.Close()
	}
}
