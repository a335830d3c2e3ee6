// Package metrics exposes Podium's Prometheus metrics (docs/behaviour.md#operations). It owns a dedicated
// registry with the Go and process collectors and every podium_ family, and implements
// the observer interfaces of the adapters: persist.Observer (writer loop),
// transport.HTTPObserver (requests, throttling), the websocket hub's observer and the
// mail outbox's observer. Gauges about the judging state are read from the state at
// scrape time.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"podium/engine"
)

// Known label values, shown at 0 from startup.
var (
	wsRoles        = []string{"anonymous", "judge", "admin"}
	wsDropReasons  = []string{"slow", "oversize", "idle"}
	emailResults   = []string{"sent", "failed", "skipped", "unknown"}
	throttleRoutes = []string{"judge_login", "admin_login", "qr", "team_page"}
	// rejectReasons are the values of transport's Reject* constants (metrics does not
	// import transport).
	rejectReasons = []string{"login_ip", "login_flood", "judge_writes", "body_too_large", "media_type", "ws_full", "ws_per_ip"}
	itemStates    = []string{"active", "hidden"}
	// FlagReasons are the reasons a flag can have (docs/behaviour.md#resources).
	FlagReasons = []string{"busy", "absent", "cannot-demo", "too-complex", "offensive", "hidden-absent"}
	wsTypes     = []string{"hello", engine.EvClock, engine.EvDeliberation, engine.EvGroupInfo, engine.EvExpo,
		engine.EvJudge, engine.EvFlag, engine.EvLog, engine.EvStats, engine.EvChanged, engine.EvWinners}
)

// Metrics holds every Podium metric family and the registry they are served from.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	requests     sync.Map // requestKey → *requestObs

	commands   *prometheus.CounterVec
	byKind     map[string][2]prometheus.Counter // pre-resolved ok/error children of commands (read-only)
	applyDur   prometheus.Histogram
	queueDepth prometheus.Gauge
	fsyncDur   prometheus.Histogram
	batchSize  prometheus.Histogram
	snapDur    prometheus.Histogram
	snapSize   prometheus.Gauge

	wsConns     *prometheus.GaugeVec
	wsSent      *prometheus.CounterVec
	wsSentByTyp map[string]prometheus.Counter // pre-resolved children (hot path)
	wsDropped   *prometheus.CounterVec
	wsBroadcast prometheus.Histogram
	wsLost      prometheus.Counter

	throttled *prometheus.CounterVec
	rejected  *prometheus.CounterVec
	emails    *prometheus.CounterVec

	state  *stateCollector
	health *healthCollector
}

// New builds the registry with the Go and process collectors and all Podium families,
// every known label value initialised at 0.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	httpBuckets := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "podium_http_requests_total", Help: "HTTP requests by route template, method and status code.",
	}, []string{"route", "method", "code"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "podium_http_request_duration_seconds", Help: "HTTP request duration by route template and method.",
		Buckets: httpBuckets,
	}, []string{"route", "method"})

	m.commands = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "podium_engine_commands_total", Help: "Commands applied by the engine, by kind and result (ok|error).",
	}, []string{"command", "result"})
	m.byKind = make(map[string][2]prometheus.Counter)
	for _, k := range engine.CommandKinds() {
		m.byKind[k] = [2]prometheus.Counter{m.commands.WithLabelValues(k, "ok"), m.commands.WithLabelValues(k, "error")}
	}
	m.applyDur = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "podium_engine_apply_duration_seconds", Help: "Time to apply one command to the state.",
		Buckets: []float64{1e-6, 5e-6, 1e-5, 5e-5, 1e-4, 5e-4, .001, .005, .01, .05, .1},
	})
	m.queueDepth = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "podium_engine_queue_depth", Help: "Commands waiting for the writer when it last took a batch.",
	})
	m.fsyncDur = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "podium_journal_fsync_duration_seconds", Help: "Time to commit and fsync one journal batch.",
		Buckets: prometheus.ExponentialBucketsRange(5e-5, 0.1, 12),
	})
	m.batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "podium_journal_batch_size", Help: "Journal records committed with one fsync (group commit).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
	})
	m.snapDur = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "podium_snapshot_duration_seconds", Help: "Time to write a full snapshot.",
		Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 10, 30},
	})
	m.snapSize = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "podium_snapshot_size_bytes", Help: "Size of the last snapshot written.",
	})

	m.wsConns = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "podium_ws_connections", Help: "Open websocket connections by role.",
	}, []string{"role"})
	for _, r := range wsRoles {
		m.wsConns.WithLabelValues(r)
	}
	m.wsSent = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "podium_ws_messages_sent_total", Help: "Websocket messages written to connections, by type (a broadcast to 10 clients counts 10).",
	}, []string{"type"})
	m.wsSentByTyp = make(map[string]prometheus.Counter, len(wsTypes))
	for _, t := range wsTypes {
		m.wsSentByTyp[t] = m.wsSent.WithLabelValues(t)
	}
	m.wsDropped = newCounterVec("podium_ws_clients_dropped_total",
		"Websocket clients disconnected by the server, by reason (slow|oversize|idle).", "reason", wsDropReasons)
	m.wsBroadcast = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "podium_ws_broadcast_duration_seconds", Help: "Time to write one dispatch to every recipient (or its backlog).",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
	})
	m.wsLost = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "podium_ws_event_batches_dropped_total", Help: "Event batches the hub could not take because its backlog was full.",
	})

	m.throttled = newCounterVec("podium_login_throttled_total",
		"Requests refused by login throttling, by route (judge_login|admin_login|qr).", "route", throttleRoutes)
	m.rejected = newCounterVec("podium_requests_rejected_total",
		"Requests refused by a limit, by reason (login_ip|login_flood|judge_writes|body_too_large|media_type|ws_full|ws_per_ip).", "reason", rejectReasons)
	m.emails = newCounterVec("podium_emails_total",
		"Login-code emails by result (sent|failed|skipped|unknown).", "result", emailResults)

	m.state = &stateCollector{}
	m.health = &healthCollector{}
	m.reg.MustRegister(m.httpRequests, m.httpDuration, m.commands, m.applyDur, m.queueDepth,
		m.fsyncDur, m.batchSize, m.snapDur, m.snapSize, m.wsConns, m.wsSent, m.wsDropped,
		m.wsBroadcast, m.wsLost, m.throttled, m.rejected, m.emails, m.state, m.health)
	return m
}

