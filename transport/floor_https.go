package transport

import (
	"net"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

// Judges on plain http (docs/behaviour.md#trust-on-the-floor): a phone that reaches the
// server over plain http from another machine gets no service worker, so the judge
// app cannot open offline. The server notes such judges and the dashboard's Overview
// says how many, what it costs and how to fix it.

// plainWindow is how long a judge counts after its last plain-http request.
const plainWindow = 10 * time.Minute

// plainJudges remembers when each judge last reached the server over plain http from
// another machine.
type plainJudges struct {
	mu   sync.Mutex
	last map[engine.ID]time.Time
}

// note records a judge's request unless it came over TLS or from this machine.
func (s *Server) notePlainJudge(c *fiber.Ctx, id engine.ID) {
	if s.overTLS(c) {
		return
	}
	if ip := net.ParseIP(s.clientIP(c)); ip == nil || ip.IsLoopback() {
		return
	}
	p := &s.plain
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[engine.ID]time.Time{}
	}
	if len(p.last) > 4096 { // bounded: forget the ones outside the window
		for k, t := range p.last {
			if now.Sub(t) > plainWindow {
				delete(p.last, k)
			}
		}
	}
	p.last[id] = now
}

// count returns how many judges made a plain-http request within the window.
func (p *plainJudges) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, t := range p.last {
		if time.Since(t) <= plainWindow {
			n++
		}
	}
	return n
}

// floorHTTPS handles GET /api/admin/floor-https.
func (s *Server) floorHTTPS(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"tls": s.overTLS(c), "plain_http_judges": s.plain.count(), "window_minutes": int(plainWindow / time.Minute)})
}
