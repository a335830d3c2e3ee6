package transport

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
	"podium/engine/simulate"
)

// The planner (docs/behaviour.md#planner): GET /api/admin/planner runs the simulation of
// `podium simulate` in this process for the event's own size, once with each
// assignment_goal on the same seeds, so the dashboard can show beside the setting what
// each goal is expected to give. It runs outside the writer on a fresh engine of its
// own, one estimate at a time, for at most plannerBudget (seeds are added until then,
// at most plannerSeeds), and remembers the answer per size.
const (
	plannerBudget   = 6 * time.Second
	plannerSeeds    = 16
	plannerMinSeeds = 2
	plannerCache    = 64
	plannerMaxSize  = 2000 // projects, judges, or visits per judge
)

// planner holds the estimates already made, by size.
type planner struct {
	mu    sync.Mutex // one estimate at a time; also guards done
	done  map[[3]int]plannerView
	stopc chan struct{} // closed at shutdown: an estimate under way gives up
}

// plannerView is GET /api/admin/planner's answer.
type plannerView struct {
	Projects int                    `json:"projects"`
	Judges   int                    `json:"judges"`
	Visits   int                    `json:"visits"`
	Seeds    int                    `json:"seeds"`
	Goals    map[string]plannerGoal `json:"goals"`
	Current  string                 `json:"current"` // the event's assignment_goal
}

// plannerGoal is one goal's expected precision: mean and 95% half-width.
type plannerGoal struct {
	Top10 plannerRange `json:"top10"`
	Top3  plannerRange `json:"top3"`
	Rho   plannerRange `json:"rho"`
}

type plannerRange struct {
	Mean float64 `json:"mean"`
	CI   float64 `json:"ci"`
}

func newPlanner() *planner {
	return &planner{done: map[[3]int]plannerView{}, stopc: make(chan struct{})}
}

func (s *Server) routesPlanner(api fiber.Router) {
	s.ext.planner = newPlanner()
	api.Get("/admin/planner", s.adminAuth, s.plannerEstimate)
	s.ext.shutdown = append(s.ext.shutdown, func(context.Context) error {
		s.ext.planner.stop()
		return nil
	})
}

// stop makes an estimate under way give up (shutdown).
func (p *planner) stop() {
	select {
	case <-p.stopc:
	default:
		close(p.stopc)
	}
}

// plannerSize reads projects, judges and visits from the query; absent ones default to
// the event's active projects and active general judges, and 12 visits per judge.
func (s *Server) plannerSize(c *fiber.Ctx) (size [3]int, goal string, err error) {
	s.node.Read(func(st *engine.State) {
		for _, p := range st.Projects {
			if p.Active {
				size[0]++
			}
		}
		for _, j := range st.JudgesInOrder() {
			if j.Active && st.IsGeneral(j) {
				size[1]++
			}
		}
		goal = st.Options.AssignmentGoal
	})
	size[2] = 12
	for i, name := range []string{"projects", "judges", "visits"} {
		v := c.Query(name)
		if v == "" {
			continue
		}
		n, e := strconv.Atoi(v)
		if e != nil || n < 1 || n > plannerMaxSize {
			return size, goal, badRequest("%s must be a whole number from 1 to %d", name, plannerMaxSize)
		}
		size[i] = n
	}
	if size[0] < 2 || size[1] < 1 {
		return size, goal, badRequest("the planner needs at least 2 projects and 1 judge (add them, or give ?projects=&judges=)")
	}
	return size, goal, nil
}

func (s *Server) plannerEstimate(c *fiber.Ctx) error {
	size, goal, err := s.plannerSize(c)
	if err != nil {
		return err
	}
	v, err := s.ext.planner.estimate(size)
	if err != nil {
		return err
	}
	v.Current = goal
	return c.JSON(v)
}

// estimate returns the remembered estimate for size, or makes it.
func (p *planner) estimate(size [3]int) (plannerView, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.done[size]; ok {
		return v, nil
	}
	cfg := simulate.DefaultConfig()
	cfg.Projects, cfg.Judges, cfg.Visits = size[0], size[1], size[2]
	goals := []string{engine.GoalPodium, engine.GoalField}
	runs := make([][]simulate.Run, len(goals))
	stop, finished := make(chan struct{}), make(chan struct{})
	var once sync.Once
	halt := func() { once.Do(func() { close(stop) }) }
	timer := time.AfterFunc(plannerBudget, halt)
	defer func() {
		timer.Stop()
		close(finished)
	}()
	go func() {
		select {
		case <-p.stopc: // shutting down
			halt()
		case <-finished:
		}
	}()
seeds:
	for seed := uint64(1); seed <= plannerSeeds; seed++ {
		var pair []simulate.Run
		for _, g := range goals {
			cfg.Goal = g
			r, err := simulate.RunOnUntil(cfg, seed, simulate.Local(seed), stop)
			if err != nil {
				break seeds // out of time (or shutting down); an engine error cannot happen on a fresh engine
			}
			pair = append(pair, r)
		}
		for i, r := range pair {
			runs[i] = append(runs[i], r)
		}
	}
	if len(runs[0]) < plannerMinSeeds {
		return plannerView{}, &httpError{status: fiber.StatusUnprocessableEntity,
			msg: "this event is too large for a quick estimate: run podium simulate with its size (docs/behaviour.md#simulation)"}
	}
	v := plannerView{Projects: size[0], Judges: size[1], Visits: size[2], Seeds: len(runs[0]), Goals: map[string]plannerGoal{}}
	for i, g := range goals {
		sum := simulate.Summarize(cfg, runs[i])
		v.Goals[g] = plannerGoal{
			Top10: plannerRange{sum.Top10.Mean, sum.Top10.CI},
			Top3:  plannerRange{sum.Top3.Mean, sum.Top3.CI},
			Rho:   plannerRange{sum.Rho.Mean, sum.Rho.CI},
		}
	}
	if len(p.done) >= plannerCache {
		clear(p.done)
	}
	p.done[size] = v
	return v, nil
}
