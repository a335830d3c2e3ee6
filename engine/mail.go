package engine

import (
	"bytes"
	"sort"
	"strings"
)

// Login-code mails in the replicated state (docs/behaviour.md#cluster, #email). A judge created with a mail
// requested gets a pending mail; the outbox on the leader claims mails through the log
// before it sends them and records the outcome through the log, so a restart or a
// failover never sends a mail twice. The record names the judge only: the login code,
// name and address are read from the judge when the mail is sent, and no record or
// audit line ever carries the code.
//
// A project's team-link mail (docs/behaviour.md#team-links-by-mail) lives in the same
// map under the project's id (ids of judges and projects never collide, Ctx.newID) and
// goes through the same states and commands: QueueTeamMails queues it, the outbox
// claims it, sends it to every contact address and records the outcome. Its record
// carries the link's base address, never the token: the outbox reads the project's
// current token when it sends, and no audit line ever carries it.

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
	// Base is a team-link mail's link base (PUBLIC_URL, or the address the organiser
	// used): the link is Base/team/<token>. Empty for login-code mails.
	Base string `json:"base,omitempty"`
}

// MailView is a judge's mail state on the admin's judge list.
type MailView struct {
	Status string `json:"status"`
	At     int64  `json:"at"`
	Reason string `json:"reason,omitempty"`
}

// MailWork is what the outbox has to do: pending mails (login codes in judge creation
// order, then team links by table) and mails claimed by an outbox other than the
// asking one.
type MailWork struct {
	Pending []ID
	Claimed map[ID]string // judge or project -> claim
}

// MailWork lists the pending mails (at most max: login codes in judge creation order,
// then team links by table) and the mails claimed by anyone but claim.
func (s *State) MailWork(claim string, max int) MailWork {
	var w MailWork
	if len(s.Mail) == 0 {
		return w
	}
	var teams []*Project
	for id, m := range s.Mail {
		if m.Status == MailSending && m.Claim != claim {
			if w.Claimed == nil {
				w.Claimed = map[ID]string{}
			}
			w.Claimed[id] = m.Claim
		}
		if m.Status == MailPending {
			if p, ok := s.Projects[id]; ok {
				teams = append(teams, p)
			}
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
	sort.Slice(teams, func(a, b int) bool {
		if teams[a].Location != teams[b].Location {
			return teams[a].Location < teams[b].Location
		}
		return bytes.Compare(teams[a].ID[:], teams[b].ID[:]) < 0
	})
	for _, p := range teams {
		if len(w.Pending) >= max {
			break
		}
		w.Pending = append(w.Pending, p.ID)
	}
	return w
}

// MailOf returns the state of judge id's login-code mail, or of project id's team-link
// mail.
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
		func() Command { return &QueueTeamMails{} },
	)
}

// mailTargets checks ids for a mail command: every id is a judge (login-code mail) or
// a project (team-link mail) that exists (404 otherwise) and its mail is in one of the
// states ok allows (409 otherwise). It returns the ids without duplicates; all or
// nothing.
func (s *State) mailTargets(ids []ID, what string, ok func(m LoginMail, has bool) bool) ([]ID, error) {
	if len(ids) == 0 {
		return nil, invalidf("no judges given")
	}
	known := make([]ID, 0, len(ids))
	seen := make(map[ID]bool, len(ids))
	for _, id := range ids {
		_, judge := s.Judges[id]
		_, project := s.Projects[id]
		if !judge && !project {
			return nil, notFoundf("judge %s not found", id)
		}
		if !seen[id] {
			seen[id] = true
			known = append(known, id)
		}
	}
	for _, id := range known {
		m, has := s.Mail[id]
		if !ok(m, has) {
			state := "no mail"
			if has {
				state = m.Status
			}
			return nil, conflictf("the %s cannot be %s: it is %s", s.mailName(id), what, state)
		}
	}
	return known, nil
}

// mailName names a mail in an error: "login code email of judge X" or "team link email
// of project X".
func (s *State) mailName(id ID) string {
	if p, ok := s.Projects[id]; ok {
		return "team link email of project " + p.Name
	}
	return "login code email of judge " + s.Judges[id].Name
}

// splitMails separates the ids of a mail command into judges and projects.
func (s *State) splitMails(ids []ID) (judges, projects []ID) {
	for _, id := range ids {
		if _, ok := s.Projects[id]; ok {
			projects = append(projects, id)
		} else {
			judges = append(judges, id)
		}
	}
	return judges, projects
}

// mailChanged tells admins which judges and projects a mail command changed.
func (s *State) mailChanged(c *Ctx, ids []ID) {
	judges, projects := s.splitMails(ids)
	if len(judges) > 0 {
		c.changed("judge", judges...)
	}
	if len(projects) > 0 {
		c.changed("project", projects...)
	}
}

