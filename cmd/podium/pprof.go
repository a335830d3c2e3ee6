package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/rs/zerolog"

	"podium/persist/worker"
	"podium/transport"
)

// PPROF_ADDR (off by default) serves Go's profiling endpoints (/debug/pprof/...) on a
// listener of its own, never on the public port, so that a slow production server can
// be profiled with `go tool pprof http://ADDR/debug/pprof/profile?seconds=30`. Bind it
// to loopback or a private interface: the profiles show code paths and memory.
func init() {
	serveHooks = append(serveHooks, func(c *config, _ node, _ *worker.Ratings, log zerolog.Logger) ([]transport.Option, func(), error) {
		addr := env("PPROF_ADDR")
		if addr == "" {
			return nil, nil, nil
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, nil, fmt.Errorf("pprof listener: %w", err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
				log.Error().Err(err).Msg("pprof listener stopped")
			}
		}()
		log.Info().Str("addr", ln.Addr().String()).Msg("pprof listening")
		// The address goes to stdout too, so that a tool that started the server with
		// PPROF_ADDR=127.0.0.1:0 can find the port.
		fmt.Printf("podium pprof on http://%s/debug/pprof/\n", ln.Addr())
		return nil, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
		}, nil
	})
}
