package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// teamLinkRow is one row of GET /api/admin/team-links.
type teamLinkRow struct {
	ID   string
	Link string
	Mail *struct{ Status, Reason string }
}

// awaitTeamMailStatus waits until the team-links list shows the project's team-link mail
// with status, and returns the project's row.
func (p *proc) awaitTeamMailStatus(id, status string) teamLinkRow {
	p.t.Helper()
	var got string
	for i := 0; i < 3000; i++ {
		var rows []teamLinkRow
		_ = json.Unmarshal(p.must("GET", "/api/admin/team-links", nil, ""), &rows)
		for _, r := range rows {
			if r.ID == id && r.Mail != nil {
				if got = r.Mail.Status; got == status {
					return r
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.t.Fatalf("team mail of %s is %q, want %q", id, got, status)
	return teamLinkRow{}
}

// TestSIGKILLDuringTeamMailSendReportsUnknown: the server dies while the SMTP server
// holds a team-link mail (claimed, outcome not recorded). The restarted server does
// not send it again on its own: it reports the outcome unknown, in the audit log
// without the link and on the team-links list; sending the links again then mails the
// team once.
func TestSIGKILLDuringTeamMailSendReportsUnknown(t *testing.T) {
	dir := t.TempDir()
	team := []string{"ann@example.com", "bob@example.com"}
	stuck := startBinSMTP(t, true)
	p := startBinary(t, dir, append(stuck.env(), "PUBLIC_URL=https://podium.example.org")...)
	var created struct{ ID string }
	if err := json.Unmarshal(p.must("POST", "/api/project/new", map[string]any{"name": "Yonder Yoga", "contact_emails": team}, ""), &created); err != nil {
		t.Fatal(err)
	}
	p.must("POST", "/api/admin/team-links/send", nil, "")
	select {
	case to := <-stuck.entered:
		if !slices.Equal(to, team) {
			t.Fatalf("message to %q held, want %q", to, team)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no team-link message reached DATA")
	}
	p.awaitTeamMailStatus(created.ID, "sending")
	p.kill()

	smtp := startBinSMTP(t, false)
	p2 := startBinary(t, dir, append(smtp.env(), "PUBLIC_URL=https://podium.example.org")...)
	row := p2.awaitTeamMailStatus(created.ID, "unknown")
	if !strings.Contains(row.Mail.Reason, "send it again") {
		t.Errorf("unknown reason %q", row.Mail.Reason)
	}
	log := p2.auditLog()
	if !strings.Contains(log, "team link email outcome unknown for Yonder Yoga (table 1) <ann@example.com, bob@example.com>") {
		t.Fatalf("audit log:\n%s", log)
	}
	token := row.Link[strings.LastIndex(row.Link, "/")+1:]
	if !strings.HasPrefix(row.Link, "https://podium.example.org/team/") || strings.Contains(log, token) {
		t.Fatalf("link %q; the audit log must not carry its token:\n%s", row.Link, log)
	}
	p2.must("POST", "/api/judge/new", map[string]any{"name": "Dee", "email": "dee@example.com"}, "")
	smtp.nextMailTo(t, "dee@example.com") // the team's mail was not resent on its own

	var res struct{ Queued int }
	if err := json.Unmarshal(p2.must("POST", "/api/admin/team-links/send", nil, ""), &res); err != nil || res.Queued != 1 {
		t.Fatalf("send again: %+v %v", res, err)
	}
	select {
	case to := <-smtp.msgs:
		if !slices.Equal(to, team) {
			t.Fatalf("mail to %q, want %q", to, team)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the team-link mail sent again did not arrive")
	}
	p2.awaitTeamMailStatus(created.ID, "sent")
}
