package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The event's ending survives a SIGKILL and a leader's death
// (docs/behaviour.md#after-judging): prizes, the published winners and every feedback
// item are journaled commands.

// endingSetup makes four projects, a judge who judged them all with feedback, one
// prize, and publishes Project 2 as its winner with feedback shared; it returns the
// team token of Project 2. do sends an admin request (a judge's with token).
func endingSetup(t *testing.T, do func(method, path string, body any, token string) []byte) string {
	t.Helper()
	for i := 0; i < 4; i++ {
		do("POST", "/api/project/new", map[string]any{"name": fmt.Sprint("Project ", i), "description": "d"}, "")
	}
	do("POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com", "no_send": true}, "")
	var judges []struct{ Code string }
	json.Unmarshal(do("GET", "/api/judge/list", nil, ""), &judges)
	var login struct{ Token string }
	json.Unmarshal(do("POST", "/api/judge/login", map[string]string{"code": judges[0].Code}, ""), &login)
	do("POST", "/api/admin/clock/unpause", nil, "")
	for range 4 {
		do("POST", "/api/judge/next", nil, login.Token)
		do("POST", "/api/judge/finish", map[string]any{"notes": "mine", "feedback": "kind words"}, login.Token)
	}
	do("PUT", "/api/admin/prizes", []map[string]any{{"name": "Best overall", "places": 1}}, "")
	var prizes []struct{ ID string }
	json.Unmarshal(do("GET", "/api/admin/prizes", nil, ""), &prizes)
	var projects []struct{ ID, Name string }
	json.Unmarshal(do("GET", "/api/project/list", nil, ""), &projects)
	var winner string
	for _, p := range projects {
		if p.Name == "Project 2" {
			winner = p.ID
		}
	}
	do("POST", "/api/admin/winners/publish", map[string]any{"feedback": true, "prizes": []any{
		map[string]any{"prize": prizes[0].ID, "winners": []string{winner}}}}, "")
	var links []struct{ Name, Link string }
	json.Unmarshal(do("GET", "/api/admin/team-links", nil, ""), &links)
	for _, l := range links {
		if l.Name == "Project 2" {
			return l.Link[strings.LastIndex(l.Link, "/")+1:]
		}
	}
	t.Fatal("no team link for Project 2")
	return ""
}

// endingSeen is what every surface shows of the ending at one node.
func endingSeen(t *testing.T, get func(path string) []byte, token string) string {
	t.Helper()
	return string(get("/api/winners")) + "\n" + string(get("/api/team/"+token))
}

func TestSIGKILLKeepsPublishedWinners(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir)
	token := endingSetup(t, p.must)
	get := func(p *proc) func(string) []byte {
		return func(path string) []byte { return p.must("GET", path, nil, "") }
	}
	before := endingSeen(t, get(p), token)
	if !strings.Contains(before, `"published":true`) || !strings.Contains(before, `"prizes_won":[{"prize":"Best overall","place":1}]`) ||
		!strings.Contains(before, `"feedback":["kind words"]`) {
		t.Fatalf("before the kill: %s", before)
	}
	p.kill()
	p2 := startBinary(t, dir)
	if after := endingSeen(t, get(p2), token); after != before {
		t.Fatalf("after SIGKILL:\n%s\nwant\n%s", after, before)
	}
}

func TestClusterPublishSurvivesLeaderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	c, lead, follower := clusterWithLeader(t)
	// Everything is sent to a follower, which forwards each change to the leader.
	do := func(n *clusterNode) func(method, path string, body any, token string) []byte {
		return func(method, path string, body any, token string) []byte {
			t.Helper()
			var code int
			var b []byte
			var err error
			if token != "" {
				a := keyedCall(t, n.url(), method, path, mustJSON(body), token, fmt.Sprint("k-", time.Now().UnixNano()))
				code, b = a.code, []byte(a.body)
			} else {
				code, b, err = call(n.url(), method, path, body)
			}
			if err != nil || code != 200 {
				t.Fatalf("%s %s at %s: %d %v %s", method, path, n.id, code, err, b)
			}
			return b
		}
	}
	token := endingSetup(t, do(follower))
	get := func(n *clusterNode) func(string) []byte {
		return func(path string) []byte { return do(n)("GET", path, nil, "") }
	}
	c.waitConverged(c.nodes, 20*time.Second)
	before := endingSeen(t, get(follower), token)
	if !strings.Contains(before, `"published":true`) || !strings.Contains(before, `"feedback":["kind words"]`) {
		t.Fatalf("before the kill: %s", before)
	}
	lead.p.kill()
	live := without(c.nodes, lead)
	var next *clusterNode
	waitFor(t, 30*time.Second, "a new leader", func() bool { next = c.leader(live); return next != nil && next != lead })
	for _, n := range live {
		if got := endingSeen(t, get(n), token); got != before {
			t.Fatalf("%s after the failover:\n%s\nwant\n%s", n.id, got, before)
		}
	}
	// The new leader takes the winners back; every live node follows.
	do(next)("DELETE", "/api/admin/winners/publish", nil, "")
	c.waitConverged(live, 20*time.Second)
	for _, n := range live {
		if got := string(get(n)("/api/winners")); got != `{"published":false,"prizes":[]}` {
			t.Fatalf("%s after take back: %s", n.id, got)
		}
	}
}

func mustJSON(v any) string {
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}
