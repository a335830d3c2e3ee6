package transport

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/big"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"podium/engine"
)

const (
	// cookieJudge is the judge session cookie. It must not be called "token": Jury's web
	// client keeps a script-readable "token" cookie of its own, which a browser will not
	// let it overwrite while an HttpOnly one of that name exists (docs/behaviour.md#authentication).
	cookieJudge = "podium_judge"
	// judgeCookieMaxAge keeps a judge signed in on its phone for the event, across
	// browser and phone restarts (seconds; docs/behaviour.md#trust-on-the-floor).
	// Logout, deleting the judge or a new login (another device) ends it sooner.
	judgeCookieMaxAge = 14 * 24 * 3600
	// cookieJudgeOld is the name sessions started before the rename carry; it is still
	// read (after the Bearer header and cookieJudge) until those sessions end.
	cookieJudgeOld = "token"
	cookieAdmin    = "admin_session"

	localJudge = "judge_id"
	localAdmin = "admin"

	adminFailLimit = 10
)

func (s *Server) routesAuth(api fiber.Router) {
	api.Post("/judge/login", s.judgeLogin)
	api.Post("/admin/login", s.adminLogin)
	api.Post("/judge/auth", s.judgeAuth, ok)
	api.Post("/admin/auth", s.adminAuth, ok)
	api.Post("/judge/logout", s.judgeAuth, s.judgeLogout)
	api.Post("/admin/logout", s.adminAuth, s.adminLogout)
}

// newToken returns n crypto-random bytes, URL-safe base64 encoded.
func newToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashToken is how session tokens are stored: only their SHA-256.
func hashToken(t string) string {
	var hx [2 * sha256.Size]byte
	return string(appendTokenHash(hx[:0], t))
}

// appendTokenHash appends hashToken(t) to b. For the lookup on every judge request,
// into a buffer on the caller's stack: no allocation for tokens up to 128 bytes.
func appendTokenHash(b []byte, t string) []byte {
	var h [sha256.Size]byte
	var tb [128]byte
	if len(t) <= len(tb) {
		h = sha256.Sum256(tb[:copy(tb[:], t)])
	} else {
		h = sha256.Sum256([]byte(t))
	}
	return hex.AppendEncode(b, h[:])
}

// newLoginCodes returns n crypto-random 8-digit codes plus spares for the ones the
// engine skips (duplicates within the batch or codes already in use). n codes among 10^8
// collide about n²/2·10⁻⁸ times (50 for a 100,000-judge import), plus n·existing·10⁻⁸
// with the judges already there: n/16 + 16 spares cover that with a wide margin (the
// engine refuses the import when they run out).
func newLoginCodes(n int) []string {
	total := n + n/16 + 16
	out := make([]string, 0, total)
	max := big.NewInt(100000000)
	for i := 0; i < total; i++ {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
		out = append(out, fmt.Sprintf("%08d", v.Int64()))
	}
	return out
}

// cookie builds a session cookie; maxAge < 0 deletes it (an Expires in the past: fasthttp
// writes no Max-Age for negative values, so MaxAge alone would leave a session cookie).
func (s *Server) cookie(c *fiber.Ctx, name, value string, maxAge int, sameSite string) *fiber.Cookie {
	ck := &fiber.Cookie{
		Name: name, Value: value, Path: "/", HTTPOnly: true, SameSite: sameSite,
		Secure: s.cfg.SecureCookies || s.overTLS(c), MaxAge: maxAge,
	}
	if maxAge < 0 {
		ck.Expires = fasthttp.CookieExpireDelete
	}
	return ck
}