// newCounterVec is a counter family with one label whose known values are shown at 0
// from the start.
func newCounterVec(name, help, label string, known []string) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
	for _, k := range known {
		v.WithLabelValues(k)
	}
	return v
}

// Registry returns the registry (to add collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// WatchState makes the state gauges (projects, judges, flags, clock, deliberation) read
// the state through read at scrape time (pass persist.Node.Read).
func (m *Metrics) WatchState(read func(fn func(s *engine.State))) {
	m.state.mu.Lock()
	m.state.read = read
	m.state.mu.Unlock()
}

// --- transport.HTTPObserver ---

// codes caches status code strings.
var codes sync.Map

func codeLabel(code int) string {
	if v, ok := codes.Load(code); ok {
		return v.(string)
	}
	s := strconv.Itoa(code)
	codes.Store(code, s)
	return s
}

// requestKey names the children of the HTTP families one request updates.
type requestKey struct {
	route, method string
	code          int
}

// requestObs are those children, resolved once: a label lookup hashes and validates
// every label value under a lock, twice per request otherwise.
type requestObs struct {
	count prometheus.Counter
	dur   prometheus.Observer
}

// Request records one HTTP request (route is the route template or "unmatched").
func (m *Metrics) Request(route, method string, code int, d time.Duration) {
	k := requestKey{route, method, code}
	v, ok := m.requests.Load(k)
	if !ok {
		v, _ = m.requests.LoadOrStore(k, &requestObs{
			count: m.httpRequests.WithLabelValues(route, method, codeLabel(code)),
			dur:   m.httpDuration.WithLabelValues(route, method),
		})
	}
	o := v.(*requestObs)
	o.count.Inc()
	o.dur.Observe(d.Seconds())
}

// Throttled records a request refused by login throttling.
func (m *Metrics) Throttled(route string) { m.throttled.WithLabelValues(route).Inc() }

// RequestRejected records a request refused by a limit (transport's Reject* constants).
func (m *Metrics) RequestRejected(reason string) { m.rejected.WithLabelValues(reason).Inc() }

// --- persist.Observer ---

// CommandApplied records one applied (or refused) command.
func (m *Metrics) CommandApplied(kind string, ok bool, d time.Duration) {
	// The writer calls this for every command: the children are resolved once, not
	// hashed and looked up per call.
	if c, known := m.byKind[kind]; known {
		if ok {
			c[0].Inc()
		} else {
			c[1].Inc()
		}
	} else if ok {
		m.commands.WithLabelValues(kind, "ok").Inc()
	} else {
		m.commands.WithLabelValues(kind, "error").Inc()
	}
	m.applyDur.Observe(d.Seconds())
}

// JournalCommitted records one journal commit (one fsync) of records entries.
func (m *Metrics) JournalCommitted(records int, d time.Duration) {
	m.fsyncDur.Observe(d.Seconds())
	m.batchSize.Observe(float64(records))
}

// QueueDepth records how many commands wait for the writer.
func (m *Metrics) QueueDepth(n int) { m.queueDepth.Set(float64(n)) }

// SnapshotWritten records a snapshot write.
func (m *Metrics) SnapshotWritten(size int, d time.Duration) {
	m.snapDur.Observe(d.Seconds())
	m.snapSize.Set(float64(size))
}

// --- websocket hub observer ---

// WSConnections adds delta to the open connections of role.
func (m *Metrics) WSConnections(role string, delta int) {
	m.wsConns.WithLabelValues(role).Add(float64(delta))
}

// WSSent counts n messages of type typ written to connections (one each).
func (m *Metrics) WSSent(typ string, n int) {
	if c, ok := m.wsSentByTyp[typ]; ok {
		c.Add(float64(n))
		return
	}
	m.wsSent.WithLabelValues(typ).Add(float64(n))
}

// WSDropped counts a client the server disconnected (slow, oversize, idle).
func (m *Metrics) WSDropped(reason string) { m.wsDropped.WithLabelValues(reason).Inc() }

// WSBroadcast records the time to hand one message to every recipient.
func (m *Metrics) WSBroadcast(d time.Duration) { m.wsBroadcast.Observe(d.Seconds()) }

// WSEventsLost counts event batches the hub dropped because its backlog was full.
func (m *Metrics) WSEventsLost(n int) { m.wsLost.Add(float64(n)) }

// --- mail outbox observer ---

// EmailSent counts a login-code email delivered to the SMTP server.
func (m *Metrics) EmailSent() { m.emails.WithLabelValues("sent").Inc() }

// EmailFailed counts a login-code email that could not be delivered.
func (m *Metrics) EmailFailed() { m.emails.WithLabelValues("failed").Inc() }

// EmailSkipped counts a login-code email not sent because SMTP is not configured.
func (m *Metrics) EmailSkipped() { m.emails.WithLabelValues("skipped").Inc() }

// EmailUnknown counts a login-code email whose outcome is unknown: it was claimed by a
// leader that stopped before recording it, and is not sent again on its own.
func (m *Metrics) EmailUnknown() { m.emails.WithLabelValues("unknown").Inc() }
