package transport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"podium/persist"
)

// startLoggedServer is startServerOpts with the server's log written to w.
func startLoggedServer(t *testing.T, w *syncBuffer, mod func(*Config), opts ...Option) *testServer {
	t.Helper()
	dir := t.TempDir()
	node, err := persist.Open(dir, persist.Options{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{DataDir: dir, AdminPassword: testPassword}
	if mod != nil {
		mod(&cfg)
	}
	srv := New(cfg, node, zerolog.New(w).Level(zerolog.InfoLevel), opts...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Listen(ln) }()
	ts := &testServer{t: t, URL: "http://" + ln.Addr().String(), Dir: dir, Node: node, Srv: srv, ln: ln}
	t.Cleanup(ts.Stop)
	return ts
}

// logLines decodes JSON log lines.
func logLines(s string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func fromIP(ip string) auth { return auth{hdr: map[string]string{"X-Forwarded-For": ip}} }

func trustLoopback(c *Config) { c.TrustedProxies = []string{"127.0.0.1"} }

// TestLoginFloodSlowsGuessesNotJudges: once failed logins from many addresses have spent
// the global budget, an address that already failed twice is refused before its code is
// checked, while a judge on a fresh address logs in, and a fresh address's wrong guess
// is still checked (400, as Jury answers a wrong code).
func TestLoginFloodSlowsGuessesNotJudges(t *testing.T) {
	ts := startServerOpts(t, trustLoopback, withLoginBudget(0.0001, 30))
	_, code := ts.addJudge("Judge", "judge@example.org", "")
	checked, refused := 0, 0
	for round := 0; round < 4; round++ {
		for a := 0; a < 50; a++ {
			st, _ := ts.do("POST", "/api/judge/login", map[string]string{"code": "00000001"}, fromIP(fmt.Sprintf("198.51.100.%d", a)))
			switch st {
			case 400:
				checked++
			case 429:
				refused++
			default:
				t.Fatalf("guess: %d", st)
			}
		}
	}
	// 30 failures spend the budget; after that each address gets its first 2 checked.
	if checked > 30+50*loginFloodFails || refused == 0 {
		t.Fatalf("checked %d refused %d of 200 guesses", checked, refused)
	}
	ts.must(429, "POST", "/api/judge/login", map[string]string{"code": code}, fromIP("198.51.100.1"), nil)
	ts.must(200, "POST", "/api/judge/login", map[string]string{"code": code}, fromIP("203.0.113.9"), nil)
	ts.must(400, "POST", "/api/judge/login", map[string]string{"code": "00000002"}, fromIP("203.0.113.10"), nil)
	t.Logf("50 addresses, 200 guesses: %d checked, %d refused", checked, refused)
}

// TestLoginLimitGroupsIPv6By64: the per-address login limit (max_req_per_min) counts
// a whole IPv6 /64 as one address.
func TestLoginLimitGroupsIPv6By64(t *testing.T) {
	ts := startServerOpts(t, trustLoopback)
	ts.must(200, "POST", "/api/admin/max-reqs", map[string]any{"max_req_per_min": 3}, asAdmin, nil)
	for i := 1; i <= 3; i++ {
		ts.must(400, "POST", "/api/judge/login", map[string]string{"code": "00000001"}, fromIP(fmt.Sprintf("2001:db8:1:2::%x", i)), nil)
	}
	ts.must(429, "POST", "/api/judge/login", map[string]string{"code": "00000001"}, fromIP("2001:db8:1:2:ffff::9"), nil)
	ts.must(400, "POST", "/api/judge/login", map[string]string{"code": "00000001"}, fromIP("2001:db8:1:3::1"), nil)
	if k := ipKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd"); k != "2001:db8:1:2::/64" {
		t.Fatalf("ipKey = %q", k)
	}
	if k := ipKey("192.0.2.7"); k != "192.0.2.7" {
		t.Fatalf("ipKey = %q", k)
	}
}

// TestJudgeWriteLimit: a judge's writes over its budget are 429 with Retry-After; its
// reads and other judges are not affected.
func TestJudgeWriteLimit(t *testing.T) {
	ts := startServerOpts(t, nil, withJudgeWriteLimit(0.0001, 5))
	_, c1 := ts.addJudge("A", "a@example.org", "")
	_, c2 := ts.addJudge("B", "b@example.org", "")
	t1, t2 := ts.login(c1), ts.login(c2)
	for i := 0; i < 5; i++ {
		ts.must(200, "PUT", "/api/judge/welcome", nil, asJudge(t1), nil)
	}
	req, _ := http.NewRequest("PUT", ts.URL+"/api/judge/welcome", nil)
	req.Header.Set("Authorization", "Bearer "+t1)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("6th write: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	ts.must(200, "GET", "/api/judge", nil, asJudge(t1), nil)
	ts.must(200, "PUT", "/api/judge/welcome", nil, asJudge(t2), nil)
}

// TestRejectedRequestsLogOncePerSecond: 300 refused logins from one address make a
// line a second (with the count of the others), not 300; successful requests write
// no line at info.
func TestRejectedRequestsLogOncePerSecond(t *testing.T) {
	logs := &syncBuffer{}
	ts := startLoggedServer(t, logs, nil)
	start := time.Now()
	for i := 0; i < 300; i++ {
		ts.do("POST", "/api/judge/login", map[string]string{"code": "00000001"}, anon)
	}
	elapsed := time.Since(start)
	ts.must(200, "GET", "/api/admin/started", nil, anon, nil)
	n, suppressed, ok200 := 0, 0.0, 0
	for _, m := range logLines(logs.String()) {
		if m["message"] != "request" {
			continue
		}
		if m["status"] == float64(200) {
			ok200++
		}
		if m["route"] == "/api/judge/login" {
			n++
			if v, ok := m["suppressed"].(float64); ok {
				suppressed += v
			}
		}
	}
	if max := int(elapsed/time.Second) + 2; n > max || n == 0 {
		t.Fatalf("%d log lines for 300 refused logins in %v (want 1..%d)", n, elapsed, max)
	}
	if n > 1 && suppressed == 0 {
		t.Fatalf("%d lines but no suppressed count", n)
	}
	if ok200 != 0 {
		t.Fatalf("%d successful requests logged at info", ok200)
	}
}

// TestWSPerIPAndAdminRoom: one address holds at most MAX_WS_PER_IP sockets (429); past
// MAX_WS_CONNECTIONS anonymous sockets get 503 but an admin still connects.
func TestWSPerIPAndAdminRoom(t *testing.T) {
	ts := startServerOpts(t, func(c *Config) {
		trustLoopback(c)
		c.MaxWSConnections, c.MaxWSPerIP = 3, 2
	})
	h := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	ts.mustDialWS(h("192.0.2.1"))
	ts.mustDialWS(h("192.0.2.1"))
	if _, resp, err := ts.dialWS(h("192.0.2.1")); err == nil || resp == nil || resp.StatusCode != 429 {
		t.Fatalf("3rd socket from one address: %v %v", err, resp)
	}
	ts.mustDialWS(h("192.0.2.2"))
	if _, resp, err := ts.dialWS(h("192.0.2.3")); err == nil || resp == nil || resp.StatusCode != 503 {
		t.Fatalf("socket past the cap: %v %v", err, resp)
	}
	admin := h("192.0.2.1")
	admin.Set("Authorization", basicAdmin()["Authorization"])
	w, hello := ts.mustDialWS(admin)
	_ = w
	if hello.Type != "hello" {
		t.Fatalf("admin hello: %+v", hello)
	}
	if got := ts.wsConns(); got != 4 {
		t.Fatalf("%d sockets, want 4", got)
	}
}

// TestWSOriginIgnoresUntrustedForwardedHost: X-Forwarded-Host makes an origin "own"
// only when a trusted proxy sent it.
func TestWSOriginIgnoresUntrustedForwardedHost(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		ts := startServerOpts(t, func(c *Config) {
			if trusted {
				trustLoopback(c)
			}
		})
		hdr := http.Header{"Origin": {"http://evil.example"}, "X-Forwarded-Host": {"evil.example"}}
		_, resp, err := ts.dialWS(hdr)
		switch {
		case !trusted && (err == nil || resp == nil || resp.StatusCode != 403):
			t.Fatalf("untrusted X-Forwarded-Host: %v %v", err, resp)
		case trusted && err != nil:
			t.Fatalf("trusted proxy's X-Forwarded-Host: %v", err)
		}
	}
}

// TestCORSWildcardIgnored: a wildcard in CORS_ORIGINS never reaches the CORS middleware
// (which would panic with credentials); cmd refuses it at startup.
func TestCORSWildcardIgnored(t *testing.T) {
	ts := startServerOpts(t, func(c *Config) { c.CORSOrigins = []string{"*", "https://ok.example"} })
	req, _ := http.NewRequest("GET", ts.URL+"/api/", nil)
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v := resp.Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Fatalf("evil origin allowed: %q", v)
	}
	if !strings.Contains(strings.Join(ts.Srv.cfg.CORSOrigins, ","), "ok.example") {
		t.Fatal("good origin dropped")
	}
}