// overTLS reports whether the client reached us over TLS: directly, or through a
// TLS-terminating proxy listed in TRUSTED_PROXIES that says so in X-Forwarded-Proto.
func (s *Server) overTLS(c *fiber.Ctx) bool {
	if c.Context().IsTLS() {
		return true
	}
	if len(s.proxies) == 0 || !s.trusted(c.Context().RemoteIP()) {
		return false
	}
	proto, _, _ := strings.Cut(c.Get(fiber.HeaderXForwardedProto), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}

func (s *Server) judgeLogin(c *fiber.Ctx) error {
	if err := s.throttle(c, s.judgeLimit, "judge_login"); err != nil {
		return err
	}
	var req struct {
		Code *string `json:"code"`
	}
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	if err := need("code", req.Code != nil); err != nil {
		return err
	}
	// Codes are digits only: spaces a judge typed to group them ("7970 5407") go
	// (docs/behaviour.md#authentication).
	code := strings.Join(strings.Fields(*req.Code), "")
	key := ipKey(s.clientIP(c))
	if reason, retry := s.logins.check(key); reason != "" {
		s.obs.Throttled("judge_login")
		s.obs.RequestRejected(reason)
		return tooManyLogins("too many failed logins", retry)
	}
	var judge engine.ID
	found := false
	s.node.Read(func(st *engine.State) {
		if j, ok := st.JudgeByCode(code); ok && subtle.ConstantTimeCompare([]byte(j.Code), []byte(code)) == 1 {
			judge, found = j.ID, true
		}
	})
	if !found || code == "" {
		s.logins.failed(key)
		// 400, as Jury answers: its client shows "Invalid judging code" only on a 400.
		return badRequest("invalid code")
	}
	token := newToken(32)
	if _, err := s.node.Submit(c.UserContext(), engine.JudgeActor(judge), &engine.JudgeLogin{Judge: judge, TokenHash: hashToken(token)}); err != nil {
		return err
	}
	c.Cookie(s.cookie(c, cookieJudge, token, judgeCookieMaxAge, fiber.CookieSameSiteLaxMode))
	if c.Cookies(cookieJudgeOld) != "" {
		// A "token" cookie is either a pre-rename session (HttpOnly, which would stop Jury's
		// client from setting its own) or Jury's client's own, which it rewrites as soon as
		// this answer arrives. Either way it goes.
		c.Cookie(s.cookie(c, cookieJudgeOld, "", -1, fiber.CookieSameSiteLaxMode))
	}
	return c.JSON(fiber.Map{"token": token})
}

func (s *Server) adminLogin(c *fiber.Ctx) error {
	ip := ipKey(s.clientIP(c))
	if n, retry := s.adminFails.peek("admin:" + ip); n >= adminFailLimit {
		s.obs.Throttled("admin_login")
		return tooManyLogins("too many failed logins", retry)
	}
	var req struct {
		Password *string `json:"password"`
	}
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	if err := need("password", req.Password != nil); err != nil {
		return err
	}
	if !s.passwordOK(*req.Password) {
		s.adminFails.hit("admin:" + ip)
		return badRequest("invalid password") // 400, as Jury answers (docs/behaviour.md#authentication)
	}
	session := newToken(32)
	if _, err := s.node.Submit(c.UserContext(), engine.Admin, &engine.AdminLogin{SessionHash: hashToken(session)}); err != nil {
		return err
	}
	c.Cookie(s.cookie(c, cookieAdmin, session, engine.AdminSessionTTL/1000, fiber.CookieSameSiteStrictMode))
	return ok(c)
}

func (s *Server) passwordOK(pw string) bool {
	want := sha256.Sum256([]byte(s.cfg.AdminPassword))
	got := sha256.Sum256([]byte(pw))
	return s.cfg.AdminPassword != "" && subtle.ConstantTimeCompare(want[:], got[:]) == 1
}

func (s *Server) judgeLogout(c *fiber.Ctx) error {
	id := judgeID(c)
	tok := bearerOrCookie(c)
	if _, err := s.node.Submit(c.UserContext(), engine.JudgeActor(id), &engine.JudgeLogout{Judge: id}); err != nil {
		return err
	}
	c.Cookie(s.cookie(c, cookieJudge, "", -1, fiber.CookieSameSiteLaxMode))
	if old := c.Cookies(cookieJudgeOld); old != "" && old == tok {
		// The session came from a pre-rename cookie: that goes too. A "token" cookie that
		// is not how the judge signed in (Jury's client's own) is left alone.
		c.Cookie(s.cookie(c, cookieJudgeOld, "", -1, fiber.CookieSameSiteLaxMode))
	}
	return ok(c)
}

func (s *Server) adminLogout(c *fiber.Ctx) error {
	if v := c.Cookies(cookieAdmin); v != "" {
		if _, err := s.node.Submit(c.UserContext(), engine.Admin, &engine.AdminLogout{SessionHash: hashToken(v)}); err != nil {
			return err
		}
	}
	c.Cookie(s.cookie(c, cookieAdmin, "", -1, fiber.CookieSameSiteStrictMode))
	return ok(c)
}

// bearerOrCookie returns the judge token: from "Authorization: Bearer" when the header
// is there (it decides), else the podium_judge cookie, else the pre-rename token cookie.
func bearerOrCookie(c *fiber.Ctx) string {
	if h := c.Get(fiber.HeaderAuthorization); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	if v := c.Cookies(cookieJudge); v != "" {
		return v
	}
	return c.Cookies(cookieJudgeOld)
}

// judgeFromToken returns the judge whose session token is token.
func (s *Server) judgeFromToken(token string) (engine.ID, bool) {
	if token == "" {
		return engine.ID{}, false
	}
	// The lookup is by the token's SHA-256 (never the token itself), in the engine's
	// lock-free copy of its token index: a judge request does not wait for the writer,
	// nor the writer for it.
	var hx [2 * sha256.Size]byte
	return s.node.JudgeIDByTokenHash(appendTokenHash(hx[:0], token))
}

// judgeAuth lets only logged-in judges through and remembers who they are.
func (s *Server) judgeAuth(c *fiber.Ctx) error {
	id, ok := s.judgeFromToken(bearerOrCookie(c))
	if !ok {
		return errUnauthorized
	}
	if err := s.limitJudgeWrites(c, id); err != nil {
		return err
	}
	s.notePlainJudge(c, id)
	c.Locals(localJudge, id)
	return c.Next()
}

// adminFromRequest checks the admin session cookie or Basic credentials.
func (s *Server) adminFromRequest(c *fiber.Ctx) bool {
	if h := c.Get(fiber.HeaderAuthorization); len(h) > 6 && strings.EqualFold(h[:6], "basic ") {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h[6:]))
		if err != nil {
			return false
		}
		user, pw, found := strings.Cut(string(raw), ":")
		return found && subtle.ConstantTimeCompare([]byte(user), []byte("admin")) == 1 && s.passwordOK(pw)
	}
	v := c.Cookies(cookieAdmin)
	if v == "" {
		return false
	}
	h := hashToken(v)
	now := time.Now().UnixMilli()
	valid := false
	s.node.Read(func(st *engine.State) { valid = st.AdminSessionValid(h, now) })
	return valid
}

