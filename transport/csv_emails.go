package transport

import (
	"net/mail"
	"strings"
)

// Contact emails in project imports (docs/behaviour.md#team-links-by-mail): the projects
// CSV's contact_emails column and the submission export's submitter and team member
// email columns become a project's contact_emails.

// csvEmailColumn finds a projects CSV's contact email column by its header: the first
// header cell that names emails ("contact_emails", "Emails", "Team email", ...); -1
// when there is none.
func csvEmailColumn(header csvRow) int {
	for i := range header.cells {
		if memberEmailHeader(header.cell(i)) {
			return i
		}
	}
	return -1
}

// submissionEmailColumns finds a submission export's member email columns: every header
// containing "email" ("Submitter Email", "Team Member 1 Email", ...) except the ones
// that are clearly about something else (memberEmailHeader).
func submissionEmailColumns(header csvRow) []int {
	var out []int
	for i := range header.cells {
		if memberEmailHeader(header.cell(i)) {
			out = append(out, i)
		}
	}
	return out
}

// notMemberEmail are words of an email header that is not a team member's address: an
// opt-in or consent question, a judge's or organiser's address, a verification flag.
var notMemberEmail = []string{"opt", "consent", "subscri", "newsletter", "marketing", "judge", "organi",
	"sponsor", "verif", "confirm", "domain", "?"}

// memberEmailHeader reports whether a header names a team member's email address.
func memberEmailHeader(h string) bool {
	h = strings.ToLower(h)
	if !strings.Contains(h, "email") && !strings.Contains(h, "e-mail") {
		return false
	}
	for _, w := range notMemberEmail {
		if strings.Contains(h, w) {
			return false
		}
	}
	return true
}

// csvEmails splits cells of addresses (lists like "Ada <ada@example.com>, bob@example.com"
// separated by semicolons or line breaks, or bare addresses separated by commas,
// semicolons or white space) into one list, trimmed, without duplicates (ignoring case;
// the first spelling kept). The engine validates each address (CheckProject).
func csvEmails(cells ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cells {
		if strings.TrimSpace(c) == "" {
			continue
		}
		var parts []string
		for _, chunk := range strings.FieldsFunc(c, func(r rune) bool { return r == ';' || r == '\n' || r == '\r' }) {
			list, err := mail.ParseAddressList(chunk)
			if err != nil {
				parts = append(parts, splitEmails(chunk)...)
				continue
			}
			for _, a := range list {
				parts = append(parts, a.Address)
			}
		}
		for _, e := range parts {
			e = strings.TrimSpace(e)
			if k := strings.ToLower(e); e != "" && !seen[k] {
				seen[k] = true
				out = append(out, e)
			}
		}
	}
	return out
}
