// Package transport serves Podium over HTTP (Fiber) and websockets: routes, auth,
// request parsing, CSV, and the websocket upgrade (the hub itself is package
// transport/ws).
package transport

import (
	"context"
	"net"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/rs/zerolog"

	"podium/engine"
)

// Node is what the server needs from the state owner: the single node (persist.Node)
// or a cluster node (cluster.Node, which also serves ClusterNode).
type Node interface {
	Submit(ctx context.Context, actor engine.Actor, cmd engine.Command) (any, error)
	SubmitWithBackup(ctx context.Context, actor engine.Actor, cmd engine.Command) (any, string, error)
	// SubmitKeyed is Submit for a judge write with an Idempotency-Key
	// (docs/behaviour.md#on-the-floor): the key travels in the command's envelope.
	SubmitKeyed(ctx context.Context, actor engine.Actor, cmd engine.Command, k *engine.Keyed) (any, error)
	Read(fn func(s *engine.State))
	// TryRead runs fn only if it need not wait for the writer, and says whether it did.
	TryRead(fn func(s *engine.State)) bool
	// JudgeIDByTokenHash looks up a judge session without the engine's lock.
	JudgeIDByTokenHash(hash []byte) (engine.ID, bool)
	Ready() bool
	Backup() (string, error)
	BackupPath(name string) (string, error)
	Snapshot() error
	SetEventSink(fn func([]engine.Event))
}

// Config is the server's configuration (docs/behaviour.md#operations).
type Config struct {
	DataDir          string
	AdminPassword    string
	PublicAPIKey     string
	PublicURL        string
	CORSOrigins      []string
	TrustedProxies   []string
	MaxWSConnections int
	// MaxWSPerIP caps the websockets of one client IP (admins excepted); default 500.
	MaxWSPerIP int
	// JudgeWritesPerSec limits each judge's writes (docs/behaviour.md#operations); default 10.
	JudgeWritesPerSec int
	// SecureCookies marks cookies Secure (set when PUBLIC_URL is https or TLS is used).
	SecureCookies bool
}

// HTTPObserver receives request measurements (implemented by package metrics).
type HTTPObserver interface {
	Request(route, method string, code int, d time.Duration)
	Throttled(route string)
	// RequestRejected counts a request refused by a limit, by reason (the Reject*
	// constants).
	RequestRejected(reason string)
}

type nopHTTPObserver struct{}

func (nopHTTPObserver) Request(string, string, int, time.Duration) {}
func (nopHTTPObserver) Throttled(string)                           {}
func (nopHTTPObserver) RequestRejected(string)                     {}

// Server is Podium's HTTP server.
type Server struct {
	app     *fiber.App
	node    Node
	cfg     Config
	log     zerolog.Logger
	obs     HTTPObserver
	proxies []*net.IPNet

	judgeLimit   *limiter    // judge login
	qrLimit      *limiter    // QR routes
	teamLimit    *limiter    // team pages (GET /api/team/:token)
	plain        plainJudges // judges seen over plain http from another machine
	adminFails   *limiter    // failed admin logins
	logins       *loginGuard
	judgeWrite   *writeLimiter
	lines        *lineLimiter  // rate-limited request log lines
	publicList   *publicList   // encoded GET /api/project/list/public
	winnerBodies *winnersCache // encoded GET /api/winners and /v1/public/winners
	writeIdle    time.Duration // idle write timeout of every connection (listener.go)

	ext extensions
}

// extensions holds the parts other files plug in (hub, outbox, content cache, ...).
// Each is optional so that the server works before they exist.
type extensions struct {
	shutdown []func(ctx context.Context) error
	outbox   Outbox      // told when mails are queued; nil: nobody
	realtime realtimeExt // websocket hub and metrics endpoint (realtime_handlers.go)
	planner  *planner    // the planner's estimates (planner.go)
}

// Outbox is the mail outbox that sends the login-code emails requests queue (package
// persist/worker, wired by cmd/podium).
type Outbox interface {
	// Kick says mails may have been queued; it never blocks.
	Kick()
}

// WithOutbox has the server kick o whenever a command queued login-code mails, so the
// outbox need not wait for its next look.
func WithOutbox(o Outbox) Option { return func(s *Server) { s.ext.outbox = o } }

// mailQueued tells the outbox that a command queued login-code mails (docs/behaviour.md#email). The
// mails are already in the state; this only saves the worker's wait for its next look.
func (s *Server) mailQueued() {
	if s.ext.outbox != nil {
		s.ext.outbox.Kick()
	}
}

// Option customises a Server.
type Option func(*Server)

// WithObserver sets the HTTP metrics observer.
func WithObserver(o HTTPObserver) Option { return func(s *Server) { s.obs = o } }

