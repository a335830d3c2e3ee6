package load

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"podium/loadtest/client"
	"podium/loadtest/server"
)

// newServerProc prepares the podium binary bin on the data directory dir for a load run:
// the admin password, the API key (when set), its log level, loopback as a trusted proxy
// (the judges' X-Forwarded-For addresses count) and extra KEY=VALUE settings last.
func newServerProc(bin, dir, logPath, password, apiKey, logLevel string, extra []string) (*server.Process, error) {
	env := []string{
		"ADMIN_PASSWORD=" + password,
		"LOG_LEVEL=" + logLevel,
		"TRUSTED_PROXIES=127.0.0.1,::1",
		// Zero think time makes a simulated judge write far faster than a person can
		// (the server's default is 10 writes a second per judge): measure throughput.
		"JUDGE_WRITES_PER_SEC=100000",
	}
	if apiKey != "" {
		env = append(env, "PUBLIC_API_KEY="+apiKey)
	}
	return server.New(bin, dir, logPath, append(env, extra...))
}

// startManaged starts the server binary on a fresh (or the configured) data directory.
func (r *runner) startManaged(ctx context.Context) (func(), error) {
	dir, root := r.cfg.DataDir, ""
	if dir == "" {
		var err error
		if root, err = os.MkdirTemp("", "podium-loadtest-*"); err != nil {
			return nil, err
		}
		dir = filepath.Join(root, "data")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if r.cfg.AdminPassword == "" {
		r.cfg.AdminPassword = "loadtest-" + client.RunID()
	}
	r.rep.Machine.FsyncProbe = fsyncProbe(dir, 200)
	logPath := r.cfg.ServerLog
	if logPath == "" {
		f, err := os.CreateTemp("", "podium-loadtest-*-server.log") // kept after the run
		if err != nil {
			return nil, err
		}
		logPath = f.Name()
		f.Close()
	}
	r.rep.ServerLog = logPath
	srv, err := newServerProc(r.cfg.ServerBin, dir, logPath, r.cfg.AdminPassword, r.cfg.APIKey, r.cfg.ServerLogLevel, r.cfg.ServerEnv)
	if err != nil {
		return nil, err
	}
	if err := srv.Start(ctx); err != nil {
		return nil, err
	}
	r.srv = srv
	r.rep.Managed = true
	r.cfg.Log("started %s (pid %d) on %s, data %s, log %s", r.cfg.ServerBin, srv.PID(), srv.Addr(), dir, srv.LogPath())
	return func() {
		if r.admin != nil {
			r.admin.CloseIdle() // idle keep-alive connections hold up the server's shutdown
		}
		t := time.Now()
		if err := srv.Stop(); err != nil {
			r.note("%v", err)
		}
		if d := time.Since(t); d > 5*time.Second {
			r.note("the server took %.1fs to stop after SIGTERM", d.Seconds())
		}
		srv.Close()
		if root != "" {
			os.RemoveAll(root)
		}
	}, nil
}
