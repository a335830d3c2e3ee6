package transport

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestWebClusterCardStandalone: on a single node the dashboard asks for the cluster
// status once, keeps the cluster card hidden and stops asking (docs/behaviour.md#cluster: the card is
// shown only when clustered). The clustered card is exercised against real nodes.
func TestWebClusterCardStandalone(t *testing.T) {
	b := startChromium(t)
	ts := startServer(t)
	ctx := b.tab(t)
	adminLogin(t, ctx, ts)
	asked := `performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/api/admin/cluster')).length`
	waitJS(t, ctx, "the cluster status request", asked+` >= 1`)
	if !evalJS[bool](t, ctx, `document.querySelector('#cl-panel').hidden`) {
		t.Errorf("cluster card shown on a standalone node")
	}
	// after another refresh period nothing more was asked
	run(t, ctx, "wait past a refresh", chromedp.Sleep(3500*time.Millisecond))
	if n := evalJS[int](t, ctx, asked); n != 1 {
		t.Errorf("the standalone dashboard asked for the cluster status %d times, want once", n)
	}
	if !evalJS[bool](t, ctx, `document.querySelector('#cl-panel').hidden`) {
		t.Errorf("cluster card shown on a standalone node")
	}
}