// New builds the server and its routes.
func New(cfg Config, node Node, log zerolog.Logger, opts ...Option) *Server {
	if cfg.MaxWSConnections <= 0 {
		cfg.MaxWSConnections = 20000
	}
	if cfg.MaxWSPerIP <= 0 {
		cfg.MaxWSPerIP = 500
	}
	if limit := fileLimit(); clampWSConnections(cfg.MaxWSConnections, limit) < cfg.MaxWSConnections {
		clamped := clampWSConnections(cfg.MaxWSConnections, limit)
		log.Warn().Int("max_ws_connections", cfg.MaxWSConnections).Int("clamped_to", clamped).Uint64("file_limit", limit).
			Msg("MAX_WS_CONNECTIONS lowered to stay below the open-file limit with room for HTTP")
		cfg.MaxWSConnections = clamped
	}
	if strings.HasPrefix(strings.ToLower(cfg.PublicURL), "https://") {
		cfg.SecureCookies = true
	}
	s := &Server{
		node: node, cfg: cfg, log: log, obs: nopHTTPObserver{},
		judgeLimit:   newLimiter(time.Minute),
		qrLimit:      newLimiter(time.Minute),
		teamLimit:    newLimiter(time.Minute),
		adminFails:   newLimiter(time.Minute),
		logins:       newLoginGuard(),
		judgeWrite:   newWriteLimiter(cfg.JudgeWritesPerSec),
		lines:        newLineLimiter(),
		publicList:   &publicList{node: node},
		winnerBodies: &winnersCache{node: node},
		writeIdle:    idleWriteTimeout,
	}
	for _, o := range opts {
		o(s)
	}
	s.proxies = parseProxies(cfg.TrustedProxies, log)
	s.cfg.CORSOrigins = dropWildcards(s.cfg.CORSOrigins, log)
	s.app = fiber.New(fiber.Config{
		AppName:               "podium",
		DisableStartupMessage: true,
		Immutable:             true, // request strings and bodies outlive handlers (commands, events)
		// Bodies are streamed and bounded per route by bodyGuard (body.go); fasthttp
		// does not enforce BodyLimit on streamed bodies.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		BodyLimit:                    drainLimit,
		ReadBufferSize:               8 << 10, // request line + headers (nginx's limit); each connection, websockets included, keeps one
		ErrorHandler:                 s.handleError,
		ReadTimeout:                  60 * time.Second,
		IdleTimeout:                  120 * time.Second,
	})
	s.routes()
	return s
}

// dropWildcards removes CORS origins with a "*" (cmd refuses them at startup; a wildcard
// with credentials would let any site act as the user).
func dropWildcards(origins []string, log zerolog.Logger) []string {
	out := origins[:0:0]
	for _, o := range origins {
		if strings.Contains(o, "*") {
			log.Error().Str("origin", o).Msg("ignoring wildcard in CORS_ORIGINS")
			continue
		}
		out = append(out, o)
	}
	return out
}

func (s *Server) routes() {
	app := s.app
	app.Use(s.requestLog)
	app.Use(recover.New()) // a bug in one handler is a 500, never a crash
	if len(s.cfg.CORSOrigins) > 0 {
		app.Use(cors.New(cors.Config{
			AllowOrigins:     strings.Join(s.cfg.CORSOrigins, ","),
			AllowCredentials: true,
			AllowHeaders:     "Origin, Content-Type, Accept, Authorization, X-API-Key, Idempotency-Key",
			ExposeHeaders:    "Idempotent-Replayed",
		}))
	}
	app.Use(s.bodyGuard)

	app.Get("/healthz", func(c *fiber.Ctx) error { return ok(c) })
	app.Get("/readyz", s.readyz)

	api := app.Group("/api")
	api.Get("/", func(c *fiber.Ctx) error { return ok(c) })
	s.routesOpenAPI(api)
	s.routesAuth(api)
	s.routesJudgingEarly(api) // /judge/<word> routes must precede /judge/:id
	s.routesJudges(api)
	s.routesProjects(api)
	s.routesAdmin(api)
	s.routesJudging(api)
	s.routesImportExport(api)
	s.routesConflicts(api)
	s.routesEnding(api)
	s.routesTeams(api)
	s.routesPlanner(api)
	s.routesCluster(api)
	s.routesContent(app)
	s.routesRealtime(app)
	s.routesWeb(app)
}

func (s *Server) readyz(c *fiber.Ctx) error {
	if !s.node.Ready() {
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"error": "not ready: storage unavailable or shutting down"})
	}
	return c.JSON(fiber.Map{"ok": 1})
}

// Listen serves on ln until Shutdown. Temporary accept errors (out of file descriptors)
// are retried, never returned; writes to clients that stop reading time out.
func (s *Server) Listen(ln net.Listener) error {
	return s.app.Listener(newGuardedListener(ln, s.log, s.writeIdle))
}

// Shutdown stops accepting connections, waits for in-flight requests (up to ctx's
// deadline) and stops the extensions (websockets).
func (s *Server) Shutdown(ctx context.Context) error {
	for _, fn := range s.ext.shutdown {
		_ = fn(ctx)
	}
	return s.app.ShutdownWithContext(ctx)
}

// onShutdown registers fn to run when the server shuts down.
func (s *Server) onShutdown(fn func(ctx context.Context) error) {
	s.ext.shutdown = append(s.ext.shutdown, fn)
}
