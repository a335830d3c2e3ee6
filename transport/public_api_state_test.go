package transport

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPublicAPIState (docs/behaviour.md#public-api-state-on-the-dashboard): the admin
// route says whether the public content API is on, never the key, and agrees with
// what /v1/public answers.
func TestPublicAPIState(t *testing.T) {
	for _, key := range []string{"", "s3cret-key"} {
		ts := startServer(t, func(c *Config) { c.PublicAPIKey = key })
		ts.must(401, "GET", "/api/admin/public-api", nil, anon, nil)
		var st struct {
			Enabled     bool
			Env, Header string
			Paths       []string
		}
		b := ts.must(200, "GET", "/api/admin/public-api", nil, asAdmin, &st)
		if st.Enabled != (key != "") || st.Env != "PUBLIC_API_KEY" || st.Header != "X-API-Key" || len(st.Paths) != 3 {
			t.Fatalf("key %q: state %+v", key, st)
		}
		if key != "" && strings.Contains(string(b), key) {
			t.Fatal("the answer holds the key")
		}
		want := 503
		if key != "" {
			want = 200
		}
		for _, p := range st.Paths {
			ts.must(want, "GET", p, nil, auth{hdr: map[string]string{"X-API-Key": key}}, nil)
		}
	}
}

// TestWebSiteContentSaysAPIState: the Site content tab says the public API is off and
// how to turn it on, or that it is on.
func TestWebSiteContentSaysAPIState(t *testing.T) {
	b := startChromium(t)
	for _, key := range []string{"", "s3cret-key"} {
		ts := startServer(t, func(c *Config) { c.PublicAPIKey = key })
		ctx := b.tab(t)
		adminLogin(t, ctx, ts)
		run(t, ctx, "content tab", chromedp.Click(chromedp.CSS("#tab-content")), chromedp.WaitVisible(chromedp.CSS("#sc-add")))
		if key == "" {
			waitJS(t, ctx, "API off said", `(() => { const s = document.querySelector('#content-api-state').textContent; return s.includes('Public API: off') && s.includes('answer 503') && s.includes('PUBLIC_API_KEY=') && s.includes('X-API-Key'); })()`)
			for _, sc := range layoutScreens[:3] {
				sc.apply(t, ctx)
				if p := layoutProblems(t, ctx, "#content-root .card:first-child"); len(p) > 0 {
					t.Errorf("site content at %s: %s", sc.name, strings.Join(p, "; "))
				}
				b.save(t, ctx, "content-api-off-"+sc.name)
			}
		} else {
			waitJS(t, ctx, "API on said", `(() => { const s = document.querySelector('#content-api-state').textContent; return s.includes('Public API: on') && !s.includes('503'); })()`)
			b.save(t, ctx, "content-api-on-1400")
		}
	}
}
