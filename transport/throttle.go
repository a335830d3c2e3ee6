package transport

import (
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/rs/zerolog"

	"podium/engine"
)

// Throttling beyond the options' per-IP request limits (docs/behaviour.md#authentication, #operations). The decisions are
// in docs/behaviour.md ("Security and limits"); in short:
//
//   - Judge-code logins: at most max_req_per_min (options) per minute per address, IPv6
//     grouped by /64 (auth.go's throttle). Every failure also takes a token from a global bucket
//     (loginGlobalRate per second, loginGlobalBurst deep). While that bucket is empty the
//     server is being guessed at from many addresses: an address that already failed
//     loginFloodFails times this minute is refused before its code is checked, so each
//     address gets a couple of guesses a minute, while judges on addresses without
//     failures (who type their code right) log in as usual.
//   - A judge's writes: a token bucket per judge (Config.JudgeWritesPerSec, default 10
//     per second, judgeWriteBurst deep).
//   - Refused requests are counted by reason (RequestRejected) and their log lines are
//     limited to one per second per route and address, with the count of the others.

const (
	loginFloodFails  = 2 // failures per minute after which an address waits during a flood
	loginGlobalRate  = 2 // failed judge logins per second, all addresses together
	loginGlobalBurst = 120

	defaultJudgeWritesPerSec = 10
	judgeWriteBurst          = 60 // writes a judge may make at once before the rate applies
)

// Reasons of RequestRejected (the metric's label values).
const (
	RejectLoginIP      = "login_ip"       // an address's failed-login budget
	RejectLoginFlood   = "login_flood"    // the global failed-login budget
	RejectJudgeWrites  = "judge_writes"   // a judge's write budget
	RejectBodyTooLarge = "body_too_large" // 413
	RejectMediaType    = "media_type"     // 415
	RejectWSFull       = "ws_full"        // websocket cap (503)
	RejectWSPerIP      = "ws_per_ip"      // websocket cap per address (429)
)

// ipKey is the throttling key of a client address: IPv4 as is, IPv6 by its /64 (one
// customer's network hands out a whole /64).
func ipKey(ip string) string {
	p := net.ParseIP(ip)
	if p == nil || p.To4() != nil {
		return ip
	}
	return p.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// bucket is a token bucket.
type bucket struct {
	tokens float64
	at     time.Time
}

// take refills b at rate per second up to burst and takes one token if there is one.
func (b *bucket) take(now time.Time, rate, burst float64) bool {
	b.refill(now, rate, burst)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (b *bucket) refill(now time.Time, rate, burst float64) {
	if b.at.IsZero() {
		b.tokens = burst
	} else {
		b.tokens = min(burst, b.tokens+now.Sub(b.at).Seconds()*rate)
	}
	b.at = now
}

// loginGuard holds the failed judge-login budgets.
type loginGuard struct {
	fails       *limiter // per address key, one-minute windows
	rate, burst float64  // global failure budget

	mu     sync.Mutex
	global bucket
}

func newLoginGuard() *loginGuard {
	return &loginGuard{fails: newLimiter(time.Minute), rate: loginGlobalRate, burst: loginGlobalBurst}
}

// withLoginBudget replaces the global failed-login budget (tests).
func withLoginBudget(rate, burst float64) Option {
	return func(s *Server) { s.logins.rate, s.logins.burst = rate, burst }
}

// withWriteIdle replaces the idle write timeout (tests).
func withWriteIdle(d time.Duration) Option { return func(s *Server) { s.writeIdle = d } }

// withJudgeWriteLimit replaces the judge write budget (tests).
func withJudgeWriteLimit(rate, burst float64) Option {
	return func(s *Server) { s.judgeWrite.rate, s.judgeWrite.burst = rate, burst }
}

// check says whether an attempt from key may be checked at all: "" when it may, else the
// reject reason and the seconds to wait.
func (g *loginGuard) check(key string) (reason string, retry int) {
	n, retry := g.fails.peek(key)
	if n >= loginFloodFails && g.flooded() {
		return RejectLoginFlood, retry
	}
	return "", 0
}

// flooded reports whether the global failure budget is spent.
func (g *loginGuard) flooded() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.global.refill(time.Now(), g.rate, g.burst)
	return g.global.tokens < 1
}

// failed records a failed attempt from key.
func (g *loginGuard) failed(key string) {
	g.fails.hit(key)
	g.mu.Lock()
	g.global.take(time.Now(), g.rate, g.burst)
	g.mu.Unlock()
}

// writeLimiter is a token bucket per judge.
type writeLimiter struct {
	rate, burst float64

	mu    sync.Mutex
	b     map[engine.ID]*bucket
	sweep time.Time
}

func newWriteLimiter(perSec int) *writeLimiter {
	if perSec <= 0 {
		perSec = defaultJudgeWritesPerSec
	}
	return &writeLimiter{rate: float64(perSec), burst: max(float64(perSec), judgeWriteBurst), b: map[engine.ID]*bucket{}}
}

// allow takes one write from judge's budget.
func (w *writeLimiter) allow(judge engine.ID) bool {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if now.Sub(w.sweep) > time.Minute { // full buckets carry no information
		for id, b := range w.b {
			if now.Sub(b.at) > 10*time.Second {
				delete(w.b, id)
			}
		}
		w.sweep = now
	}
	b := w.b[judge]
	if b == nil {
		b = &bucket{}
		w.b[judge] = b
	}
	return b.take(now, w.rate, w.burst)
}

// limitJudgeWrites refuses a judge's write over its budget (429). Reads are free.
func (s *Server) limitJudgeWrites(c *fiber.Ctx, judge engine.ID) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return nil
	}
	if s.judgeWrite.allow(judge) {
		return nil
	}
	s.obs.RequestRejected(RejectJudgeWrites)
	return &httpError{status: fiber.StatusTooManyRequests, msg: "too many changes; slow down", retryAfter: 1}
}

