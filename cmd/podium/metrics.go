package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"podium/metrics"
	"podium/persist"
	"podium/persist/cluster"
	"podium/persist/worker"
	"podium/transport"
)

// nodeObserver is the writer loop's metrics observer, passed to persist.Open.
var nodeObserver persist.Observer

// raftObserver returns the raft metrics observer, passed to cluster.Open.
var raftObserver func() cluster.Observer

// mailObserver counts the mail outbox's outcomes, passed to worker.NewOutbox.
var mailObserver worker.MailObserver

// Metrics (docs/behaviour.md#operations): one registry fed by the writer loop, the HTTP server and the
// websocket hub, served at /metrics on the main listener, or only on METRICS_ADDR when
// that is set.
func init() {
	m := metrics.New()
	nodeObserver = m
	raftObserver = func() cluster.Observer { return m.Cluster() }
	mailObserver = m
	serveHooks = append(serveHooks, func(c *config, node node, ratings *worker.Ratings, log zerolog.Logger) ([]transport.Option, func(), error) {
		m.WatchState(node.Read)
		m.WatchHealth(node.Ready, func() bool { return node.Failure() != nil })
		m.WatchRatings(ratings.Pending)
		opts := []transport.Option{transport.WithObserver(m), transport.WithHubObserver(m)}
		if c.metricsAddr == "" {
			return append(opts, transport.WithMetricsHandler(m.Handler())), nil, nil
		}
		ln, err := net.Listen("tcp", c.metricsAddr)
		if err != nil {
			return nil, nil, fmt.Errorf("metrics listener: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", m.Handler())
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
				log.Error().Err(err).Msg("metrics listener stopped")
			}
		}()
		log.Info().Str("addr", ln.Addr().String()).Msg("metrics listening")
		return opts, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
		}, nil
	})
}
