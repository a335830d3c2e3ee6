package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Idempotent judge writes survive a SIGKILL and a leader's death
// (docs/behaviour.md#on-the-floor): the key and the kept answer travel with the command.

type keyedAnswer struct {
	code     int
	body     string
	replayed bool
}

// keyedCall sends a judge's write with an Idempotency-Key to base.
func keyedCall(t *testing.T, base, method, path, body, token, key string) keyedAnswer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Idempotency-Key", key)
	resp, err := clusterHTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return keyedAnswer{code: resp.StatusCode, body: string(b), replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
}

// keyedWrite is one of the judge's keyed requests and the answer it first got.
type keyedWrite struct {
	method, path, body, key string
	first                   keyedAnswer
}

// judgeWrites makes a judge's keyed next and finish (with notes and a star) at base.
func judgeWrites(t *testing.T, base, token string) []keyedWrite {
	t.Helper()
	ws := []keyedWrite{
		{method: "POST", path: "/api/judge/next", key: "phone-1"},
		{method: "POST", path: "/api/judge/finish", body: `{"notes":"offline notes","starred":true}`, key: "phone-2"},
		{method: "POST", path: "/api/judge/next", key: "phone-3"},
	}
	for i := range ws {
		w := &ws[i]
		w.first = keyedCall(t, base, w.method, w.path, w.body, token, w.key)
		if w.first.code != 200 || w.first.replayed {
			t.Fatalf("%s %s: %+v", w.method, w.path, w.first)
		}
	}
	return ws
}

// checkReplayed repeats the writes at base: each answers its kept answer, flagged.
func checkReplayed(t *testing.T, base, token string, ws []keyedWrite) {
	t.Helper()
	for _, w := range ws {
		got := keyedCall(t, base, w.method, w.path, w.body, token, w.key)
		if got.code != w.first.code || got.body != w.first.body || !got.replayed {
			t.Fatalf("repeat of %s %s at %s: %+v, want %+v replayed", w.method, w.path, base, got, w.first)
		}
	}
	if got := keyedCall(t, base, "POST", "/api/judge/finish", `{"notes":"other"}`, token, "phone-2"); got.code != 422 {
		t.Fatalf("key reused with another body: %+v", got)
	}
}

// judgeSeen returns the judge's seen count and current project at base.
func judgeSeen(t *testing.T, base, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/judge", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := clusterHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var me struct {
		Seen    int    `json:"seen"`
		Current string `json:"current"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&me); err != nil {
		t.Fatal(err)
	}
	return me.Seen, me.Current
}

func TestSIGKILLKeepsIdempotentAnswers(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, dir)
	for i := 0; i < 6; i++ {
		p.must("POST", "/api/project/new", map[string]any{"name": fmt.Sprint("Project ", i), "description": "d"}, "")
	}
	p.must("POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com", "no_send": true}, "")
	var judges []struct{ Code string }
	json.Unmarshal(p.must("GET", "/api/judge/list", nil, ""), &judges)
	var login struct{ Token string }
	json.Unmarshal(p.must("POST", "/api/judge/login", map[string]string{"code": judges[0].Code}, "x"), &login)
	p.must("POST", "/api/admin/clock/unpause", nil, "")
	ws := judgeWrites(t, p.base, login.Token)
	seen, cur := judgeSeen(t, p.base, login.Token)
	p.kill()

	p2 := startBinary(t, dir)
	checkReplayed(t, p2.base, login.Token, ws)
	if s, c := judgeSeen(t, p2.base, login.Token); s != seen || c != cur || s != 1 {
		t.Fatalf("after SIGKILL and the repeats: seen %d current %s, want %d %s", s, c, seen, cur)
	}
}

func TestClusterIdempotentAfterLeaderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	c, lead, follower := clusterWithLeader(t)
	admin := func(n *clusterNode, method, path string, body any) []byte {
		t.Helper()
		code, b, err := call(n.url(), method, path, body)
		if err != nil || code != 200 {
			t.Fatalf("%s %s: %d %v %s", method, path, code, err, b)
		}
		return b
	}
	for i := 0; i < 6; i++ {
		admin(lead, "POST", "/api/project/new", map[string]any{"name": fmt.Sprint("Project ", i), "description": "d"})
	}
	admin(lead, "POST", "/api/judge/new", map[string]any{"name": "Ada", "email": "ada@example.com", "no_send": true})
	admin(lead, "POST", "/api/admin/clock/unpause", nil)
	var judges []struct{ Code string }
	json.Unmarshal(admin(lead, "GET", "/api/judge/list", nil), &judges)
	var login struct{ Token string }
	json.Unmarshal(admin(lead, "POST", "/api/judge/login", map[string]string{"code": judges[0].Code}), &login)

	c.waitConverged(c.nodes, 20*time.Second) // the follower knows the session
	// The judge's phone talks to a follower: its writes are forwarded with their keys.
	ws := judgeWrites(t, follower.url(), login.Token)
	seen, cur := judgeSeen(t, follower.url(), login.Token)
	c.waitConverged(c.nodes, 20*time.Second)
	lead.p.kill()
	live := without(c.nodes, lead)
	var next *clusterNode
	waitFor(t, 30*time.Second, "a new leader", func() bool { next = c.leader(live); return next != nil })
	for _, n := range live {
		checkReplayed(t, n.url(), login.Token, ws)
		if s, cr := judgeSeen(t, n.url(), login.Token); s != seen || cr != cur || s != 1 {
			t.Fatalf("%s after the failover and the repeats: seen %d current %s, want %d %s", n.id, s, cr, seen, cur)
		}
	}
}
