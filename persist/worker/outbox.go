package worker

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"net/textproto"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"podium/engine"
)

// How the outbox looks for work and how many mails it claims at once (one SMTP
// connection's worth), and its retry defaults: 5 attempts, retries after 5, 10, 20 and
// 40 s.
const (
	outboxPoll        = time.Second
	outboxBatch       = smtpMailsPerConn
	mailRecordTimeout = 10 * time.Second

	defaultMailAttempts = 5
	defaultMailBackoff  = 5 * time.Second
)

// OutboxNode is what the outbox needs from the node that owns the state.
type OutboxNode interface {
	Read(fn func(s *engine.State))
	Submit(ctx context.Context, actor engine.Actor, cmd engine.Command) (any, error)
	// Ready reports whether the node accepts changes.
	Ready() bool
}

// outboxLeader is implemented by nodes that can be cluster followers (persist.Node): the
// outbox works only while LeadsDuties is true (docs/behaviour.md#cluster). A node without it always leads.
type outboxLeader interface {
	LeadsDuties() bool
}

// Outbox sends the login-code emails and team-link emails recorded in the engine's
// state (engine/mail.go) from one worker goroutine, on the leader only. It claims mails through the log before
// sending them and records each outcome through the log, so a restart or a failover
// never sends a mail twice: mails claimed by an outbox that stopped leading are reported
// "unknown" instead of being sent again. Temporary failures are retried with
// exponential backoff (the mails go back to pending meanwhile, so they survive a
// restart); without SMTP_HOST each mail is recorded as skipped.
type Outbox struct {
	cfg       SMTPConfig
	publicURL string
	obs       MailObserver
	attempts  int           // tries per mail
	backoff   time.Duration // delay before the first retry, doubled before each further one
	node      OutboxNode
	log       zerolog.Logger
	tls       *tls.Config // base TLS settings (nil: system roots; tests trust their own certificate)

	claim string        // this outbox's claim while it leads ("" = not leading)
	owed  []*mailRecord // outcomes that could not be recorded yet (retried)
	kicks chan struct{} // work to do now
	quit  chan struct{} // closed by Stop
	done  chan struct{} // closed when the worker has returned
	once  sync.Once
}

