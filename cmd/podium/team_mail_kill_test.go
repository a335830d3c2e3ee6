package main

import (
	"encoding/json"
	"fmt"
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

// teamMailStatusOn returns the status of project id's team-link mail on node n's
// team-links list ("" when none or unreachable).
func teamMailStatusOn(n *clusterNode, id string) string {
	code, b, err := call(n.url(), "GET", "/api/admin/team-links", nil)
	if err != nil || code != 200 {
		return ""
	}
	var rows []teamLinkRow
	_ = json.Unmarshal(b, &rows)
	for _, r := range rows {
		if r.ID == id && r.Mail != nil {
			return r.Mail.Status
		}
	}
	return ""
}

// TestClusterTeamMailsThroughFollowerSentOnce: team-link mails queued through a follower
// while the SMTP server is down stay pending on every node; the leader is SIGKILLed, the
// SMTP server comes up, and the new leader mails the team exactly once.
func TestClusterTeamMailsThroughFollowerSentOnce(t *testing.T) {
	ports := freePorts(t, 7)
	c := startMailCluster(t, ports, ports[6])
	var lead *clusterNode
	waitFor(t, 20*time.Second, "a leader known to all nodes", func() bool { lead = c.leader(c.nodes); return lead != nil })
	follower := without(c.nodes, lead)[0]
	team := []string{"ann@example.com", "bob@example.com"}
	var created struct{ ID string }
	waitFor(t, 20*time.Second, "project created", func() bool {
		code, b, err := call(follower.url(), "POST", "/api/project/new", map[string]any{"name": "Yonder Yoga", "contact_emails": team})
		return err == nil && code == 200 && json.Unmarshal(b, &created) == nil
	})
	code, b, err := call(follower.url(), "POST", "/api/admin/team-links/send", nil)
	var res struct{ Queued int }
	if err != nil || code != 200 || json.Unmarshal(b, &res) != nil || res.Queued != 1 {
		t.Fatalf("send through a follower: %d %v %s", code, err, b)
	}
	for _, n := range c.nodes {
		waitFor(t, 10*time.Second, n.id+" shows the team mail pending", func() bool { return teamMailStatusOn(n, created.ID) == "pending" })
	}
	lead.p.kill()
	live := without(c.nodes, lead)

	smtp := startBinSMTPAt(t, fmt.Sprintf("127.0.0.1:%d", ports[6]), false)
	select {
	case to := <-smtp.msgs:
		if !slices.Equal(to, team) {
			t.Fatalf("mail to %q, want %q", to, team)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the team-link mail did not arrive")
	}
	for _, n := range live {
		waitFor(t, 20*time.Second, n.id+" shows the team mail sent", func() bool { return teamMailStatusOn(n, created.ID) == "sent" })
	}
	addJudgeVia(t, live[0], "Dee", "dee@example.com")
	smtp.nextMailTo(t, "dee@example.com") // the team's mail went out once
}
