package ws

import (
	"time"

	"podium/engine"
)

// The hub's registry of connections: who is connected with which roles, and the hello
// each one gets when it connects or proves a role.

// helloData is the data of a "hello" message; each field has the shape of the matching
// event's data. Judge fields appear only for a judge.
type helloData struct {
	Role         string                   `json:"role"`
	Clock        engine.ClockEvent        `json:"clock"`
	Deliberation engine.DeliberationEvent `json:"deliberation"`
	GroupInfo    engine.GroupInfo         `json:"group_info"`
	*helloJudge
}

type helloJudge struct {
	Current *engine.ID `json:"current"`
	Group   int        `json:"group"`
}

// register adds c with its roles and queues its hello (and, for an admin, the current
// stats). It refuses when the hub is closing or full. A registered client's handler
// must call h.handlers.Done when it returns.
func (h *Hub) register(c *client, r Roles) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing || h.admitLocked(c.ip, r.Admin) != nil {
		return false
	}
	h.handlers.Add(1) // under the lock with closing false: never concurrent with Wait from zero
	c.idx = len(h.clients)
	h.clients = append(h.clients, c)
	h.perIP[c.ip]++
	h.count.Store(int64(len(h.clients)))
	c.role = roleAnonymous
	h.obs.WSConnections(roleAnonymous, 1)
	h.setRolesLocked(c, r)
	return true
}

// authenticate adds roles to a connected client and sends a new hello.
func (h *Hub) authenticate(c *client, r Roles) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.registeredLocked(c) {
		return
	}
	if !r.Admin && c.Admin { // keep the admin role when a judge token is added
		r.Admin, r.AdminHash = true, c.AdminHash
	}
	if r.Judge.IsZero() {
		r.Judge, r.JudgeHash = c.Judge, c.JudgeHash
	}
	h.setRolesLocked(c, r)
}

// setRolesLocked updates c's roles and indexes and queues a hello built from the state
// read now. Holding the hub lock while reading keeps hello and events in order: an event
// is dispatched either before (hello already shows its effect) or after (c receives it).
func (h *Hub) setRolesLocked(c *client, r Roles) {
	if c.Admin != r.Admin {
		if r.Admin {
			h.admins[c] = struct{}{}
		} else {
			delete(h.admins, c)
		}
	}
	if r.Judge != c.Judge {
		h.removeJudgeLocked(c)
		if !r.Judge.IsZero() {
			set := h.judges[r.Judge]
			if set == nil {
				set = map[*client]struct{}{}
				h.judges[r.Judge] = set
			}
			set[c] = struct{}{}
		}
	}
	c.Roles = r
	if r := c.roleName(); r != c.role {
		h.obs.WSConnections(c.role, -1)
		h.obs.WSConnections(r, 1)
		c.role = r
	}
	hello := helloData{Role: c.role}
	var stats engine.AdminStats
	now := time.Now().UnixMilli()
	h.state.Read(func(s *engine.State) {
		clk := s.Options.Clock
		hello.Clock = engine.ClockEvent{Running: clk.Running, Time: clk.Elapsed(now), StartTime: clk.StartTime, PauseTime: clk.PauseTime}
		hello.Deliberation = engine.DeliberationEvent{On: s.Options.Deliberation}
		hello.GroupInfo = s.GroupInfoView()
		if !c.Judge.IsZero() {
			hj := &helloJudge{}
			if j, ok := s.Judges[c.Judge]; ok {
				hj.Group = j.Group
				if !j.Current.IsZero() {
					cur := j.Current
					hj.Current = &cur
				}
			}
			hello.helloJudge = hj
		}
		if c.Admin {
			stats = s.AdminStats("")
		}
	})
	var d []*wsMsg
	if m, err := newWSMsg("hello", hello); err == nil {
		d = append(d, m)
	}
	if c.Admin {
		if m, err := newWSMsg(engine.EvStats, stats); err == nil {
			d = append(d, m)
		}
	}
	var buf []byte
	if c.deliver(d, &buf) > 0 {
		for _, m := range d {
			h.obs.WSSent(m.typ, 1)
		}
	}
}

func (h *Hub) removeJudgeLocked(c *client) {
	if c.Judge.IsZero() {
		return
	}
	if set := h.judges[c.Judge]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(h.judges, c.Judge)
		}
	}
}

// unregister removes c from every index.
func (h *Hub) unregister(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.registeredLocked(c) {
		return
	}
	last := len(h.clients) - 1
	h.clients[c.idx] = h.clients[last]
	h.clients[c.idx].idx = c.idx
	h.clients[last] = nil
	h.clients = h.clients[:last]
	c.idx = -1
	delete(h.admins, c)
	if h.perIP[c.ip]--; h.perIP[c.ip] <= 0 {
		delete(h.perIP, c.ip)
	}
	h.removeJudgeLocked(c)
	h.count.Store(int64(len(h.clients)))
	h.obs.WSConnections(c.role, -1)
}

func (h *Hub) registeredLocked(c *client) bool {
	return c.idx >= 0 && c.idx < len(h.clients) && h.clients[c.idx] == c
}
