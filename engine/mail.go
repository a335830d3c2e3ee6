package engine

import (
	"sort"
	"strings"
)

// Login-code mails in the replicated state (docs/behaviour.md#cluster, #email). A judge created with a mail
// requested gets a pending mail; the outbox on the leader claims mails through the log
// before it sends them and records the outcome through the log, so a restart or a
// failover never sends a mail twice. The record names the judge only: the login code,
// name and address are read from the judge when the mail is sent, and no record or
// audit line ever carries the code.

// The states of a login-code mail.
const (
	MailPending = "pending" // waiting for the outbox
	MailSending = "sending" // claimed by an outbox, outcome not recorded yet
	MailSent    = "sent"
	MailFailed  = "failed"  // retries exhausted or refused by the SMTP server
	MailUnknown = "unknown" // claimed by an outbox that stopped leading before recording the outcome
	MailSkipped = "skipped" // no SMTP server configured
)

// LoginMail is the state of one judge's login-code mail.
type LoginMail struct {
	Status string `json:"status"`
	// Claim names the outbox that claimed the mail (while sending, and kept after).
	Claim string `json:"claim,omitempty"`
	// At is the time (ms) of the last change.
	At int64 `json:"at"`
	// Reason says why the mail failed, was skipped or has an unknown outcome.
	Reason string `json:"reason,omitempty"`
}

// MailView is a judge's mail state on the admin's judge list.
type MailView struct {
	Status string `json:"status"`
	At     int64  `json:"at"`
	Reason string `json:"reason,omitempty"`
}

// MailWork is what the outbox has to do: pending mails (in judge creation order) and
// mails claimed by an outbox other than the asking one.
type MailWork struct {
	Pending []ID
	Claimed map[ID]string // judge -> claim
}

// MailWork lists the pending mails (at most max, in creation order) and the mails
// claimed by anyone but claim.
func (s *State) MailWork(claim string, max int) MailWork {
	var w MailWork
	if len(s.Mail) == 0 {
		return w
	}
	for id, m := range s.Mail {
		if m.Status == MailSending && m.Claim != claim {
			if w.Claimed == nil {
				w.Claimed = map[ID]string{}
			}
			w.Claimed[id] = m.Claim
		}
	}
	for _, id := range s.JudgeOrder {
		if len(w.Pending) >= max {
			break
		}
		if m, ok := s.Mail[id]; ok && m.Status == MailPending {
			w.Pending = append(w.Pending, id)
		}
	}
	return w
}

// MailOf returns the state of judge id's login-code mail.
func (s *State) MailOf(id ID) (LoginMail, bool) {
	m, ok := s.Mail[id]
	return m, ok
}

// MailViewOf is the admin list's view of judge id's mail (nil: none was ever requested).
func (s *State) MailViewOf(id ID) *MailView {
	m, ok := s.Mail[id]
	if !ok {
		return nil
	}
	return &MailView{Status: m.Status, At: m.At, Reason: m.Reason}
}

// queueMails records pending mails for the judges (they exist).
func (s *State) queueMails(c *Ctx, ids []ID) {
	for _, id := range ids {
		s.Mail[id] = LoginMail{Status: MailPending, At: c.Time}
	}
}

func init() {
	register(
		func() Command { return &QueueMail{} },
		func() Command { return &ClaimMail{} },
		func() Command { return &RecordMailSent{} },
		func() Command { return &RecordMailFailed{} },
		func() Command { return &ReleaseMail{} },
		func() Command { return &ReportMailUnknown{} },
	)
}

// mailTargets checks ids for a mail command: every judge exists (404 otherwise) and its
// mail is in one of the states ok allows (409 otherwise). It returns the ids without
// duplicates; all or nothing.
func (s *State) mailTargets(ids []ID, what string, ok func(m LoginMail, has bool) bool) ([]ID, error) {
	if len(ids) == 0 {
		return nil, invalidf("no judges given")
	}
	known, err := s.knownJudges(ids)
	if err != nil {
		return nil, err
	}
	for _, id := range known {
		m, has := s.Mail[id]
		if !ok(m, has) {
			state := "no mail"
			if has {
				state = m.Status
			}
			return nil, conflictf("the login code email of judge %s cannot be %s: it is %s", s.Judges[id].Name, what, state)
		}
	}
	return known, nil
}

// mailLog writes one audit line per judge (the code never appears: name and address
// only), or one summary line when there are many.
func (s *State) mailLog(c *Ctx, ids []ID, many, one string, detail string) {
	if len(ids) > 10 {
		c.logf("%s %d judges%s", many, len(ids), detail)
		return
	}
	for _, id := range ids {
		j := s.Judges[id]
		c.logf("%s %s <%s>%s", one, j.Name, j.Email, detail)
	}
}

// QueueMail (re)queues the login-code mail of judges: the organiser's "resend". A mail
// being sent right now cannot be queued again (409): its outcome is not known yet.
type QueueMail struct {
	Judges []ID `json:"judges"`
}

// Kind implements Command.
func (*QueueMail) Kind() string { return "email.queue" }

func (cmd *QueueMail) apply(s *State, c *Ctx) (any, error) {
	ids, err := s.mailTargets(cmd.Judges, "queued", func(m LoginMail, has bool) bool { return !has || m.Status != MailSending })
	if err != nil {
		return nil, err
	}
	s.queueMails(c, ids)
	s.mailLog(c, ids, "login code emails queued for", "login code email queued for", "")
	c.changed("judge", ids...)
	return nil, nil
}

// ClaimMail marks pending mails as being sent by the outbox named Claim. The outbox
// sends a mail only after its claim is committed, so no two outboxes ever send the same
// mail (at most once).
type ClaimMail struct {
	Judges []ID   `json:"judges"`
	Claim  string `json:"claim"`
}

