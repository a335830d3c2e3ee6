package load

import (
	"errors"
	"time"
)

// Config describes a scenario. Zero values get the defaults of the standard scenario
// where noted.
type Config struct {
	URL string // server base URL, e.g. http://127.0.0.1:8080 (ignored when ServerBin is set)
	// MoreURLs are further nodes of a cluster: judges are spread over URL and these
	// (setup, admin requests and checks use URL).
	MoreURLs      []string
	AdminPassword string
	APIKey        string // PUBLIC_API_KEY: readers also hit /v1/public/* when set

	Projects int // P projects to create
	Judges   int // J judges to create
	Watchers int // W websocket connections
	Readers  int // expo/content readers

	Duration       time.Duration // length of the measured phase
	Think          time.Duration // judge think time between actions (0 = stress)
	ReaderInterval time.Duration // pause between a reader's requests (default 500 ms)
	SkipProb       float64       // probability that a judge skips instead of finishing (default 0.15)
	RankProb       float64       // probability of a rank after a finish (default 0.2)
	ClockInterval  time.Duration // admin pauses+unpauses the clock this often (default 2 s; <0 disables)
	ClockPause     time.Duration // how long the clock stays paused (default 100 ms)
	SampleInterval time.Duration // judge/project list sampling for the hold invariant (default 10 s; <0 disables)
	SetupWorkers   int           // concurrent setup requests (default 16)
	Seed           uint64        // random seed (0 = from time)
	NoCSV          bool          // create projects/judges one by one even if the CSV imports exist

	// Managed server (the tool starts the binary itself).
	ServerBin      string   // path to the podium binary; empty = use URL
	DataDir        string   // data directory for the managed server (default: a temp dir)
	ServerLogLevel string   // LOG_LEVEL for the managed server (default "warn")
	ServerLog      string   // file for the managed server's output (default: a new temp file, kept)
	ServerEnv      []string // extra KEY=VALUE for the managed server

	// Crash mode.
	CrashCycles int           // >0 runs crash mode with this many SIGKILL cycles
	CrashMin    time.Duration // earliest kill after the load starts (default 2 s)
	CrashMax    time.Duration // latest kill (default 6 s)
	Creators    int           // admin goroutines creating projects/judges during crash cycles (default 1)

	// Flush mode (flush.go): >0 has every judge come back online at once with this many
	// queued keyed actions instead of the measured phase.
	Flush int

	// Cluster mode and failure injection (cluster.go).
	ClusterNodes int           // with ServerBin: start this many nodes as one cluster (docs/behaviour.md#cluster)
	KillAfter    time.Duration // SIGKILL a target this long into the measured phase (0: never)
	KillLeader   bool          // the target is the cluster's leader (needs ClusterNodes)
	KillPID      int           // the target is this process

	Log func(format string, args ...any) // progress output (default: none)
}

// checkCluster rejects combinations of the cluster and kill settings that cannot work.
func (c *Config) checkCluster() error {
	switch {
	case c.ClusterNodes > 0 && c.ServerBin == "":
		return errors.New("a cluster of nodes needs the server binary (-server)")
	case c.ClusterNodes > 0 && c.CrashCycles > 0:
		return errors.New("crash mode runs one server, not a cluster")
	case c.KillLeader && c.ClusterNodes == 0:
		return errors.New("killing the leader needs a cluster started by the tool (-cluster N)")
	case c.KillLeader && c.KillPID > 0:
		return errors.New("kill the leader or a pid, not both")
	case c.KillAfter > 0 && !c.KillLeader && c.KillPID <= 0:
		return errors.New("a kill time needs a target (the leader or a pid)")
	case c.KillAfter > 0 && c.KillAfter >= c.Duration:
		return errors.New("the kill time must fall inside the measured phase")
	}
	return nil
}

func (c *Config) defaults() {
	if c.ReaderInterval == 0 {
		c.ReaderInterval = 500 * time.Millisecond
	}
	if c.SkipProb == 0 {
		c.SkipProb = 0.15
	}
	if c.RankProb == 0 {
		c.RankProb = 0.2
	}
	if c.ClockInterval == 0 {
		c.ClockInterval = 2 * time.Second
	}
	if c.ClockPause == 0 {
		c.ClockPause = 100 * time.Millisecond
	}
	if c.SampleInterval == 0 {
		c.SampleInterval = 10 * time.Second
	}
	if c.SetupWorkers == 0 {
		c.SetupWorkers = 16
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if c.ServerLogLevel == "" {
		c.ServerLogLevel = "warn"
	}
	if c.CrashMin == 0 {
		c.CrashMin = 2 * time.Second
	}
	if c.CrashMax < c.CrashMin {
		c.CrashMax = c.CrashMin + 4*time.Second
	}
	if c.Creators == 0 {
		c.Creators = 1
	}
	if c.Log == nil {
		c.Log = func(string, ...any) {}
	}
}