// NewOutbox returns the outbox of node, sending through the SMTP server of cfg (none
// when cfg.Host is empty: mails are recorded as skipped) with links to publicURL; obs
// may be nil. Run starts its worker.
func NewOutbox(cfg SMTPConfig, publicURL string, obs MailObserver, node OutboxNode, log zerolog.Logger) *Outbox {
	if cfg.Port == 0 {
		cfg.Port = 587
	}
	if obs == nil {
		obs = nopMailObserver{}
	}
	return &Outbox{
		cfg: cfg, publicURL: publicURL, obs: obs, attempts: defaultMailAttempts, backoff: defaultMailBackoff, node: node,
		log:   log.With().Str("component", "outbox").Logger(),
		kicks: make(chan struct{}, 1),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
}

// Kick tells the worker there may be new mails; it never blocks.
func (o *Outbox) Kick() {
	select {
	case o.kicks <- struct{}{}:
	default:
	}
}

// Run is the worker: it works whenever kicked, and every outboxPoll for mails other
// nodes queued or a leadership it gained. It returns after Stop.
func (o *Outbox) Run() {
	defer close(o.done)
	tick := time.NewTicker(outboxPoll)
	defer tick.Stop()
	for {
		o.work()
		select {
		case <-o.quit:
			return
		case <-o.kicks:
		case <-tick.C:
		}
	}
}

// Stop ends the worker: a round under way finishes, mails waiting for a retry stay
// pending in the state. It waits for the worker until ctx ends.
func (o *Outbox) Stop(ctx context.Context) error {
	o.once.Do(func() { close(o.quit) })
	select {
	case <-o.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (o *Outbox) stopping() bool {
	select {
	case <-o.quit:
		return true
	default:
		return false
	}
}

// leads reports whether this node runs the outbox now; it picks a fresh claim when the
// node starts leading, so claims of any earlier leadership (this process's or another
// node's) count as another outbox's.
func (o *Outbox) leads() bool {
	if dl, ok := o.node.(outboxLeader); ok && !dl.LeadsDuties() {
		o.claim = ""
		return false
	}
	if o.claim == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		o.claim = hex.EncodeToString(b[:])
		o.log.Info().Str("claim", o.claim).Msg("outbox leads: sending emails (login codes, team links)")
	}
	return true
}

// work records owed outcomes, reports other outboxes' unconfirmed claims, and sends
// pending mails batch by batch until none are left or something stops it.
func (o *Outbox) work() {
	if o.payOwed(); len(o.owed) > 0 {
		return // nothing new while outcomes cannot be recorded
	}
	for !o.stopping() && o.node.Ready() && o.leads() {
		var w engine.MailWork
		o.node.Read(func(st *engine.State) { w = st.MailWork(o.claim, outboxBatch) })
		if len(w.Claimed) > 0 {
			o.log.Warn().Int("emails", len(w.Claimed)).Msg("emails claimed by an earlier leader were not confirmed: outcome unknown, not resent")
			if !o.reportUnknown(w.Claimed, "") {
				return
			}
		}
		if len(w.Pending) == 0 {
			return
		}
		var progress bool
		if o.cfg.Host == "" {
			progress = o.skip(w.Pending)
		} else {
			progress = o.deliver(w.Pending)
		}
		if !progress {
			return
		}
	}
}

// reportUnknown marks mails whose outcome is unknown: claimed by an outbox that no
// longer leads, or cut off after the message was handed over (docs/behaviour.md#cluster: never sent
// twice; the organiser sees them and can resend). reason "" is the engine's default.
func (o *Outbox) reportUnknown(claims map[engine.ID]string, reason string) bool {
	ids := make([]engine.ID, 0, len(claims))
	for id := range claims {
		ids = append(ids, id)
	}
	return o.record(&mailRecord{ids: ids, cmd: func(ids []engine.ID) engine.Command {
		m := make(map[engine.ID]string, len(ids))
		for _, id := range ids {
			m[id] = claims[id]
		}
		return &engine.ReportMailUnknown{Claims: m, Reason: reason}
	}, match: func(id engine.ID, m engine.LoginMail) bool {
		return m.Status == engine.MailSending && m.Claim == claims[id]
	}, done: func(ids []engine.ID) {
		for range ids {
			o.obs.EmailUnknown()
		}
	}})
}

// skip records pending mails as skipped (no SMTP server configured).
func (o *Outbox) skip(ids []engine.ID) bool {
	if !o.record(&mailRecord{ids: ids, cmd: func(ids []engine.ID) engine.Command { return &engine.EmailSkipped{Judges: ids} }, match: isPending}) {
		return false
	}
	for range ids {
		o.obs.EmailSkipped()
	}
	o.log.Info().Int("emails", len(ids)).Msg("emails skipped: SMTP is not configured")
	return true
}

func isPending(_ engine.ID, m engine.LoginMail) bool { return m.Status == engine.MailPending }

// deliver sends a batch of pending mails, retrying the ones that failed temporarily
// after 1, 2, 4, ... times the backoff. It reports whether it made progress (false: the
// outbox stopped leading, is stopping, or cannot record outcomes).
func (o *Outbox) deliver(ids []engine.ID) bool {
	for attempt := 1; len(ids) > 0; attempt++ {
		last := attempt >= o.attempts
		retry, ok := o.round(ids, attempt, last)
		if !ok || len(retry) == 0 || last {
			return ok
		}
		select {
		case <-time.After(o.backoff << (attempt - 1)):
		case <-o.quit:
			return false // the mails are pending again: sent after the restart
		}
		if !o.leads() {
			return false
		}
		ids = retry
	}
	return true
}

// round tries every mail once over one connection: it connects first (so no mail is
// claimed while the server is unreachable), claims the mails through the log, sends
// them and records the outcomes. It returns the mails that failed temporarily and are
// pending again for a retry; with last set they are recorded as failed instead.
func (o *Outbox) round(ids []engine.ID, attempt int, last bool) (retry []engine.ID, ok bool) {
	sess, err := o.dial()
	if err != nil {
		if !last && !permanentSMTP(err) {
			o.log.Warn().Err(err).Int("emails", len(ids)).Int("attempt", attempt).Msg("cannot reach the SMTP server; will retry")
			return ids, true
		}
		o.log.Error().Err(err).Int("emails", len(ids)).Int("attempt", attempt).Msg("emails failed: cannot reach the SMTP server")
		reason := err.Error()
		return nil, o.failed(ids, "", reason)
	}
	defer func() {
		if sess != nil {
			sess.close()
		}
	}()
	claim := o.claim
	var claimed []engine.ID
	rec := &mailRecord{ids: ids, cmd: func(ids []engine.ID) engine.Command {
		claimed = ids
		return &engine.ClaimMail{Judges: ids, Claim: claim}
	}, match: isPending}
	if !o.submit(rec) {
		// Not committed, or not known to be: nothing is sent. A claim that did commit
		// is reported unknown by the next leader, or released below by this one.
		o.releaseLater(claimed, claim)
		return nil, false
	}
	mails := o.mailsOf(claimed, claim)
	if len(mails) == 0 {
		return nil, false // the state moved on meanwhile: look again at the next tick
	}
	sent, retry, lastErr := o.sendMails(&sess, mails, claim, attempt)
	ok = true
	if len(sent) > 0 {
		ok = o.record(&mailRecord{ids: sent, cmd: func(ids []engine.ID) engine.Command {
			return &engine.RecordMailSent{Judges: ids, Claim: claim}
		}, match: claimedBy(claim)})
	}
	if len(retry) == 0 {
		return nil, ok
	}
	if last {
		o.log.Error().Err(lastErr).Int("emails", len(retry)).Int("attempt", attempt).Msg("emails failed; giving up")
		return nil, o.failed(retry, claim, lastErr.Error()) && ok
	}
	if !o.record(&mailRecord{ids: retry, cmd: func(ids []engine.ID) engine.Command {
		return &engine.ReleaseMail{Judges: ids, Claim: claim}
	}, match: sendingBy(claim)}) {
		return nil, false
	}
	return retry, ok
}

// sendMails sends the claimed mails over *sess, redialling after a dropped connection
// (the caller closes the last one), and records the mails refused for good or whose
// outcome is unknown. It returns the mails sent, the ones that failed temporarily and
// the last temporary error.
func (o *Outbox) sendMails(sess **smtpSession, mails []loginMail, claim string, attempt int) (sent, retry []engine.ID, lastErr error) {
	for i, m := range mails {
		if !o.stillClaimed(m.judge, claim) {
			continue // the judge was deleted (or the judges reset) meanwhile
		}
		if *sess == nil {
			var err error
			if *sess, err = o.dial(); err != nil {
				for _, rest := range mails[i:] {
					retry = append(retry, rest.judge)
				}
				return sent, retry, err
			}
		}
		msg := composeLoginMail(o.cfg, o.publicURL, m, time.Now())
		err := (*sess).send(senderAddress(o.cfg, o.publicURL), m.recipients(), msg)
		if err == nil {
			sent = append(sent, m.judge)
			o.obs.EmailSent()
			o.log.Info().Str(m.idField(), m.judge.String()).Int("attempt", attempt).Msg(m.what() + " sent")
			continue
		}
		// After a refusal the server is still talking: reset and go on; after anything
		// else the connection is dropped and the next mail redials.
		var te *textproto.Error
		if !errors.As(err, &te) || (*sess).c.Reset() != nil {
			(*sess).close()
			*sess = nil
		}
		var unknown *errOutcomeUnknown
		if errors.As(err, &unknown) {
			o.log.Error().Err(err).Str(m.idField(), m.judge.String()).Int("attempt", attempt).Msg(m.what() + " outcome unknown; not retried")
			o.reportUnknown(map[engine.ID]string{m.judge: claim}, "the connection to the SMTP server was lost after the message was handed over")
			continue
		}
		if permanentSMTP(err) {
			o.log.Error().Err(err).Str(m.idField(), m.judge.String()).Int("attempt", attempt).Msg(m.what() + " refused")
			o.failed([]engine.ID{m.judge}, claim, err.Error())
			continue
		}
		o.log.Warn().Err(err).Str(m.idField(), m.judge.String()).Int("attempt", attempt).Msg(m.what() + " failed")
		retry, lastErr = append(retry, m.judge), err
	}
	return sent, retry, lastErr
}

// failed records mails as failed (claim "": pending mails never claimed) and counts
// them.
func (o *Outbox) failed(ids []engine.ID, claim, reason string) bool {
	match := claimedBy(claim)
	if claim == "" {
		match = isPending
	}
	for range ids {
		o.obs.EmailFailed()
	}
	return o.record(&mailRecord{ids: ids, cmd: func(ids []engine.ID) engine.Command {
		return &engine.RecordMailFailed{Judges: ids, Claim: claim, Reason: reason}
	}, match: match})
}

// sendingBy matches mails claimed by claim and still being sent.
func sendingBy(claim string) func(engine.ID, engine.LoginMail) bool {
	return func(_ engine.ID, m engine.LoginMail) bool { return m.Status == engine.MailSending && m.Claim == claim }
}

// claimedBy matches mails claimed by claim, being sent or reported unknown since.
func claimedBy(claim string) func(engine.ID, engine.LoginMail) bool {
	return func(_ engine.ID, m engine.LoginMail) bool {
		return m.Claim == claim && (m.Status == engine.MailSending || m.Status == engine.MailUnknown)
	}
}

// releaseLater remembers claimed mails this outbox knows it did not send, for payOwed to
// put back to pending if their claim turns out to have committed.
func (o *Outbox) releaseLater(ids []engine.ID, claim string) {
	if len(ids) == 0 {
		return
	}
	o.owed = append(o.owed, &mailRecord{ids: ids, cmd: func(ids []engine.ID) engine.Command {
		return &engine.ReleaseMail{Judges: ids, Claim: claim}
	}, match: sendingBy(claim)})
}

// mailsOf reads the claimed mails from the state: the code, name and address are the
// judge's at this moment (a judge deleted meanwhile is left out); a team-link mail goes
// to the project's contact emails of this moment with its current link (a project
// deleted meanwhile is left out). A team-link mail that can no longer be composed (no
// address or link left) is recorded as failed.
func (o *Outbox) mailsOf(ids []engine.ID, claim string) []loginMail {
	out := make([]loginMail, 0, len(ids))
	var broken []engine.ID
	o.node.Read(func(st *engine.State) {
		event := st.Options.EventName
		for _, id := range ids {
			m, has := st.MailOf(id)
			if !has || m.Status != engine.MailSending || m.Claim != claim {
				continue
			}
			if p, ok := st.Projects[id]; ok {
				link := teamLink(m.Base, o.publicURL, p.TeamToken)
				if len(p.ContactEmails) == 0 || link == "" {
					broken = append(broken, id)
					continue
				}
				out = append(out, loginMail{judge: id, name: p.Name, event: event, team: true,
					to: append([]string{}, p.ContactEmails...), link: link})
				continue
			}
			if j, ok := st.Judges[id]; ok {
				out = append(out, loginMail{judge: id, name: j.Name, email: j.Email, code: j.Code, event: event})
			}
		}
	})
	if len(broken) > 0 {
		o.log.Error().Int("emails", len(broken)).Msg("team link emails failed: the project has no contact email or team link any more")
		o.failed(broken, claim, "the project has no contact email or team link any more")
	}
	return out
}

// stillClaimed reports whether judge id's mail is still claimed by claim.
func (o *Outbox) stillClaimed(id engine.ID, claim string) bool {
	ok := false
	o.node.Read(func(st *engine.State) {
		m, has := st.MailOf(id)
		ok = has && m.Status == engine.MailSending && m.Claim == claim
	})
	return ok
}

// mailRecord is a mail command for some judges. match says which judges it still
// applies to: the state may have moved on (a judge deleted, a mail resent) between
// reading it and submitting, and a mail command is all or nothing.
type mailRecord struct {
	ids   []engine.ID
	cmd   func(ids []engine.ID) engine.Command
	match func(id engine.ID, m engine.LoginMail) bool
	done  func(ids []engine.ID) // optional: called with the judges it was recorded for
}

// submit submits rec for the judges it still applies to, re-checking after a refusal.
// It reports false when the outcome is not known (no leader, storage failing): the
// command may or may not have been committed.
func (o *Outbox) submit(rec *mailRecord) bool {
	for try := 0; try < 3; try++ {
		ids := rec.ids[:0:0]
		o.node.Read(func(st *engine.State) {
			for _, id := range rec.ids {
				if m, ok := st.MailOf(id); ok && rec.match(id, m) {
					ids = append(ids, id)
				}
			}
		})
		if len(ids) == 0 {
			return true
		}
		cmd := rec.cmd(ids)
		ctx, cancel := context.WithTimeout(context.Background(), mailRecordTimeout)
		_, err := o.node.Submit(ctx, engine.System, cmd)
		cancel()
		if err == nil {
			if rec.done != nil {
				rec.done(ids)
			}
			return true
		}
		var ee *engine.Error
		if !errors.As(err, &ee) {
			o.log.Error().Err(err).Str("command", cmd.Kind()).Int("emails", len(ids)).Msg("cannot record email outcomes")
			return false
		}
		o.log.Warn().Err(err).Str("command", cmd.Kind()).Msg("emails changed meanwhile; checking again")
	}
	return true
}

// record submits rec, keeping it to retry later when its outcome is not known.
func (o *Outbox) record(rec *mailRecord) bool {
	if o.submit(rec) {
		return true
	}
	o.owed = append(o.owed, rec)
	return false
}

// payOwed retries the records that could not be submitted (on any node: a follower
// forwards them to the leader).
func (o *Outbox) payOwed() {
	owed := o.owed
	o.owed = nil
	for i, rec := range owed {
		if !o.submit(rec) {
			o.owed = append(o.owed, owed[i:]...)
			return
		}
	}
}
