package engine

import "strings"

func init() {
	register(func() Command { return &EmailSkipped{} })
}

// MailRecipient names the judge a login-code email was meant for (never the code).
type MailRecipient struct {
	Judge ID     `json:"judge"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// EmailSkipped records that login-code emails were not sent because no SMTP server is
// configured (docs/behaviour.md#email). The outbox submits it with Judges: their pending mails become
// skipped, with one audit line each (Judges may name projects: their team-link mails). Recipients is the older form kept for journals
// written before mails were part of the state: audit lines only. It never carries the
// login code.
type EmailSkipped struct {
	Judges     []ID            `json:"judges,omitempty"`
	Recipients []MailRecipient `json:"recipients,omitempty"`
	Reason     string          `json:"reason"`
}

// Kind implements Command.
func (*EmailSkipped) Kind() string { return "email.skipped" }

func (cmd *EmailSkipped) apply(s *State, c *Ctx) (any, error) {
	reason := mailReason(cmd.Reason, "SMTP is not configured")
	if len(cmd.Judges) > 0 || len(cmd.Recipients) == 0 {
		ids, err := s.mailTargets(cmd.Judges, "skipped", func(m LoginMail, has bool) bool { return has && m.Status == MailPending })
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			s.Mail[id] = LoginMail{Status: MailSkipped, At: c.Time, Reason: reason, Base: s.Mail[id].Base}
		}
		for _, id := range ids {
			if p, ok := s.Projects[id]; ok { // a team-link mail: never the link
				c.logf("team link email to %s (table %d) <%s> skipped: %s", p.Name, p.Location, strings.Join(p.ContactEmails, ", "), reason)
				continue
			}
			j := s.Judges[id]
			c.logf("login code email to %s <%s> skipped: %s", j.Name, j.Email, reason)
		}
		s.mailChanged(c, ids)
		return nil, nil
	}
	for _, r := range cmd.Recipients {
		c.logf("login code email to %s <%s> skipped: %s", r.Name, r.Email, reason)
	}
	return nil, nil
}
