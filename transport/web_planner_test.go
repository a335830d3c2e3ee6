package transport

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestWebPlanner: the Settings tab's planner card estimates both goals for the event's
// size on request, fits its card at desktop and phone width, and saves the goal.
func TestWebPlanner(t *testing.T) {
	b := startChromium(t)
	ts := startServer(t)
	for i := 1; i <= 24; i++ {
		ts.addProject(fmt.Sprintf("Project %d", i), "")
	}
	for i := 1; i <= 6; i++ {
		ts.addJudge(fmt.Sprintf("Judge %d", i), fmt.Sprintf("j%d@example.com", i), "")
	}
	ctx := b.tab(t)
	adminLogin(t, ctx, ts)
	run(t, ctx, "open settings", chromedp.Click(chromedp.CSS("#tab-settings")), chromedp.WaitVisible(chromedp.CSS("#planner")))
	waitJS(t, ctx, "goal loaded", `document.querySelector('#planner-goal').value === 'podium'`)
	evalJS[any](t, ctx, `document.querySelector('#planner-visits').value = '8'`)
	run(t, ctx, "estimate", chromedp.Click(chromedp.CSS("#planner-run")))
	waitJS(t, ctx, "two goals estimated", `document.querySelectorAll('#planner-table tbody tr').length === 2`)
	waitJS(t, ctx, "figures", `/^0\.\d\d\s±\s0\.\d\d$/.test(document.querySelector('#planner-table tbody tr[data-goal="podium"] td').textContent)`)
	waitJS(t, ctx, "size said", `document.querySelector('#planner-note').textContent.startsWith('24 projects, 6 judges × 8 visits')`)
	if !evalJS[bool](t, ctx, `document.querySelector('#planner-table tbody tr[data-goal="podium"] th').textContent.includes('(now)')`) {
		t.Error("the current goal is not marked")
	}
	for _, w := range []int64{1400, 390} {
		run(t, ctx, "resize", chromedp.EmulateViewport(w, 900))
		waitJS(t, ctx, "layout", fmt.Sprintf("window.innerWidth === %d", w))
		if !evalJS[bool](t, ctx, `(() => { const c = document.querySelector('#planner'); return c.scrollWidth <= c.clientWidth; })()`) {
			t.Errorf("the planner card overflows at %d px", w)
		}
	}
	// On a phone the table stacks: every figure carries its column's name.
	if got := evalJS[string](t, ctx, `[...document.querySelectorAll('#planner-table tbody tr[data-goal="podium"] td')].map((td) => getComputedStyle(td, '::before').content).join('|')`); got != `"Top 10"|"Top 3"|"Order (ρ)"` {
		t.Errorf("planner figures at 390 px are labelled %s", got)
	}
	b.shot(t, ctx, "planner")

	run(t, ctx, "choose the whole field", chromedp.SetValue(chromedp.CSS("#planner-goal"), "field"), chromedp.Click(chromedp.CSS("#planner-save")))
	eventually(t, "goal saved", func() bool {
		var o struct {
			AssignmentGoal string `json:"assignment_goal"`
		}
		ts.must(200, "GET", "/api/admin/options", nil, asAdmin, &o)
		return o.AssignmentGoal == "field"
	})
}