// adminAuth lets only admins through. Failed Basic credentials count as failed logins.
func (s *Server) adminAuth(c *fiber.Ctx) error {
	if !s.adminFromRequest(c) {
		if strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderAuthorization)), "basic ") {
			ip := ipKey(s.clientIP(c))
			if n, retry := s.adminFails.peek("admin:" + ip); n >= adminFailLimit {
				s.obs.Throttled("admin_login")
				return tooManyLogins("too many failed logins", retry)
			}
			s.adminFails.hit("admin:" + ip)
		}
		return errUnauthorized
	}
	c.Locals(localAdmin, true)
	return c.Next()
}

// judgeOrAdmin accepts either level (GET /api/admin/timer).
func (s *Server) judgeOrAdmin(c *fiber.Ctx) error {
	if id, ok := s.judgeFromToken(bearerOrCookie(c)); ok {
		c.Locals(localJudge, id)
		return c.Next()
	}
	if s.adminFromRequest(c) {
		c.Locals(localAdmin, true)
		return c.Next()
	}
	return errUnauthorized
}

// judgeID returns the authenticated judge of the request.
func judgeID(c *fiber.Ctx) engine.ID {
	id, _ := c.Locals(localJudge).(engine.ID)
	return id
}

// actorOf returns who is making the request, for commands and the audit log.
func actorOf(c *fiber.Ctx) engine.Actor {
	if id, ok := c.Locals(localJudge).(engine.ID); ok {
		return engine.JudgeActor(id)
	}
	if v, _ := c.Locals(localAdmin).(bool); v {
		return engine.Admin
	}
	return engine.Public
}

