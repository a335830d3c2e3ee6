package worker

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode"

	"podium/engine"
)

// Judge emails (docs/behaviour.md#email). Requests record mails in the state (CreateJudges.Mail,
// QueueMail); the outbox (outbox.go) sends them from its own goroutine on the leader;
// nothing here blocks a request or the engine.

// SMTPConfig holds the mail settings of docs/behaviour.md#email.
type SMTPConfig struct {
	Host     string
	Port     int // 587 when 0
	Username string
	Password string
	From     string
	FromName string
}

// MailObserver is told what happened to each login-code email (implemented by the
// metrics package as podium_emails_total{result}).
type MailObserver interface {
	EmailSent()
	EmailFailed()
	EmailSkipped()
	// EmailUnknown: claimed by an outbox that stopped leading before it recorded the
	// outcome; not sent again on its own (docs/behaviour.md#cluster).
	EmailUnknown()
}

type nopMailObserver struct{}

func (nopMailObserver) EmailSent()    {}
func (nopMailObserver) EmailFailed()  {}
func (nopMailObserver) EmailSkipped() {}
func (nopMailObserver) EmailUnknown() {}

// loginMail is one email being sent: a judge's login code, or a project's team link
// (team set). It is read from the state when the mail is sent; the code and the link
// live only here, never in a record or a log line.
type loginMail struct {
	judge engine.ID // the judge, or the project of a team-link mail
	name  string    // the judge's or the project's name
	email string    // the judge's address
	code  string
	event string // options.event_name (the subject names it)

	team bool     // a team-link mail (docs/behaviour.md#team-links-by-mail)
	to   []string // a team-link mail's recipients: the project's contact emails
	link string   // a team-link mail's link, <base>/team/<token>
}

// recipients are the mail's envelope recipients.
func (m loginMail) recipients() []string {
	if m.team {
		return m.to
	}
	return []string{m.email}
}

// what names the mail in log lines.
func (m loginMail) what() string {
	if m.team {
		return "team link email"
	}
	return "login code email"
}

// idField is the log field naming the mail's judge or project.
func (m loginMail) idField() string {
	if m.team {
		return "project"
	}
	return "judge"
}

// teamLink is the team page's link in a team-link mail: <base>/team/<token>, base being
// the one the organiser's request recorded, else PUBLIC_URL.
func teamLink(base, publicURL, token string) string {
	base = strings.TrimRight(base, "/")
	if base == "" {
		base = strings.TrimRight(publicURL, "/")
	}
	if base == "" || token == "" {
		return ""
	}
	return base + "/team/" + token
}

// teamMailSubject is the subject of a team-link mail: "<event_name>: <project>'s team
// page" (control characters removed).
func teamMailSubject(event, project string) string {
	event = strings.TrimSpace(headerText(event))
	if event == "" {
		event = engine.DefaultEventName
	}
	return event + ": the team page of " + strings.TrimSpace(headerText(project))
}

// loginLink is the link in the email: the judge app with the code filled in
// (<PUBLIC_URL>/?code=<code>). Without PUBLIC_URL there is no link.
func loginLink(publicURL, code string) string {
	base := strings.TrimRight(publicURL, "/")
	if base == "" {
		return ""
	}
	return base + "/?code=" + url.QueryEscape(code)
}

// mailSubject is the subject of the login-code email: "<event_name>: your judging login
// code" (control characters removed; "Podium" when the name is empty).
func mailSubject(event string) string {
	event = strings.TrimSpace(headerText(event))
	if event == "" {
		event = engine.DefaultEventName
	}
	return event + ": your judging login code"
}

// senderAddress is EMAIL_FROM, else SMTP_USERNAME when it is an address, else
// podium@<host of PUBLIC_URL or localhost>.
func senderAddress(cfg SMTPConfig, publicURL string) string {
	if cfg.From != "" {
		return cfg.From
	}
	if engine.ValidEmail(cfg.Username) {
		return cfg.Username
	}
	host := "localhost"
	if u, err := url.Parse(publicURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return "podium@" + host
}

// headerText removes control characters (line breaks included) from text that goes into
// a header, so a judge's name cannot add headers.
func headerText(v string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, v)
}

// composeLoginMail builds the RFC 5322 message for m, a login-code or team-link email
// (CRLF line ends, UTF-8 body in quoted-printable).
func composeLoginMail(cfg SMTPConfig, publicURL string, m loginMail, now time.Time) []byte {
	fromName := cfg.FromName
	if fromName == "" {
		fromName = "Podium"
	}
	from := mail.Address{Name: headerText(fromName), Address: senderAddress(cfg, publicURL)}
	to := (&mail.Address{Name: headerText(m.name), Address: m.email}).String()
	subject := mailSubject(m.event)
	if m.team {
		addrs := make([]string, len(m.to))
		for i, a := range m.to {
			addrs[i] = (&mail.Address{Address: a}).String()
		}
		to, subject = strings.Join(addrs, ", "), teamMailSubject(m.event, m.name)
	}
	var id [12]byte
	_, _ = rand.Read(id[:])
	domain := from.Address[strings.LastIndexByte(from.Address, '@')+1:]

	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\n", from.String())
	fmt.Fprintf(&b, "To: %s\r\n", to)
	fmt.Fprintf(&b, "Subject: %s\r\n", mime.QEncoding.Encode("utf-8", subject))
	fmt.Fprintf(&b, "Date: %s\r\n", now.Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: <%s@%s>\r\n", hex.EncodeToString(id[:]), domain)
	b.WriteString("MIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
	b.WriteString("Content-Transfer-Encoding: quoted-printable\r\n\r\n")

	var body strings.Builder
	if m.team {
		writeTeamBody(&body, m)
	} else {
		writeLoginBody(&body, publicURL, m)
	}
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(body.String()))
	_ = qp.Close()
	return b.Bytes()
}

// writeLoginBody writes the text of a login-code email.
func writeLoginBody(body *strings.Builder, publicURL string, m loginMail) {
	fmt.Fprintf(body, "Hello %s,\r\n\r\n", strings.TrimSpace(headerText(m.name)))
	body.WriteString("you have been added as a judge. Your login code is:\r\n\r\n")
	fmt.Fprintf(body, "    %s\r\n\r\n", m.code)
	if link := loginLink(publicURL, m.code); link != "" {
		fmt.Fprintf(body, "Log in with this link:\r\n%s\r\n\r\n", link)
	}
	body.WriteString("Keep the code to yourself: whoever has it can judge in your name.\r\n")
}

// writeTeamBody writes the text of a team-link email: plain and kind, the link on a
// line of its own.
func writeTeamBody(body *strings.Builder, m loginMail) {
	event := strings.TrimSpace(headerText(m.event))
	if event == "" {
		event = engine.DefaultEventName
	}
	fmt.Fprintf(body, "Hello team %s,\r\n\r\n", strings.TrimSpace(headerText(m.name)))
	fmt.Fprintf(body, "thank you for taking part in %s. Your project has its own team page:\r\n\r\n", event)
	fmt.Fprintf(body, "%s\r\n\r\n", m.link)
	body.WriteString("It shows where judging stands and how many judges have visited your table.\r\n")
	body.WriteString("Once the organisers publish the results, it also shows the winners and the\r\n")
	body.WriteString("feedback judges wrote for your project.\r\n\r\n")
	body.WriteString("The link is for your team only: anyone who has it can open the page.\r\n")
}
