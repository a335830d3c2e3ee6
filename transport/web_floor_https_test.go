package transport

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestWebPlainHTTPWarning: a judge on the hall's LAN over plain http makes the
// Overview say so, what it costs and how to fix it (docs/behaviour.md#trust-on-the-floor).
func TestWebPlainHTTPWarning(t *testing.T) {
	b := startChromium(t)
	ts := startServer(t, trustLoopback)
	_, code := ts.addJudge("Ada", "ada@example.com", "")
	ctx := b.tab(t)
	adminLogin(t, ctx, ts)
	waitJS(t, ctx, "no warning without such judges", `document.querySelector('#floor-https').hidden`)
	a := asJudge(ts.login(code))
	a.hdr = map[string]string{"X-Forwarded-For": "192.168.1.20"} // a phone on the LAN, through a trusted proxy, over http
	ts.must(200, "GET", "/api/judge", nil, a, nil)
	run(t, ctx, "reload", chromedp.Reload())
	waitJS(t, ctx, "warning shown", `(() => { const e = document.querySelector('#floor-https'); return !e.hidden && e.textContent.includes('1 judge is using Podium over http://') && e.textContent.includes('TLS_CERT_FILE'); })()`)
	b.shotAt(t, ctx, "admin-plain-http-warning", 1400, 900)
	b.shotAt(t, ctx, "admin-plain-http-warning", 1920, 1080)
}
