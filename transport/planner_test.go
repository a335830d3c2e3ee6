package transport

import (
	"testing"
)

// TestPlanner: the planner answers the simulated precision of both goals for the size
// asked (the same answer again from memory), defaults to the event's own size, and
// refuses bad sizes with a 400; assignment_goal is an option like the others.
func TestPlanner(t *testing.T) {
	ts := startServer(t)
	type rng struct{ Mean, CI float64 }
	type goal struct{ Top10, Top3, Rho rng }
	type view struct {
		Projects, Judges, Visits, Seeds int
		Goals                           map[string]goal
		Current                         string
	}
	var a, b view
	ts.must(200, "GET", "/api/admin/planner?projects=24&judges=6&visits=8", nil, asAdmin, &a)
	if a.Projects != 24 || a.Judges != 6 || a.Visits != 8 || a.Seeds < 2 || a.Current != "podium" {
		t.Fatalf("planner answered %+v", a)
	}
	for _, g := range []string{"podium", "field"} {
		e, ok := a.Goals[g]
		if !ok || e.Top10.Mean <= 0 || e.Top10.Mean > 1 || e.Top3.Mean < 0 || e.Top3.Mean > 1 || e.Rho.Mean <= 0 || e.Rho.Mean > 1 {
			t.Fatalf("goal %s: %+v", g, e)
		}
	}
	ts.must(200, "GET", "/api/admin/planner?projects=24&judges=6&visits=8", nil, asAdmin, &b)
	if a.Goals["podium"] != b.Goals["podium"] || a.Seeds != b.Seeds {
		t.Fatalf("a second ask differs: %+v, then %+v", a, b)
	}

	// Without a size: the event's own (none yet: 400); bad sizes: 400; judges: 401.
	ts.must(400, "GET", "/api/admin/planner", nil, asAdmin, nil)
	for _, q := range []string{"visits=0", "projects=abc", "judges=-1", "projects=2001", "projects=1&judges=1"} {
		ts.must(400, "GET", "/api/admin/planner?"+q, nil, asAdmin, nil)
	}
	ts.must(401, "GET", "/api/admin/planner?projects=24&judges=6", nil, auth{}, nil)

	// assignment_goal: validated, stored, shown as the planner's current goal.
	ts.must(400, "POST", "/api/admin/options", map[string]any{"assignment_goal": "winners"}, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/options", map[string]any{"assignment_goal": "field"}, asAdmin, nil)
	var o struct {
		AssignmentGoal string `json:"assignment_goal"`
	}
	ts.must(200, "GET", "/api/admin/options", nil, asAdmin, &o)
	ts.must(200, "GET", "/api/admin/planner?projects=24&judges=6&visits=8", nil, asAdmin, &b)
	if o.AssignmentGoal != "field" || b.Current != "field" {
		t.Fatalf("assignment_goal %q, planner current %q; want field", o.AssignmentGoal, b.Current)
	}
}