// Kind implements Command.
func (*ClaimMail) Kind() string { return "email.claim" }

func (cmd *ClaimMail) apply(s *State, c *Ctx) (any, error) {
	if strings.TrimSpace(cmd.Claim) == "" {
		return nil, invalidf("claim is required")
	}
	ids, err := s.mailTargets(cmd.Judges, "claimed", func(m LoginMail, has bool) bool { return has && m.Status == MailPending })
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		s.Mail[id] = LoginMail{Status: MailSending, Claim: cmd.Claim, At: c.Time}
	}
	c.changed("judge", ids...)
	return nil, nil
}

// claimedBy accepts a mail claimed by claim, still sending or reported unknown since.
func claimedBy(claim string) func(LoginMail, bool) bool {
	return func(m LoginMail, has bool) bool {
		return has && m.Claim == claim && (m.Status == MailSending || m.Status == MailUnknown)
	}
}

// RecordMailSent records that the outbox named Claim sent the judges' mails. A mail
// reported unknown meanwhile (its outbox lost the lead) becomes sent too.
type RecordMailSent struct {
	Judges []ID   `json:"judges"`
	Claim  string `json:"claim"`
}

// Kind implements Command.
func (*RecordMailSent) Kind() string { return "email.sent" }

func (cmd *RecordMailSent) apply(s *State, c *Ctx) (any, error) {
	ids, err := s.mailTargets(cmd.Judges, "recorded as sent", claimedBy(cmd.Claim))
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		s.Mail[id] = LoginMail{Status: MailSent, Claim: cmd.Claim, At: c.Time}
	}
	s.mailLog(c, ids, "login code emails sent to", "login code email sent to", "")
	c.changed("judge", ids...)
	return nil, nil
}

// RecordMailFailed records that the judges' mails could not be sent. With a Claim the mails
// are the ones that outbox claimed; without one they are pending mails the outbox gave
// up on before claiming them (the SMTP server could not be reached).
type RecordMailFailed struct {
	Judges []ID   `json:"judges"`
	Claim  string `json:"claim,omitempty"`
	Reason string `json:"reason"`
}

// Kind implements Command.
func (*RecordMailFailed) Kind() string { return "email.failed" }

func (cmd *RecordMailFailed) apply(s *State, c *Ctx) (any, error) {
	ok := claimedBy(cmd.Claim)
	if cmd.Claim == "" {
		ok = func(m LoginMail, has bool) bool { return has && m.Status == MailPending }
	}
	ids, err := s.mailTargets(cmd.Judges, "recorded as failed", ok)
	if err != nil {
		return nil, err
	}
	reason := mailReason(cmd.Reason, "delivery failed")
	for _, id := range ids {
		s.Mail[id] = LoginMail{Status: MailFailed, Claim: cmd.Claim, At: c.Time, Reason: reason}
	}
	s.mailLog(c, ids, "login code emails failed for", "login code email failed for", ": "+reason)
	c.changed("judge", ids...)
	return nil, nil
}

// mailReason bounds a reason from an SMTP server for the state and the audit log.
func mailReason(r, fallback string) string {
	r = strings.TrimSpace(logLineBreaks.Replace(r))
	if r == "" {
		return fallback
	}
	if len(r) > 300 {
		r = strings.ToValidUTF8(r[:300], "") + "…"
	}
	return r
}

// ReleaseMail puts mails the outbox named Claim claimed back to pending: it did not
// send them (a temporary SMTP failure before the message was accepted; they are retried).
type ReleaseMail struct {
	Judges []ID   `json:"judges"`
	Claim  string `json:"claim"`
}

// Kind implements Command.
func (*ReleaseMail) Kind() string { return "email.release" }

func (cmd *ReleaseMail) apply(s *State, c *Ctx) (any, error) {
	ids, err := s.mailTargets(cmd.Judges, "released", func(m LoginMail, has bool) bool {
		return has && m.Claim == cmd.Claim && m.Status == MailSending
	})
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		s.Mail[id] = LoginMail{Status: MailPending, At: c.Time}
	}
	c.changed("judge", ids...)
	return nil, nil
}

// ReportMailUnknown marks mails whose outbox stopped leading (a restart, a failover) before
// it recorded their outcome, or lost the connection after handing the message over.
// They are not sent again on their own: the mail may have gone out, and a second one is
// worse than asking the organiser, who sees the state on the dashboard and can resend.
// Claims maps each judge to the claim that was seen, so a mail claimed again meanwhile
// is not touched (409).
type ReportMailUnknown struct {
	Claims map[ID]string `json:"claims"`
	Reason string        `json:"reason,omitempty"`
}

// Kind implements Command.
func (*ReportMailUnknown) Kind() string { return "email.unknown" }

func (cmd *ReportMailUnknown) apply(s *State, c *Ctx) (any, error) {
	ids := make([]ID, 0, len(cmd.Claims))
	for id := range cmd.Claims {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a].String() < ids[b].String() })
	ids, err := s.mailTargets(ids, "reported unknown", func(m LoginMail, has bool) bool { return has && m.Status == MailSending })
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if s.Mail[id].Claim != cmd.Claims[id] {
			return nil, conflictf("the login code email of judge %s was claimed again", s.Judges[id].Name)
		}
	}
	reason := mailReason(cmd.Reason, "the server sending it stopped before recording the outcome") + "; resend it if the judge did not get it"
	for _, id := range ids {
		s.Mail[id] = LoginMail{Status: MailUnknown, Claim: cmd.Claims[id], At: c.Time, Reason: reason}
	}
	s.mailLog(c, ids, "login code emails with unknown outcome for", "login code email outcome unknown for", ": "+reason)
	c.changed("judge", ids...)
	return nil, nil
}
