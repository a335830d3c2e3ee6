package load

import (
	"sync"
	"time"
)

// ledger is what the clients know about the server's state: every write the server
// acknowledged, every write whose outcome is unknown (the request got no answer), and
// the client-side intervals in which a judge may have held a project.
type ledger struct {
	mu         sync.Mutex
	judges     map[string]*judgeRec // by id
	judgeOrder []string
	projects   map[string]string // acknowledged project creations: id -> name
	holds      map[string][]hold // project -> intervals a judge of ours may have held it
}

// hold is a client-side interval [start, end] (Unix ms) in which judge may have held a
// project: from the moment the request that could assign it was sent to the moment the
// request that released it was answered. end 0 means still open.
type hold struct {
	judge      string
	start, end int64
}

type finishRec struct {
	notes   string
	starred bool
}

type skipRec struct {
	project, reason string
}

// judgeRec is one judge as the clients know it. Its fields are written by the judge's
// own goroutine and read by the sampler and the verifiers, hence the lock.
type judgeRec struct {
	mu    sync.Mutex
	id    string
	name  string
	email string
	code  string
	token string // acknowledged login (empty: none)
	xff   string

	finishes    map[string]finishRec // acknowledged (or verified-applied) finishes by project
	finishOrder []string
	dupFinishes []string             // projects whose finish was acknowledged twice
	doubtFinish map[string]finishRec // sent, never answered
	skips       []skipRec            // acknowledged skips
	excluded    map[string]bool      // projects skipped (acknowledged or in doubt)
	rankAcked   []string             // last acknowledged ranking (nil: none)
	rankDoubt   [][]string           // rankings sent after it and never answered

	holding    string // project of the open hold
	assignFrom int64  // earliest time the next assignment could have been made
}

func newLedger() *ledger {
	return &ledger{judges: map[string]*judgeRec{}, projects: map[string]string{}, holds: map[string][]hold{}}
}

func (l *ledger) addJudge(j *judgeRec) {
	if j.finishes == nil {
		j.finishes = map[string]finishRec{}
		j.doubtFinish = map[string]finishRec{}
		j.excluded = map[string]bool{}
	}
	l.mu.Lock()
	if _, dup := l.judges[j.id]; !dup {
		l.judgeOrder = append(l.judgeOrder, j.id)
	}
	l.judges[j.id] = j
	l.mu.Unlock()
}

func (l *ledger) addProject(id, name string) {
	l.mu.Lock()
	l.projects[id] = name
	l.mu.Unlock()
}

func (l *ledger) judgeList() []*judgeRec {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*judgeRec, 0, len(l.judgeOrder))
	for _, id := range l.judgeOrder {
		out = append(out, l.judges[id])
	}
	return out
}

func (l *ledger) openHold(project, judge string, start int64) {
	l.mu.Lock()
	l.holds[project] = append(l.holds[project], hold{judge: judge, start: start})
	l.mu.Unlock()
}

func (l *ledger) closeHold(project, judge string, end int64) {
	l.mu.Lock()
	hs := l.holds[project]
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].judge == judge && hs[i].end == 0 {
			hs[i].end = end
			break
		}
	}
	l.mu.Unlock()
}

// heldDuring reports whether any of our judges other than except may have held project
// at some time in [t0, t1] (Unix ms), with slack ms of tolerance for clock granularity.
func (l *ledger) heldDuring(project, except string, t0, t1, slack int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, h := range l.holds[project] {
		if h.judge == except {
			continue
		}
		if h.start <= t1+slack && (h.end == 0 || h.end >= t0-slack) {
			return true
		}
	}
	return false
}

// holdStart returns the start of judge's open hold on project (0: none).
func (l *ledger) holdStart(project, judge string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	hs := l.holds[project]
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].judge == judge && hs[i].end == 0 {
			return hs[i].start
		}
	}
	return 0
}

func nowMs() int64 { return time.Now().UnixMilli() }
