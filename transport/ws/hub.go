package ws

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	fastws "github.com/fasthttp/websocket"
	"github.com/rs/zerolog"

	"podium/engine"
)

// The hub pushes events to websocket clients (docs/behaviour.md#realtime). It is shaped after NATS's client
// handling: the hub never blocks on a socket, encodes each message once for every
// recipient, and disconnects a client that falls 64 deliveries behind. The engine never
// waits for the hub: events arrive through a buffered channel that drops when full.
// How a connection writes without a goroutine of its own is in wsconn.go.
//
// A delivery is every message one dispatch (one or more engine batches) has for that
// client, in order, written with one system call. A CSV import of 500 projects is then
// one delivery of 500 expo messages, not 500 entries that would overflow every backlog at
// once; a client is slow when 64 deliveries wait for it.
//
// A broadcast is written by up to 2×GOMAXPROCS goroutines, each over an interleaved
// share of the connections (a non-blocking write per socket); smaller deliveries are
// written by the hub goroutine itself. Events for an audience with no connection (admin
// notifications when no dashboard is open, a judge without a socket, anything when
// nobody is connected) are not encoded at all.

const (
	wsQueueLen     = 64      // deliveries queued per connection before it counts as slow
	wsMaxInbound   = 4 << 10 // bytes; a bigger inbound message closes the connection
	wsEventBacklog = 4096    // event batches waiting for the hub goroutine
	wsDrainMax     = 256     // batches the hub coalesces into one dispatch
	wsFanOutMin    = 256     // recipients from which a delivery is written by several goroutines

	roleAnonymous = "anonymous"
	roleJudge     = "judge"
	roleAdmin     = "admin"

	dropSlow     = "slow"
	dropOversize = "oversize"
	dropIdle     = "idle"
)

// Observer receives websocket measurements (implemented by package metrics).
type Observer interface {
	// WSConnections adds delta to the open connections of role.
	WSConnections(role string, delta int)
	// WSSent counts n messages of type typ written to connections (one each).
	WSSent(typ string, n int)
	// WSDropped counts a client the server disconnected: slow, oversize or idle.
	WSDropped(reason string)
	// WSBroadcast records the time to write one dispatch to all its recipients (or
	// their backlogs).
	WSBroadcast(d time.Duration)
	// WSEventsLost counts event batches dropped because the hub's backlog was full.
	WSEventsLost(n int)
}

type nopObserver struct{}

func (nopObserver) WSConnections(string, int) {}
func (nopObserver) WSSent(string, int)        {}
func (nopObserver) WSDropped(string)          {}
func (nopObserver) WSBroadcast(time.Duration) {}
func (nopObserver) WSEventsLost(int)          {}

// Hub routes events to websocket clients and owns their connections.
type Hub struct {
	state StateReader
	auth  Authenticator
	log   zerolog.Logger
	t     Timings
	obs   Observer
	max   int

	events  chan []engine.Event
	stop    chan struct{}
	stopped chan struct{}

	mu      sync.RWMutex
	closing bool
	clients []*client // every registered client; client.idx is its position
	admins  map[*client]struct{}
	judges  map[engine.ID]map[*client]struct{}
	count   atomic.Int64   // len(clients), read without the lock
	perIP   map[string]int // open non-admin connections per client IP
	maxIP   int

	handlers sync.WaitGroup // running connection handlers

	// hub goroutine only
	lastStats   engine.AdminStats
	statsSent   bool
	statsAt     time.Time
	statsDirty  bool
	statsTimer  *time.Timer
	statsTimerC <-chan time.Time
	scratch     [][]byte // one frame buffer per fan-out goroutine
}

// New returns a hub reading state and checking "auth" messages with auth; obs may be
// nil. Run starts its goroutine.
func New(cfg Config, state StateReader, auth Authenticator, obs Observer, log zerolog.Logger) *Hub {
	if obs == nil {
		obs = nopObserver{}
	}
	return &Hub{
		state: state, auth: auth, log: log, t: cfg.Timings.withDefaults(), obs: obs,
		max: cfg.MaxConnections, maxIP: cfg.MaxPerIP, perIP: map[string]int{},
		events: make(chan []engine.Event, wsEventBacklog),
		stop:   make(chan struct{}), stopped: make(chan struct{}),
		admins: map[*client]struct{}{}, judges: map[engine.ID]map[*client]struct{}{},
	}
}

