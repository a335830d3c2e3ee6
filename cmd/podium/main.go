// Command podium is the judging server. Run with no arguments (or "serve") to start it
// from environment variables; "restore <backup-file> <empty-data-dir>" restores a
// backup.
package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist"
	"podium/persist/cluster"
	"podium/persist/worker"
	"podium/transport"
)

func main() {
	args := os.Args[1:]
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = serve(args)
	case "restore":
		err = restore(args)
	case "help", "-h", "--help":
		usage(os.Stdout)
	default:
		for _, h := range extraCommands {
			if h.name == cmd {
				err = h.run(args)
				goto done
			}
		}
		usage(os.Stderr)
		os.Exit(2)
	}
done:
	if err != nil {
		fmt.Fprintln(os.Stderr, "podium:", err)
		os.Exit(1)
	}
}

// extraCommands are subcommands added by other files (e.g. "content import").
var extraCommands []struct {
	name, help string
	run        func(args []string) error
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage:")
	fmt.Fprintln(w, "  podium [serve] [flags]                       start the server (configured by environment variables)")
	fmt.Fprintln(w, "  podium restore <backup-file> <empty-dir>     restore a backup into an empty data directory")
	for _, h := range extraCommands {
		fmt.Fprintln(w, "  "+h.help)
	}
}

// config is everything read from the environment (docs/behaviour.md#operations); flags may override.
type config struct {
	port        int
	metricsAddr string
	logLevel    string
	logFormat   string
	server      transport.Config
	smtp        worker.SMTPConfig     // the mail outbox's server (SMTP_*, EMAIL_FROM*)
	ratings     worker.RatingsOptions // the ratings fit's cadence (RATINGS_*)
	tls         tlsSettings           // HTTPS served by Podium (TLS_*: tls.go)
}

