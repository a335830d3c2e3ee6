package engine

func init() {
	register(func() Command { return &EmailSkipped{} })
}

// MailRecipient names the judge a login-code email was meant for (never the code).
type MailRecipient struct {
	Judge ID     `json:"judge"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// EmailSkipped records in the audit log that login-code emails were not sent because no
// SMTP server is configured (SPEC §10). It changes nothing else. The outbox submits it;
// it never carries the login code.
type EmailSkipped struct {
	Recipients []MailRecipient `json:"recipients"`
	Reason     string          `json:"reason"`
}

// Kind implements Command.
func (*EmailSkipped) Kind() string { return "email.skipped" }

func (cmd *EmailSkipped) apply(s *State, c *Ctx) (any, error) {
	if len(cmd.Recipients) == 0 {
		return nil, invalidf("no recipients given")
	}
	reason := cmd.Reason
	if reason == "" {
		reason = "SMTP is not configured"
	}
	for _, r := range cmd.Recipients {
		c.logf("login code email to %s <%s> skipped: %s", r.Name, r.Email, reason)
	}
	return nil, nil
}