// lineLimiter lets one log line a second through per key and counts the others.
type lineLimiter struct {
	mu    sync.Mutex
	lines map[string]*lineWindow
	sweep time.Time
}

type lineWindow struct {
	at         time.Time
	suppressed int
}

func newLineLimiter() *lineLimiter { return &lineLimiter{lines: map[string]*lineWindow{}} }

// allow reports whether a line for key may be written now and how many lines for key
// were dropped since the last one written.
func (l *lineLimiter) allow(key string) (ok bool, dropped int) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.sweep) > 5*time.Second {
		for k, w := range l.lines {
			if now.Sub(w.at) > 5*time.Second {
				delete(l.lines, k)
			}
		}
		l.sweep = now
	}
	w := l.lines[key]
	if w == nil {
		l.lines[key] = &lineWindow{at: now}
		return true, 0
	}
	if now.Sub(w.at) < time.Second {
		w.suppressed++
		return false, 0
	}
	dropped = w.suppressed
	w.at, w.suppressed = now, 0
	return true, dropped
}

// logRequest writes the request's line (see requestLog): every line of a client error
// (4xx) goes through the per route and address limiter.
func (s *Server) logRequest(ev *zerolog.Event, route, method string, status int, d time.Duration, ip string) {
	if status >= 400 && status < 500 {
		ok, dropped := s.lines.allow(route + " " + ip)
		if !ok {
			ev.Discard()
			return
		}
		if dropped > 0 {
			ev = ev.Int("suppressed", dropped)
		}
	}
	ev.Str("method", method).Str("route", route).Int("status", status).
		Float64("duration_ms", float64(d.Microseconds())/1000).Str("ip", ip).Msg("request")
}

// tooManyLogins is the 429 of a throttled login: the message says how long to wait
// ("try again in 40 s"), as Retry-After does (docs/behaviour.md#security-and-limits).
func tooManyLogins(what string, retry int) *httpError {
	return &httpError{status: fiber.StatusTooManyRequests, msg: what + "; try again in " + waitInWords(retry), retryAfter: retry}
}

// waitInWords says a wait of secs seconds the way a person reads it: "40 s", "2 min".
func waitInWords(secs int) string {
	switch {
	case secs < 1:
		return "1 s"
	case secs < 120:
		return strconv.Itoa(secs) + " s"
	default:
		return strconv.Itoa((secs+59)/60) + " min"
	}
}
