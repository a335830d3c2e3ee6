package transport

import (
	"testing"
)

// TestPlainHTTPJudgesCounted: judges reaching the server over plain http from another
// machine are counted for the dashboard's warning; over TLS (a trusted proxy says so)
// or from this machine they are not (docs/behaviour.md#trust-on-the-floor).
func TestPlainHTTPJudgesCounted(t *testing.T) {
	ts := startServer(t, trustLoopback)
	_, code1 := ts.addJudge("Ada", "ada@example.com", "")
	_, code2 := ts.addJudge("Bo", "bo@example.com", "")
	_, code3 := ts.addJudge("Cy", "cy@example.com", "")
	state := func() (n int, tls bool) {
		var st struct {
			TLS   bool `json:"tls"`
			Plain int  `json:"plain_http_judges"`
		}
		ts.must(200, "GET", "/api/admin/floor-https", nil, asAdmin, &st)
		return st.Plain, st.TLS
	}
	if n, tls := state(); n != 0 || tls {
		t.Fatalf("before any judge: %d, tls %v", n, tls)
	}
	lan := func(tok, proto string) auth {
		a := asJudge(tok)
		a.hdr = map[string]string{"X-Forwarded-For": "192.168.1.20"}
		if proto != "" {
			a.hdr["X-Forwarded-Proto"] = proto
		}
		return a
	}
	ts.must(200, "GET", "/api/judge", nil, asJudge(ts.login(code1)), nil)      // this machine
	ts.must(200, "GET", "/api/judge", nil, lan(ts.login(code2), "https"), nil) // a phone through an HTTPS proxy
	if n, _ := state(); n != 0 {
		t.Fatalf("loopback and TLS judges counted: %d", n)
	}
	tok := ts.login(code3)
	for range 3 {
		ts.must(200, "GET", "/api/judge", nil, lan(tok, ""), nil) // a phone on the hall's LAN
	}
	if n, _ := state(); n != 1 {
		t.Fatalf("plain-http judges: %d, want 1", n)
	}
	ts.refused(401, "GET", "/api/admin/floor-https", nil, asJudge(tok))
}
