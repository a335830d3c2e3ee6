package load

import (
	"sync/atomic"
	"time"

	"podium/loadtest/client"
	"podium/loadtest/stats"
)

// Several server URLs (the nodes of a cluster, or a load balancer's backends): judges
// are spread over them round-robin, judge i starting on node i mod n. A judge sticks to
// its node like a phone to the address it resolved, and moves to the next node only when
// a request gets no answer at all (connection refused or reset, timeout): a 5xx or a 503
// while the cluster has no leader is an answer, and the judge stays. Setup, admin checks,
// readers, watchers and the clock toggler use the first URL (in a cluster started by the
// tool, a follower).

// nodeSet holds one client per URL and each judge's current node.
type nodeSet struct {
	urls    []string
	clients []*client.Client
	stats   []*nodeStats
	judge   map[string]*atomic.Int32 // judge id -> index into clients; fixed key set
}

type nodeStats struct {
	judges   atomic.Int64 // judges that started on the node
	requests atomic.Int64 // judge requests sent to it
	noAnswer atomic.Int64 // of which got no answer
	movedOut atomic.Int64 // judges that left it after no answer
	movedIn  atomic.Int64 // judges that came to it from another node
}

// NodeReport is one URL's share of the judge traffic.
type NodeReport struct {
	URL      string `json:"url"`
	Judges   int64  `json:"judges_at_start"`
	Requests int64  `json:"judge_requests"`
	NoAnswer int64  `json:"no_answer"`
	MovedOut int64  `json:"judges_moved_away"`
	MovedIn  int64  `json:"judges_moved_in"`
	Killed   bool   `json:"killed,omitempty"`
}

// newNodeSet binds a client per URL (sharing st) and assigns the judges round-robin in
// the given order.
func newNodeSet(urls []string, password string, maxConns int, st *stats.Routes, judges []*judgeRec) *nodeSet {
	ns := &nodeSet{urls: urls, judge: make(map[string]*atomic.Int32, len(judges))}
	for _, u := range urls {
		ns.clients = append(ns.clients, client.New(u, password, client.NewHostClient(u, maxConns, 30*time.Second), st))
		ns.stats = append(ns.stats, &nodeStats{})
	}
	for i, j := range judges {
		v := &atomic.Int32{}
		v.Store(int32(i % len(urls)))
		ns.judge[j.id] = v
		ns.stats[i%len(urls)].judges.Add(1)
	}
	return ns
}

// pick returns judge id's current node.
func (ns *nodeSet) pick(id string) (int, *client.Client) {
	v := ns.judge[id]
	if v == nil {
		return 0, ns.clients[0]
	}
	i := int(v.Load())
	return i, ns.clients[i]
}

// done records a judge request to node i; with no answer the judge moves to the next
// node (unless another goroutine moved it meanwhile).
func (ns *nodeSet) done(id string, i int, answered bool) {
	st := ns.stats[i]
	st.requests.Add(1)
	if answered {
		return
	}
	st.noAnswer.Add(1)
	if len(ns.clients) < 2 {
		return
	}
	if v := ns.judge[id]; v != nil {
		next := (i + 1) % len(ns.clients)
		if v.CompareAndSwap(int32(i), int32(next)) {
			st.movedOut.Add(1)
			ns.stats[next].movedIn.Add(1)
		}
	}
}

func (ns *nodeSet) report(killed string) []NodeReport {
	out := make([]NodeReport, len(ns.urls))
	for i, u := range ns.urls {
		st := ns.stats[i]
		out[i] = NodeReport{URL: u, Judges: st.judges.Load(), Requests: st.requests.Load(), NoAnswer: st.noAnswer.Load(),
			MovedOut: st.movedOut.Load(), MovedIn: st.movedIn.Load(), Killed: killed != "" && u == killed}
	}
	return out
}

func (ns *nodeSet) closeIdle() {
	for _, c := range ns.clients {
		c.CloseIdle()
	}
}