// Publish is the node's event sink. It runs in the writer goroutine after durability and
// never blocks: when the hub's backlog is full the batch is dropped and counted.
func (h *Hub) Publish(evs []engine.Event) {
	if h.count.Load() == 0 {
		// Nobody to tell. A client registering now reads the state after this
		// change (the engine applied it before publishing) in its hello.
		return
	}
	select {
	case <-h.stop: // shut down: nobody to tell
		return
	default:
	}
	select {
	case h.events <- evs:
	default:
		h.obs.WSEventsLost(1)
	}
}

// wsAdminRoom is how many admin sockets may open beyond MAX_WS_CONNECTIONS: anonymous
// and judge sockets can never lock the organisers' dashboards out (docs/behaviour.md#operations).
const wsAdminRoom = 64

// admitLocked says why a new connection from ip (an admin or not) cannot open: nil when
// it can, ErrFull or ErrPerIP. Call with h.mu held.
func (h *Hub) admitLocked(ip string, admin bool) error {
	if admin {
		if len(h.clients) >= h.max+wsAdminRoom {
			return ErrFull
		}
		return nil
	}
	if len(h.clients)-len(h.admins) >= h.max {
		return ErrFull
	}
	if h.perIP[ip] >= h.maxIP {
		return ErrPerIP
	}
	return nil
}

// Admit says why a new connection from ip (an admin or not) cannot open: nil when it
// can, ErrFull or ErrPerIP. It vets the upgrade request; the connection is checked
// again when it registers.
func (h *Hub) Admit(ip string, admin bool) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.admitLocked(ip, admin)
}

var (
	// ErrFull refuses a connection when the server has as many as it takes.
	ErrFull = errors.New("too many websocket connections")
	// ErrPerIP refuses a connection when its client IP has as many as it may.
	ErrPerIP = errors.New("too many websocket connections from this address")
)

// Run is the hub goroutine: it takes event batches (coalescing what has piled up) and
// sends the coalesced admin stats.
func (h *Hub) Run() {
	defer close(h.stopped)
	check := time.NewTicker(h.t.Ping)
	defer check.Stop()
	for {
		select {
		case <-check.C:
			h.revalidate()
			h.pingAll()
		case evs := <-h.events:
			all := evs
		drain:
			for i := 0; i < wsDrainMax; i++ {
				select {
				case more := <-h.events:
					all = append(all[:len(all):len(all)], more...)
				default:
					break drain
				}
			}
			h.dispatch(coalesce(all))
			h.markStats()
		case <-h.statsTimerC:
			h.statsTimerC = nil
			h.sendStats()
		case <-h.stop:
			if h.statsTimer != nil {
				h.statsTimer.Stop()
			}
			return
		}
	}
}

// revalidate ends the connections whose session ended since they proved it: admin
// logout or expiry, judge logout, a newer login of the judge, or the judge's deletion.
func (h *Hub) revalidate() {
	type proof struct {
		c *client
		r Roles
	}
	var list []proof
	h.mu.RLock()
	for _, c := range h.clients {
		if c.AdminHash != "" || c.JudgeHash != "" {
			list = append(list, proof{c, c.Roles})
		}
	}
	h.mu.RUnlock()
	if len(list) == 0 {
		return
	}
	now := time.Now().UnixMilli()
	var ended []*client
	h.state.Read(func(s *engine.State) {
		for _, p := range list {
			valid := p.r.AdminHash == "" || s.AdminSessionValid(p.r.AdminHash, now)
			if p.r.JudgeHash != "" {
				j, ok := s.JudgeByToken(p.r.JudgeHash)
				valid = valid && ok && j.ID == p.r.Judge
			}
			if !valid {
				ended = append(ended, p.c)
			}
		}
	})
	for _, c := range ended {
		c.kill("", closeMsg(fastws.ClosePolicyViolation, "session ended"))
	}
}

