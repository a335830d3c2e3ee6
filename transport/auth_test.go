package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"podium/persist"
)

func TestJudgeLoginSessionAndLogout(t *testing.T) {
	ts := startServer(t)
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	if b := ts.must(400, "POST", "/api/judge/login", map[string]string{"code": "00000000"}, anon, nil); string(b) != `{"error":"invalid code"}` {
		t.Fatalf("wrong code body %s", b)
	}
	ts.must(400, "POST", "/api/judge/login", map[string]int{"code": 5}, anon, nil)
	ts.must(400, "POST", "/api/judge/login", "", anon, nil)
	ts.must(400, "POST", "/api/judge/login", map[string]string{"code": ""}, anon, nil)

	resp, err := http.Post(ts.URL+"/api/judge/login", "application/json", strings.NewReader(`{"code":"`+code+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Token string }
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if len(body.Token) < 43 { // 32 bytes, base64url
		t.Fatalf("token %q too short", body.Token)
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "token" {
			t.Fatalf("judge cookie still named token: %+v", c)
		}
		if c.Name == "podium_judge" {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value != body.Token || !cookie.HttpOnly || cookie.Path != "/" || cookie.SameSite != http.SameSiteLaxMode || cookie.Secure {
		t.Fatalf("judge cookie = %+v", cookie)
	}
	// Cookie (new name, and the pre-rename one) and bearer all authenticate.
	for _, name := range []string{"podium_judge", "token"} {
		req, _ := http.NewRequest("POST", ts.URL+"/api/judge/auth", nil)
		req.AddCookie(&http.Cookie{Name: name, Value: body.Token})
		r2, _ := http.DefaultClient.Do(req)
		if r2.StatusCode != 200 {
			t.Fatalf("cookie %s auth: %d", name, r2.StatusCode)
		}
		r2.Body.Close()
	}
	ts.must(200, "POST", "/api/judge/auth", nil, asJudge(body.Token), nil)
	ts.must(401, "POST", "/api/judge/auth", nil, anon, nil)
	ts.must(401, "POST", "/api/judge/auth", nil, asAdmin, nil)

	// A code typed in groups, with spaces inside or around it, is the same code.
	var spaced struct{ Token string }
	ts.must(200, "POST", "/api/judge/login", map[string]string{"code": " " + code[:4] + " " + code[4:] + "\t"}, anon, &spaced)
	ts.must(200, "POST", "/api/judge/auth", nil, asJudge(spaced.Token), nil)
	ts.must(400, "POST", "/api/judge/login", map[string]string{"code": code[:4] + " 0" + code[4:]}, anon, nil)

	// A new login replaces the previous token.
	second := ts.login(code)
	ts.must(401, "POST", "/api/judge/auth", nil, asJudge(body.Token), nil)
	ts.must(200, "POST", "/api/judge/auth", nil, asJudge(second), nil)
	// Logout invalidates the session.
	ts.must(200, "POST", "/api/judge/logout", nil, asJudge(second), nil)
	ts.must(401, "GET", "/api/judge", nil, asJudge(second), nil)
}

func TestAdminLoginCookieAndBasic(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.PublicURL = "https://podium.example.org" })
	if b := ts.must(400, "POST", "/api/admin/login", map[string]string{"password": "wrong"}, anon, nil); !strings.Contains(string(b), `"error"`) {
		t.Fatalf("wrong password body %s", b)
	}
	ts.must(400, "POST", "/api/admin/login", `{"password": 1}`, anon, nil)
	resp, err := http.Post(ts.URL+"/api/admin/login", "application/json", strings.NewReader(`{"password":"`+testPassword+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "admin_session" {
			cookie = c
		}
	}
	if resp.StatusCode != 200 || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || !cookie.Secure || cookie.MaxAge != 86400 {
		t.Fatalf("admin login %d cookie %+v", resp.StatusCode, cookie)
	}
	withCookie := auth{hdr: map[string]string{"Cookie": "admin_session=" + cookie.Value}}
	ts.must(200, "POST", "/api/admin/auth", nil, withCookie, nil)
	ts.must(200, "GET", "/api/judge/list", nil, withCookie, nil)
	ts.must(200, "POST", "/api/admin/auth", nil, asAdmin, nil)
	ts.must(401, "POST", "/api/admin/auth", nil, anon, nil)
	ts.must(401, "POST", "/api/admin/auth", nil, auth{hdr: map[string]string{"Authorization": "Basic YWRtaW46d3Jvbmc="}}, nil)
	ts.must(401, "GET", "/api/judge/list", nil, auth{hdr: map[string]string{"Cookie": "admin_session=forged"}}, nil)

	// The session survives a restart.
	ts.Stop()
	ts2 := startServerIn(t, ts.Dir)
	ts2.must(200, "POST", "/api/admin/auth", nil, withCookie, nil)
	ts2.must(200, "POST", "/api/admin/logout", nil, withCookie, nil)
	ts2.must(401, "POST", "/api/admin/auth", nil, withCookie, nil)
}

func TestAdminLoginThrottledAfterTenFailures(t *testing.T) {
	ts := startServer(t)
	for i := 0; i < 10; i++ {
		ts.must(400, "POST", "/api/admin/login", map[string]string{"password": "wrong"}, anon, nil)
	}
	req, _ := http.NewRequest("POST", ts.URL+"/api/admin/login", strings.NewReader(`{"password":"`+testPassword+`"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	retry := resp.Header.Get("Retry-After")
	if resp.StatusCode != 429 || retry == "" {
		t.Fatalf("11th attempt: %d Retry-After=%q", resp.StatusCode, retry)
	}
	// The message says the wait in words, the same as Retry-After (a minute window: seconds).
	if want := "too many failed logins; try again in " + retry + " s"; !strings.Contains(string(body), want) {
		t.Fatalf("11th attempt says %s, want %q", body, want)
	}
}

func TestJudgeLoginThrottledPerIP(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.TrustedProxies = []string{"127.0.0.1"} })
	// Behind a trusted proxy each X-Forwarded-For client has its own budget (100/min).
	from := func(ip string) auth { return auth{hdr: map[string]string{"X-Forwarded-For": ip}} }
	for i := 0; i < 100; i++ {
		ts.must(400, "POST", "/api/judge/login", map[string]string{"code": "12345678"}, from("203.0.113.7"), nil)
	}
	code, body := ts.do("POST", "/api/judge/login", map[string]string{"code": "12345678"}, from("203.0.113.7"))
	if code != 429 || !strings.Contains(string(body), "error") {
		t.Fatalf("101st login: %d %s", code, body)
	}
	ts.must(400, "POST", "/api/judge/login", map[string]string{"code": "12345678"}, from("203.0.113.8"), nil)
}

func TestForwardedForIgnoredFromUntrustedPeer(t *testing.T) {
	ts := startServer(t)
	for i := 0; i < 100; i++ {
		ip := net.IPv4(198, 51, 100, byte(i)).String()
		ts.must(400, "POST", "/api/judge/login", map[string]string{"code": "12345678"}, auth{hdr: map[string]string{"X-Forwarded-For": ip}}, nil)
	}
	// Spoofed headers do not buy a fresh budget: the peer is what counts.
	code, _ := ts.do("POST", "/api/judge/login", map[string]string{"code": "12345678"}, auth{hdr: map[string]string{"X-Forwarded-For": "192.0.2.1"}})
	if code != 429 {
		t.Fatalf("login with spoofed X-Forwarded-For: %d, want 429", code)
	}
}

func TestCORSOffByDefaultAndOnWhenConfigured(t *testing.T) {
	ts := startServer(t)
	req, _ := http.NewRequest("OPTIONS", ts.URL+"/api/judge/login", nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, _ := http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("CORS header sent with CORS off")
	}
	ts2 := startServer(t, func(c *Config) { c.CORSOrigins = []string{"https://site.example"} })
	req, _ = http.NewRequest("OPTIONS", ts2.URL+"/api/judge/login", nil)
	req.Header.Set("Origin", "https://site.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "https://site.example" || resp.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("CORS headers = %v", resp.Header)
	}
}

func TestBodyLimits(t *testing.T) {
	ts := startServer(t)
	big := `{"name":"` + strings.Repeat("a", 1<<20) + `"}`
	code, body := ts.do("POST", "/api/project/new", big, asAdmin)
	if code != 413 || !strings.Contains(string(body), "error") {
		t.Fatalf("oversize body: %d %s", code, body)
	}
	var list []any
	ts.must(200, "GET", "/api/project/list", nil, asAdmin, &list)
	if len(list) != 0 {
		t.Fatal("oversize request changed state")
	}
}

func TestMalformedAndUnknownRoutes(t *testing.T) {
	ts := startServer(t)
	code, body := ts.do("GET", "/api/definitely/not/here", nil, anon)
	if code != 404 || !json.Valid(body) || !strings.Contains(string(body), `"error"`) {
		t.Fatalf("unknown route: %d %s", code, body)
	}
	code, _ = ts.do("PATCH", "/api/project/new", nil, asAdmin)
	if code != 405 {
		t.Fatalf("wrong method: %d", code)
	}
	for _, b := range []string{"{", "[]", "null", `{"name": 5}`, `"str"`} {
		code, body := ts.do("POST", "/api/project/new", b, asAdmin)
		if code != 400 || !strings.Contains(string(body), `"error"`) {
			t.Errorf("body %q: %d %s", b, code, body)
		}
	}
	ts.must(400, "POST", "/api/project/new", map[string]string{"name": "x", "url": "javascript:alert(1)"}, asAdmin, nil)
	ts.must(200, "GET", "/healthz", nil, anon, nil)
	ts.must(200, "GET", "/readyz", nil, anon, nil)
}

func TestStorageFailureMakesServerReadOnly(t *testing.T) {
	ts := startServer(t)
	ts.addProject("Before", "")
	ts.failJournal(errors.New("no space left on device"))
	code, body := ts.do("POST", "/api/project/new", map[string]string{"name": "During"}, asAdmin)
	if code != 503 {
		t.Fatalf("write during storage failure: %d %s", code, body)
	}
	ts.must(503, "POST", "/api/admin/clock/unpause", nil, asAdmin, nil)
	ts.must(503, "GET", "/readyz", nil, anon, nil)
	ts.must(200, "GET", "/healthz", nil, anon, nil)
	var list []struct{ Name string }
	ts.must(200, "GET", "/api/project/list/public", nil, anon, &list)
	if len(list) < 1 || list[0].Name != "Before" {
		t.Fatalf("reads broken during storage failure: %+v", list)
	}
}

// TestNothingSecretIsLogged logs in judges and admins and checks that no password,
// code or token reaches the log.
func TestNothingSecretIsLogged(t *testing.T) {
	var buf syncBuffer
	log := zerolog.New(&buf)
	dir := t.TempDir()
	node, err := persist.Open(dir, persist.Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{DataDir: dir, AdminPassword: testPassword}, node, log)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Listen(ln)
	ts := &testServer{t: t, URL: "http://" + ln.Addr().String(), Dir: dir, Node: node, Srv: srv}
	t.Cleanup(ts.Stop)

	_, code := ts.addJudge("Ada", "ada@example.com", "")
	token := ts.login(code)
	ts.must(200, "GET", "/api/judge?token="+token, nil, asJudge(token), nil)
	ts.must(200, "POST", "/api/admin/login", map[string]string{"password": testPassword}, anon, nil)
	ts.must(400, "POST", "/api/admin/login", map[string]string{"password": "guess-" + testPassword}, anon, nil)
	var log2 struct{ Log string }
	if c, _ := ts.do("GET", "/api/admin/log", nil, asAdmin); c == 200 {
		b := ts.must(200, "GET", "/api/admin/log", nil, asAdmin, nil)
		json.Unmarshal(b, &log2)
	}
	ts.Stop()
	out := buf.String() + log2.Log
	for _, secret := range []string{testPassword, code, token} {
		if strings.Contains(out, secret) {
			t.Fatalf("secret %q found in logs", secret)
		}
	}
	if !strings.Contains(buf.String(), `"route":"/api/judge/login"`) {
		t.Fatalf("request log lacks route templates: %s", buf.String())
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