// throttle applies the options' login throttling (max_req_per_min, block_reqs) to the
// judge login and QR routes.
func (s *Server) throttle(c *fiber.Ctx, l *limiter, route string) error {
	var max int
	var blocked bool
	s.node.Read(func(st *engine.State) { max, blocked = st.Options.MaxReqPerMin, st.Options.BlockReqs })
	if blocked {
		s.obs.Throttled(route)
		return &httpError{status: fiber.StatusTooManyRequests, msg: "requests are blocked by the organisers", retryAfter: 60}
	}
	n, retry := l.hit(route + ":" + ipKey(s.clientIP(c)))
	if n > max {
		s.obs.Throttled(route)
		s.obs.RequestRejected(RejectLoginIP)
		return tooManyLogins("too many requests from this address", retry)
	}
	return nil
}

// limiter counts hits per key in fixed windows.
type limiter struct {
	mu     sync.Mutex
	window time.Duration
	hits   map[string]*window
	sweep  time.Time
}

type window struct {
	start time.Time
	n     int
}

func newLimiter(w time.Duration) *limiter {
	return &limiter{window: w, hits: map[string]*window{}}
}

// hit counts one hit and returns the count in the current window and the seconds until
// the window ends.
func (l *limiter) hit(key string) (int, int) { return l.add(key, 1) }

// peek returns the count without adding.
func (l *limiter) peek(key string) (int, int) { return l.add(key, 0) }

func (l *limiter) add(key string, d int) (int, int) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.sweep) > l.window {
		for k, w := range l.hits {
			if now.Sub(w.start) >= l.window {
				delete(l.hits, k)
			}
		}
		l.sweep = now
	}
	w, ok := l.hits[key]
	if !ok || now.Sub(w.start) >= l.window {
		if d == 0 {
			return 0, 0
		}
		w = &window{start: now}
		l.hits[key] = w
	}
	w.n += d
	retry := int((l.window - now.Sub(w.start) + time.Second - 1) / time.Second)
	if retry < 1 {
		retry = 1
	}
	return w.n, retry
}

// parseProxies reads TRUSTED_PROXIES (IPs or CIDRs).
func parseProxies(list []string, log zerolog.Logger) []*net.IPNet {
	var out []*net.IPNet
	for _, p := range list {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !strings.Contains(p, "/") {
			if ip := net.ParseIP(p); ip != nil {
				if ip.To4() != nil {
					p += "/32"
				} else {
					p += "/128"
				}
			}
		}
		_, n, err := net.ParseCIDR(p)
		if err != nil {
			log.Warn().Str("entry", p).Msg("ignoring invalid TRUSTED_PROXIES entry")
			continue
		}
		out = append(out, n)
	}
	return out
}

func (s *Server) trusted(ip net.IP) bool {
	for _, n := range s.proxies {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// clientIP is the socket peer, or, when the peer is a trusted proxy, the right-most
// X-Forwarded-For address that is not itself a trusted proxy.
func (s *Server) clientIP(c *fiber.Ctx) string {
	peer := c.Context().RemoteIP()
	if len(s.proxies) == 0 || !s.trusted(peer) {
		return peer.String()
	}
	parts := strings.Split(c.Get(fiber.HeaderXForwardedFor), ",")
	for i := len(parts) - 1; i >= 0; i-- {
		ip := net.ParseIP(strings.TrimSpace(parts[i]))
		if ip == nil {
			break
		}
		if !s.trusted(ip) {
			return ip.String()
		}
	}
	return peer.String()
}