// dispatch encodes each event once and hands every client one delivery with the
// messages meant for it, in order. Clients with the same view share one slice: everyone
// messages for anonymous clients, everyone+admin messages for admins, and per judge the
// everyone messages plus that judge's own. Events whose audience has no connection are
// skipped before they are encoded.
func (h *Hub) dispatch(evs []engine.Event) {
	type addressed struct {
		m  *wsMsg
		to engine.Audience
		j  engine.ID
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	msgs := make([]addressed, 0, len(evs))
	var forAll, forAdmins []*wsMsg
	judgeEvents := false
	for _, ev := range evs {
		switch {
		case ev.To == engine.ToEveryone && len(h.clients) == 0,
			ev.To == engine.ToAdmins && len(h.admins) == 0,
			ev.To == engine.ToJudge && len(h.judges[ev.Judge]) == 0:
			continue
		}
		m, err := newWSMsg(ev.Type, ev.Data)
		if err != nil {
			h.log.Error().Err(err).Str("type", ev.Type).Msg("encode websocket event")
			continue
		}
		msgs = append(msgs, addressed{m, ev.To, ev.Judge})
		switch ev.To {
		case engine.ToEveryone:
			forAll = append(forAll, m)
			forAdmins = append(forAdmins, m)
		case engine.ToAdmins:
			forAdmins = append(forAdmins, m)
		case engine.ToJudge:
			judgeEvents = true
		}
	}
	if len(msgs) == 0 {
		return
	}
	// view builds the delivery of a client that is admin and/or judge j.
	view := func(admin bool, j engine.ID) []*wsMsg {
		var out []*wsMsg
		for _, a := range msgs {
			if a.to == engine.ToEveryone || (admin && a.to == engine.ToAdmins) || (a.to == engine.ToJudge && a.j == j) {
				out = append(out, a.m)
			}
		}
		return out
	}
	start := time.Now()
	var forJudge map[engine.ID][]*wsMsg
	if judgeEvents {
		forJudge = map[engine.ID][]*wsMsg{}
		for _, a := range msgs {
			if a.to != engine.ToJudge {
				continue
			}
			if _, done := forJudge[a.j]; !done {
				forJudge[a.j] = view(false, a.j)
			}
		}
	}
	pick := func(c *client) []*wsMsg {
		switch {
		case c.Admin && forJudge[c.Judge] != nil:
			return view(true, c.Judge)
		case c.Admin:
			return forAdmins
		case forJudge[c.Judge] != nil:
			return forJudge[c.Judge]
		}
		return forAll
	}
	if len(forAll) > 0 {
		h.fanOut(h.clients, pick)
	} else { // only admins and some judges have something: skip everyone else
		some := make([]*client, 0, len(h.admins))
		for c := range h.admins {
			some = append(some, c)
		}
		for j := range forJudge {
			for c := range h.judges[j] {
				if !c.Admin {
					some = append(some, c)
				}
			}
		}
		h.fanOut(some, pick)
	}
	h.obs.WSBroadcast(time.Since(start))
}

// fanOut writes pick(c) to every client of list: on the calling goroutine for a few
// clients, else on 2×GOMAXPROCS goroutines over interleaved shares of the list. Writes
// never block (see client.deliver), so one slow socket holds up nobody. Hub goroutine
// only (it owns the scratch buffers).
func (h *Hub) fanOut(list []*client, pick func(c *client) []*wsMsg) {
	w := 1
	if len(list) >= wsFanOutMin {
		w = 2 * runtime.GOMAXPROCS(0)
	}
	for len(h.scratch) < w {
		h.scratch = append(h.scratch, nil)
	}
	tallies := make([]sentTally, w)
	run := func(k int) {
		t := sentTally{}
		buf := &h.scratch[k]
		for i := k; i < len(list); i += w {
			c := list[i]
			if d := pick(c); len(d) > 0 && c.deliver(d, buf) > 0 {
				t.add(d)
			}
		}
		if cap(*buf) > 64<<10 { // a big import's frames: do not keep them
			*buf = nil
		}
		tallies[k] = t
	}
	if w == 1 {
		run(0)
	} else {
		var wg sync.WaitGroup
		for k := 1; k < w; k++ {
			wg.Add(1)
			go func() { defer wg.Done(); run(k) }()
		}
		run(0)
		wg.Wait()
	}
	for _, t := range tallies {
		for _, e := range t {
			for _, m := range e.d {
				if m.op == 0 {
					h.obs.WSSent(m.typ, e.n)
				}
			}
		}
	}
}

// sentTally counts, per distinct delivery slice, the clients that took it.
type sentTally map[**wsMsg]*sentCount

type sentCount struct {
	d []*wsMsg
	n int
}

func (t sentTally) add(d []*wsMsg) {
	if e := t[&d[0]]; e != nil {
		e.n++
		return
	}
	t[&d[0]] = &sentCount{d: d, n: 1}
}

// pingAll pings every connection whose socket is not busy (hub goroutine).
func (h *Hub) pingAll() {
	h.mu.RLock()
	defer h.mu.RUnlock()
	ping := []*wsMsg{pingMsg}
	h.fanOut(h.clients, func(*client) []*wsMsg { return ping })
}

// coalesce merges what dashboards need only once per dispatch: all audit lines into one
// "log" message, and "changed" notifications per kind into one (ids merged; an empty id
// list means "reload everything" and wins). Other events keep their order.
func coalesce(evs []engine.Event) []engine.Event {
	if len(evs) < 2 {
		return evs
	}
	out := make([]engine.Event, 0, len(evs))
	logAt := -1
	changedAt := map[string]int{}
	for _, ev := range evs {
		switch d := ev.Data.(type) {
		case engine.LogEvent:
			if ev.Type != engine.EvLog || ev.To != engine.ToAdmins {
				break
			}
			if logAt < 0 {
				logAt = len(out)
				out = append(out, engine.Event{Type: ev.Type, To: ev.To, Data: engine.LogEvent{Lines: append([]string{}, d.Lines...)}})
			} else {
				m := out[logAt].Data.(engine.LogEvent)
				m.Lines = append(m.Lines, d.Lines...)
				out[logAt].Data = m
			}
			continue
		case engine.ChangedEvent:
			if ev.Type != engine.EvChanged || ev.To != engine.ToAdmins {
				break
			}
			at, seen := changedAt[d.Kind]
			if !seen {
				changedAt[d.Kind] = len(out)
				out = append(out, engine.Event{Type: ev.Type, To: ev.To, Data: engine.ChangedEvent{Kind: d.Kind, IDs: append([]engine.ID{}, d.IDs...)}})
				continue
			}
			m := out[at].Data.(engine.ChangedEvent)
			if len(m.IDs) > 0 {
				if len(d.IDs) == 0 {
					m.IDs = []engine.ID{}
				} else {
					m.IDs = mergeIDs(m.IDs, d.IDs)
				}
			}
			out[at].Data = m
			continue
		}
		out = append(out, ev)
	}
	return out
}

func mergeIDs(a, b []engine.ID) []engine.ID {
	seen := make(map[engine.ID]bool, len(a)+len(b))
	for _, id := range a {
		seen[id] = true
	}
	for _, id := range b {
		if !seen[id] {
			seen[id] = true
			a = append(a, id)
		}
	}
	return a
}

// markStats notes that the state changed and arms the stats timer so that admins get at
// most one stats message per StatsEvery.
func (h *Hub) markStats() {
	h.statsDirty = true
	if h.statsTimerC != nil {
		return
	}
	wait := time.Until(h.statsAt.Add(h.t.StatsEvery))
	if wait < 0 {
		wait = 0
	}
	if h.statsTimer == nil {
		h.statsTimer = time.NewTimer(wait)
	} else {
		h.statsTimer.Reset(wait)
	}
	h.statsTimerC = h.statsTimer.C
}

// sendStats sends the admin statistics when they changed since the last ones sent.
func (h *Hub) sendStats() {
	if !h.statsDirty {
		return
	}
	h.statsDirty = false
	h.mu.RLock()
	n := len(h.admins)
	h.mu.RUnlock()
	if n == 0 {
		return
	}
	var st engine.AdminStats
	h.state.Read(func(s *engine.State) { st = s.AdminStats("") })
	h.statsAt = time.Now()
	if h.statsSent && st == h.lastStats {
		return
	}
	h.lastStats, h.statsSent = st, true
	h.dispatch([]engine.Event{{Type: engine.EvStats, To: engine.ToAdmins, Data: st}})
}

// Shutdown closes every connection with 1001 (going away), stops the hub goroutine and
// waits for the connection handlers (hard-closing sockets that do not finish in time).
func (h *Hub) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		return nil
	}
	h.closing = true
	for _, c := range h.clients {
		c.kill("", closeMsg(fastws.CloseGoingAway, "server shutting down"))
	}
	h.mu.Unlock()
	close(h.stop)
	<-h.stopped

	done := make(chan struct{})
	go func() { h.handlers.Wait(); close(done) }()
	grace := time.NewTimer(2 * time.Second)
	defer grace.Stop()
	select {
	case <-done:
		return nil
	case <-grace.C:
	case <-ctx.Done():
	}
	h.mu.RLock()
	for _, c := range h.clients {
		_ = c.nc.SetDeadline(longAgo)
	}
	h.mu.RUnlock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