func env(keys ...string) string {
	for _, k := range keys {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}

func envInt(key string, def int) (int, error) {
	v := os.Getenv(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not a number", key, v)
	}
	return n, nil
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func loadConfig(args []string) (config, error) {
	var c config
	var err error
	if c.port, err = envInt("PORT", 8080); err != nil {
		return c, err
	}
	smtpPort, err := envInt("SMTP_PORT", 587)
	if err != nil {
		return c, err
	}
	maxWS, err := envInt("MAX_WS_CONNECTIONS", 20000)
	if err != nil {
		return c, err
	}
	maxWSPerIP, err := envInt("MAX_WS_PER_IP", 500)
	if err != nil {
		return c, err
	}
	judgeWrites, err := envInt("JUDGE_WRITES_PER_SEC", 10)
	if err != nil {
		return c, err
	}
	c.server = transport.Config{
		DataDir:           env("DATA_DIR"),
		AdminPassword:     env("ADMIN_PASSWORD", "JURY_ADMIN_PASSWORD"),
		PublicAPIKey:      env("PUBLIC_API_KEY"),
		PublicURL:         strings.TrimRight(env("PUBLIC_URL"), "/"),
		CORSOrigins:       splitList(env("CORS_ORIGINS")),
		TrustedProxies:    splitList(env("TRUSTED_PROXIES")),
		MaxWSConnections:  maxWS,
		MaxWSPerIP:        maxWSPerIP,
		JudgeWritesPerSec: judgeWrites,
	}
	c.smtp = worker.SMTPConfig{
		Host: env("SMTP_HOST"), Port: smtpPort, Username: env("SMTP_USERNAME"),
		Password: env("SMTP_PASSWORD"), From: env("EMAIL_FROM"), FromName: env("EMAIL_FROM_NAME"),
	}
	for _, o := range c.server.CORSOrigins {
		if strings.Contains(o, "*") {
			return c, fmt.Errorf("CORS_ORIGINS=%q: wildcards are not allowed (credentials are sent); list the origins", env("CORS_ORIGINS"))
		}
	}
	if c.server.DataDir == "" {
		c.server.DataDir = "./data"
	}
	if c.ratings, err = ratingsConfig(); err != nil {
		return c, err
	}
	if c.tls, err = loadTLSSettings(); err != nil {
		return c, err
	}
	c.metricsAddr = env("METRICS_ADDR")
	c.logLevel = env("LOG_LEVEL")
	if c.logLevel == "" {
		c.logLevel = "info"
	}
	c.logFormat = env("LOG_FORMAT")
	if c.logFormat == "" {
		c.logFormat = "json"
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.IntVar(&c.port, "port", c.port, "HTTP port (PORT); 0 picks a free one")
	fs.StringVar(&c.server.DataDir, "data-dir", c.server.DataDir, "data directory (DATA_DIR)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", c.metricsAddr, "separate metrics listen address (METRICS_ADDR)")
	fs.StringVar(&c.logLevel, "log-level", c.logLevel, "log level (LOG_LEVEL)")
	fs.StringVar(&c.logFormat, "log-format", c.logFormat, "json or console (LOG_FORMAT)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	return c, nil
}

func newLogger(level, format string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil {
		return zerolog.Logger{}, fmt.Errorf("LOG_LEVEL=%q: %w", level, err)
	}
	var w io.Writer = os.Stdout
	switch format {
	case "json":
	case "console":
		w = zerolog.ConsoleWriter{Out: os.Stdout, TimeFormat: time.RFC3339}
	default:
		return zerolog.Logger{}, fmt.Errorf("LOG_FORMAT=%q: want json or console", format)
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// adminPassword returns the configured password, or the one stored in the data
// directory, generating and storing it on first start.
func adminPassword(cfg *transport.Config) (generated bool, err error) {
	if cfg.AdminPassword != "" {
		return false, nil
	}
	path := filepath.Join(cfg.DataDir, "admin_password")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		cfg.AdminPassword = strings.TrimSpace(string(b))
		return false, nil
	}
	raw := make([]byte, 18)
	if _, err := rand.Read(raw); err != nil {
		return false, err
	}
	cfg.AdminPassword = base64.RawURLEncoding.EncodeToString(raw)
	if err := os.WriteFile(path, []byte(cfg.AdminPassword+"\n"), 0o600); err != nil {
		return false, fmt.Errorf("store generated admin password: %w", err)
	}
	return true, nil
}

// printAdminPassword shows a generated admin password to the person starting the
// server: a plain block on stderr, once (at the first start), never in the JSON log
// on stdout (docs/behaviour.md#authentication).
func printAdminPassword(w io.Writer, password, path string) {
	fmt.Fprintf(w, "\n"+
		"  ------------------------------------------------------------\n"+
		"  Podium admin password (generated at this first start):\n\n"+
		"      %s\n\n"+
		"  Log in at /admin with it. It is kept in %s\n"+
		"  and is not shown again; set ADMIN_PASSWORD to choose your own.\n"+
		"  ------------------------------------------------------------\n\n", password, path)
}

// node is what serving needs from the single node (persist.Node) or the cluster node
// (cluster.Node).
type node interface {
	transport.Node
	worker.RatingsNode
	// Failure is the storage error that made the node read-only, if any.
	Failure() error
	Close() error
}

// hooks let other files extend serving (metrics listener, outbox, ...); ratings is the
// node's background ratings fit.
var serveHooks []func(c *config, n node, ratings *worker.Ratings, log zerolog.Logger) ([]transport.Option, func(), error)

// openNode opens the cluster node when the cluster settings are there, else the single
// node.
func openNode(dir string, log zerolog.Logger) (node, error) {
	clusterCfg, err := cluster.ParseConfig(os.Getenv)
	if err != nil {
		return nil, err
	}
	if clusterCfg != nil {
		member, err := cluster.Open(dir, cluster.Options{
			Config: clusterCfg, Log: log, Observer: nodeObserver, RaftObserver: raftObserver(), JournalFault: journalFault(),
		})
		if err != nil {
			return nil, err // not a nil *cluster.Node in an interface
		}
		return member, nil
	}
	single, err := persist.Open(dir, persist.Options{Log: log, Observer: nodeObserver, JournalFault: journalFault()})
	if err != nil {
		return nil, err
	}
	recoverClock(single, log) // a cluster keeps its clock: other nodes ran on
	return single, nil
}

// listenOn opens the server's port, over TLS when tlsConfig is set
// (docs/operations.md#https-on-the-floor); it returns the listener and its scheme.
func listenOn(port int, tlsConfig *tls.Config) (net.Listener, string, error) {
	ln, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		return nil, "", fmt.Errorf("listen: %w", err)
	}
	if tlsConfig != nil {
		return tls.NewListener(ln, tlsConfig), "https", nil
	}
	return ln, "http", nil
}

func serve(args []string) error {
	c, err := loadConfig(args)
	if err != nil {
		return err
	}
	log, err := newLogger(c.logLevel, c.logFormat)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.server.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	tlsConfig, startACME, err := c.tls.config(c.server.DataDir, log)
	if err != nil {
		return err
	}
	generated, err := adminPassword(&c.server)
	if err != nil {
		return err
	}
	raiseFileLimit(log)
	transport.PrepareWebAssets() // compressed while the state recovers
	node, err := openNode(c.server.DataDir, log)
	if err != nil {
		return err
	}
	c.ratings.Log = log
	ratings := worker.RatingsStart(node, c.ratings)
	closeNode := func() error {
		ratings.Stop()
		return node.Close()
	}

	var opts []transport.Option
	var cleanups []func()
	for _, h := range serveHooks {
		o, cleanup, err := h(&c, node, ratings, log)
		if err != nil {
			closeNode()
			return err
		}
		opts = append(opts, o...)
		if cleanup != nil {
			cleanups = append(cleanups, cleanup)
		}
	}
	outbox := worker.NewOutbox(c.smtp, c.server.PublicURL, mailObserver, node, log)
	go outbox.Run()
	srv := transport.New(c.server, node, log, append(opts, transport.WithOutbox(outbox))...)
	// Signals are caught before the listening line is printed: a supervisor (or a test)
	// may send SIGTERM as soon as it reads that line, and it must get a clean shutdown.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	ln, scheme, err := listenOn(c.port, tlsConfig)
	if err != nil {
		_ = outbox.Stop(context.Background())
		closeNode()
		return err
	}
	if startACME != nil {
		defer startACME()()
	}
	fmt.Printf("podium listening on %s://%s\n", scheme, ln.Addr())
	if generated {
		printAdminPassword(os.Stderr, c.server.AdminPassword, filepath.Join(c.server.DataDir, "admin_password"))
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Listen(ln) }()

	var stopErr error
	select {
	case s := <-sig:
		log.Info().Str("signal", s.String()).Msg("shutting down")
	case err := <-serveErr:
		// Only a signal is a normal end: a listener that stops is a failure, so that a
		// supervisor restarts the process (docs/behaviour.md#operations).
		if err == nil {
			err = errors.New("listener stopped")
		}
		log.Error().Err(err).Msg("server stopped")
		stopErr = fmt.Errorf("serve: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = outbox.Stop(ctx) // a round under way finishes; mails waiting for a retry stay pending
	if err := srv.Shutdown(ctx); err != nil {
		log.Error().Err(err).Msg("http shutdown")
	}
	for _, f := range cleanups {
		f()
	}
	if err := closeWithin(closeTimeout, closeNode); err != nil {
		log.Error().Err(err).Msg("shutdown incomplete: the journal holds every acknowledged change")
		return fmt.Errorf("close store: %w", err)
	}
	if stopErr != nil {
		return stopErr
	}
	log.Info().Msg("stopped")
	return nil
}

// raiseFileLimit raises the soft limit on open files to the hard limit (docs/behaviour.md#operations: every
// websocket is a file descriptor).
func raiseFileLimit(log zerolog.Logger) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return
	}
	if r.Cur < r.Max {
		old := r.Cur
		r.Cur = r.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
			log.Warn().Err(err).Uint64("soft", old).Uint64("hard", r.Max).Msg("cannot raise the open-file limit")
			return
		}
	}
	log.Info().Uint64("open_file_limit", r.Cur).Msg("open-file limit")
}

// closeTimeout bounds the final snapshot and closing the store (docs/behaviour.md#state-durability-and-recovery).
const closeTimeout = 10 * time.Second

// closeWithin runs closeFn and gives up after d: Badger retries a final flush that
// cannot succeed (disk full, data directory removed) forever.
func closeWithin(d time.Duration, closeFn func() error) error {
	done := make(chan error, 1)
	go func() { done <- closeFn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("writing the final snapshot and closing the store did not finish within %s (disk full, I/O errors or data directory gone?)", d)
	}
}

// journalFault returns the fault-injection hook for tests of the read-only mode on
// machines where a small filesystem cannot be mounted: while the file named by
// PODIUM_TEST_JOURNAL_FAULT_FILE exists, journal writes fail as on a full disk.
func journalFault() func() error {
	path := os.Getenv("PODIUM_TEST_JOURNAL_FAULT_FILE")
	if path == "" {
		return nil
	}
	return func() error {
		if _, err := os.Stat(path); err == nil {
			return fmt.Errorf("injected (%s exists): %w", path, syscall.ENOSPC)
		}
		return nil
	}
}

// recoverClock pauses a clock that was running before the restart when clock_sync is
// off (docs/behaviour.md#admin-operations): it stops at the last moment the previous run is known to have been up.
func recoverClock(node *persist.Node, log zerolog.Logger) {
	need := false
	node.Read(func(s *engine.State) { need = s.Options.Clock.Running && !s.Options.ClockSync })
	if !need {
		return
	}
	at := node.RecoveredAt()
	if at == 0 {
		at = time.Now().UnixMilli()
	}
	if _, err := node.Submit(context.Background(), engine.System, &engine.ClockRecover{PauseAt: at}); err != nil {
		log.Error().Err(err).Msg("pause clock after restart")
	}
}

func restore(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: podium restore <backup-file> <empty-data-dir>")
	}
	log := zerolog.New(os.Stderr).Level(zerolog.WarnLevel)
	if err := persist.Restore(args[0], args[1], log); err != nil {
		return err
	}
	fmt.Printf("restored %s into %s\n", args[0], args[1])
	return nil
}
