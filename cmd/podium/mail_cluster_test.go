package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// mailStatusOn returns the status of the login-code mail of the judge with that email on
// node n's judge list ("" when none or unreachable).
func mailStatusOn(n *clusterNode, email string) string {
	code, b, err := call(n.url(), "GET", "/api/judge/list", nil)
	if err != nil || code != 200 {
		return ""
	}
	var list []struct {
		Email string
		Mail  *struct{ Status string }
	}
	_ = json.Unmarshal(b, &list)
	for _, j := range list {
		if j.Email == email && j.Mail != nil {
			return j.Mail.Status
		}
	}
	return ""
}

// startMailCluster starts three nodes whose SMTP server is at port smtpPort.
func startMailCluster(t *testing.T, ports []int, smtpPort int) *testCluster {
	return startTestCluster(t, ports, "SMTP_HOST=127.0.0.1", fmt.Sprintf("SMTP_PORT=%d", smtpPort), "EMAIL_FROM=jury@example.com")
}

// addJudgeVia creates a judge through node n, retrying while there is no leader.
func addJudgeVia(t *testing.T, n *clusterNode, name, email string) {
	t.Helper()
	waitFor(t, 20*time.Second, name+" created", func() bool {
		code, _, err := call(n.url(), "POST", "/api/judge/new", map[string]any{"name": name, "email": email})
		return err == nil && code == 200
	})
}

// TestClusterLeaderKilledMailSentOnce: a mail queued on the leader while the SMTP
// server is down stays pending in the replicated state; the leader is SIGKILLed, the
// SMTP server comes up, and the new leader sends the mail exactly once.
func TestClusterLeaderKilledMailSentOnce(t *testing.T) {
	ports := freePorts(t, 7)
	c := startMailCluster(t, ports, ports[6])
	var lead *clusterNode
	waitFor(t, 20*time.Second, "a leader known to all nodes", func() bool { lead = c.leader(c.nodes); return lead != nil })

	// Queued through a follower: the command carries the mail, the leader's outbox
	// cannot reach the SMTP server, so the mail stays pending everywhere.
	addJudgeVia(t, without(c.nodes, lead)[0], "Ada", "ada@example.com")
	for _, n := range c.nodes {
		waitFor(t, 10*time.Second, n.id+" shows Ada's mail pending", func() bool { return mailStatusOn(n, "ada@example.com") == "pending" })
	}
	lead.p.kill()
	live := without(c.nodes, lead)

	smtp := startBinSMTPAt(t, fmt.Sprintf("127.0.0.1:%d", ports[6]), false)
	smtp.nextMailTo(t, "ada@example.com")
	for _, n := range live {
		waitFor(t, 20*time.Second, n.id+" shows Ada's mail sent", func() bool { return mailStatusOn(n, "ada@example.com") == "sent" })
	}
	addJudgeVia(t, live[0], "Bob", "bob@example.com")
	smtp.nextMailTo(t, "bob@example.com") // Ada's mail went out once
}

// TestClusterLeaderKilledMidSendReportsUnknown: the leader dies while the SMTP server
// holds Ada's message. The new leader does not send it again: every live node shows the
// outcome unknown, and the next message the server gets is Bob's.
func TestClusterLeaderKilledMidSendReportsUnknown(t *testing.T) {
	ports := freePorts(t, 7)
	stuck := startBinSMTPAt(t, fmt.Sprintf("127.0.0.1:%d", ports[6]), true)
	c := startMailCluster(t, ports, ports[6])
	var lead *clusterNode
	waitFor(t, 20*time.Second, "a leader known to all nodes", func() bool { lead = c.leader(c.nodes); return lead != nil })
	addJudgeVia(t, lead, "Ada", "ada@example.com")
	stuck.nextHeldTo(t, "ada@example.com")
	for _, n := range c.nodes {
		waitFor(t, 10*time.Second, n.id+" shows Ada's mail sending", func() bool { return mailStatusOn(n, "ada@example.com") == "sending" })
	}
	lead.p.kill()
	live := without(c.nodes, lead)
	for _, n := range live {
		waitFor(t, 20*time.Second, n.id+" shows Ada's mail unknown", func() bool { return mailStatusOn(n, "ada@example.com") == "unknown" })
	}
	addJudgeVia(t, live[0], "Bob", "bob@example.com")
	stuck.nextHeldTo(t, "bob@example.com") // not Ada's again
}