// mailLog writes one audit line per mail (never a code or a team link: name and
// address only, a project by its name and table), or one summary line per kind when
// there are many. many and one are worded for login-code mails; team-link mails say
// "team link" instead.
func (s *State) mailLog(c *Ctx, ids []ID, many, one string, detail string) {
	judges, projects := s.splitMails(ids)
	if len(judges) > 10 {
		c.logf("%s %d judges%s", many, len(judges), detail)
	} else {
		for _, id := range judges {
			j := s.Judges[id]
			c.logf("%s %s <%s>%s", one, j.Name, j.Email, detail)
		}
	}
	many, one = strings.Replace(many, "login code", "team link", 1), strings.Replace(one, "login code", "team link", 1)
	if len(projects) > 10 {
		c.logf("%s %d projects%s", many, len(projects), detail)
		return
	}
	for _, id := range projects {
		p := s.Projects[id]
		c.logf("%s %s (table %d) <%s>%s", one, p.Name, p.Location, strings.Join(p.ContactEmails, ", "), detail)
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
	if _, err := s.knownJudges(cmd.Judges); err != nil {
		return nil, err // judges only: team-link mails are queued by QueueTeamMails
	}
	ids, err := s.mailTargets(cmd.Judges, "queued", func(m LoginMail, has bool) bool { return !has || m.Status != MailSending })
	if err != nil {
		return nil, err
	}
	s.queueMails(c, ids)
	s.mailLog(c, ids, "login code emails queued for", "login code email queued for", "")
	s.mailChanged(c, ids)
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
		s.Mail[id] = LoginMail{Status: MailSending, Claim: cmd.Claim, At: c.Time, Base: s.Mail[id].Base}
	}
	s.mailChanged(c, ids)
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
		s.Mail[id] = LoginMail{Status: MailSent, Claim: cmd.Claim, At: c.Time, Base: s.Mail[id].Base}
	}
	s.mailLog(c, ids, "login code emails sent to", "login code email sent to", "")
	s.mailChanged(c, ids)
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
		s.Mail[id] = LoginMail{Status: MailFailed, Claim: cmd.Claim, At: c.Time, Reason: reason, Base: s.Mail[id].Base}
	}
	s.mailLog(c, ids, "login code emails failed for", "login code email failed for", ": "+reason)
	s.mailChanged(c, ids)
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
		s.Mail[id] = LoginMail{Status: MailPending, At: c.Time, Base: s.Mail[id].Base}
	}
	s.mailChanged(c, ids)
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
			return nil, conflictf("the %s was claimed again", s.mailName(id))
		}
	}
	reason := mailReason(cmd.Reason, "the server sending it stopped before recording the outcome")
	judges, projects := s.splitMails(ids)
	for _, group := range []struct {
		ids    []ID
		reason string
	}{{judges, reason + "; resend it if the judge did not get it"}, {projects, reason + "; send it again if the team did not get it"}} {
		if len(group.ids) == 0 {
			continue
		}
		for _, id := range group.ids {
			s.Mail[id] = LoginMail{Status: MailUnknown, Claim: cmd.Claims[id], At: c.Time, Reason: group.reason, Base: s.Mail[id].Base}
		}
		s.mailLog(c, group.ids, "login code emails with unknown outcome for", "login code email outcome unknown for", ": "+group.reason)
	}
	s.mailChanged(c, ids)
	return nil, nil
}

// QueueTeamMails queues the team-link mail of every active project that has contact
// emails and a team link (POST /api/admin/team-links/send): again for a project whose
// mail went out before (a team that lost it), but not for one being sent right now.
// Base is the links' base address (docs/behaviour.md#team-links-by-mail).
type QueueTeamMails struct {
	Base string `json:"base"`
}

// TeamMailsQueued is the result of QueueTeamMails: how many mails were queued, and how
// many active projects were left out for having no contact email, no team link yet, or
// a mail being sent.
type TeamMailsQueued struct {
	Queued       int `json:"queued"`
	WithoutEmail int `json:"without_email"`
	WithoutLink  int `json:"without_link"`
	Sending      int `json:"sending"`
}

// Kind implements Command.
func (*QueueTeamMails) Kind() string { return "email.queue_team" }

func (cmd *QueueTeamMails) apply(s *State, c *Ctx) (any, error) {
	base := strings.TrimRight(strings.TrimSpace(cmd.Base), "/")
	if base == "" {
		return nil, invalidf("the team links' base address is required")
	}
	if err := checkURL("base", base); err != nil {
		return nil, err
	}
	var res TeamMailsQueued
	var ids []ID
	for _, p := range s.ProjectsByLocation() {
		switch {
		case !p.Active:
			continue
		case len(p.ContactEmails) == 0:
			res.WithoutEmail++
		case p.TeamToken == "":
			res.WithoutLink++
		case s.Mail[p.ID].Status == MailSending:
			res.Sending++
		default:
			ids = append(ids, p.ID)
		}
	}
	for _, id := range ids {
		s.Mail[id] = LoginMail{Status: MailPending, At: c.Time, Base: base}
	}
	res.Queued = len(ids)
	if len(ids) > 0 {
		s.mailLog(c, ids, "login code emails queued for", "login code email queued for", "")
		c.changed("project", ids...)
	} else {
		c.logf("no team link emails to queue")
	}
	if res.WithoutEmail > 0 {
		c.logf("team link emails not queued for %d projects without contact email", res.WithoutEmail)
	}
	return res, nil
}
