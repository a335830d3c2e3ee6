package cluster

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"

	"podium/persist"
	"podium/persist/store"
)

// Open opens a cluster node on the data directory dir: raft with the journal as its
// log (DATA_DIR/raft/log), its stable store (DATA_DIR/raft/stable.dat) and its
// snapshots in the node's Badger store. A node listed in the configuration's peers
// bootstraps the cluster on a new directory.
func Open(dir string, opts Options) (*Node, error) {
	if opts.SnapshotEvery == 0 {
		opts.SnapshotEvery = 10000
	}
	c := newNode(dir, opts)
	opts.Observer = c.core.Observer() // the raft log's appends are measured too
	hl := raftLogger(opts.Log, c.log)
	snaps, err := c.openStorage(filepath.Join(dir, "raft"), opts, hl)
	if err != nil {
		return nil, err
	}
	if err := c.openTransport(hl); err != nil {
		c.logs.Close()
		c.st.Close()
		return nil, err
	}
	existing, err := c.startRaft(raftConfig(c.cfg, opts, hl), snaps)
	if err != nil {
		c.trans.Close()
		c.logs.Close()
		c.st.Close()
		return nil, err
	}
	go c.watch()
	c.log.Info().Str("node_id", c.cfg.NodeID).Str("raft_addr", c.cfg.RaftAdvertise).Bool("existing_state", existing).Msg("cluster node started")
	return c, nil
}

func newNode(dir string, opts Options) *Node {
	cfg := opts.Config
	obs := opts.RaftObserver
	if obs == nil {
		obs = nopObserver{}
	}
	log := opts.Log.With().Str("component", "cluster").Logger()
	core := persist.NewCore(opts.Observer)
	c := &Node{
		cfg: cfg, dir: dir, core: core, eng: core.Engine(), fsm: newFSM(core, opts.Log), obs: obs, secret: []byte(cfg.Secret),
		log:      log,
		client:   &http.Client{Timeout: localApplyWait, Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}},
		stopping: make(chan struct{}), quit: make(chan struct{}), done: make(chan struct{}),
	}
	for _, p := range cfg.Peers {
		c.fsm.members[p.ID] = p.HTTPURL
	}
	return c
}

// raftLogger routes raft's log lines into the cluster's logger: warnings and errors,
// and its information lines too when the node logs at info level or below.
func raftLogger(base, cluster zerolog.Logger) hclog.Logger {
	level := hclog.Warn
	if base.GetLevel() <= zerolog.InfoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{Name: "raft", Level: level, Output: cluster})
}

// openStorage opens the raft log, the stable store and the snapshot store.
func (c *Node) openStorage(rdir string, opts Options, hl hclog.Logger) (raft.SnapshotStore, error) {
	if err := os.MkdirAll(rdir, 0o700); err != nil {
		return nil, fmt.Errorf("create raft dir: %w", err)
	}
	var err error
	if c.logs, err = openRaftLog(filepath.Join(rdir, "log"), opts); err != nil {
		return nil, err
	}
	if c.stable, err = openFileStable(filepath.Join(rdir, "stable.dat"), filepath.Join(rdir, "stable.json")); err != nil {
		c.logs.Close()
		return nil, err
	}
	// Raft snapshots live in the node's Badger store (snapshot_store.go), like a single
	// node's snapshots.
	if c.st, err = store.OpenForNode(c.dir, opts.Log); err != nil {
		c.logs.Close()
		return nil, err
	}
	snaps, err := openRaftSnapshots(c.st, filepath.Join(rdir, "snapshots"), hl, c.log)
	if err != nil {
		c.logs.Close()
		c.st.Close()
		return nil, err
	}
	return snaps, nil
}

// openTransport listens for raft connections (authenticated, in TLS when configured).
func (c *Node) openTransport(hl hclog.Logger) error {
	var tlsCfg *tls.Config
	if c.cfg.TLSCert != "" {
		var err error
		if tlsCfg, err = loadRaftTLS(c.cfg.TLSCert, c.cfg.TLSKey, c.cfg.TLSCA); err != nil {
			return err
		}
	}
	var err error
	if c.layer, err = newAuthLayer(c.cfg.RaftAddr, c.cfg.RaftAdvertise, c.secret, tlsCfg, c.log); err != nil {
		return err
	}
	c.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: c.layer, MaxPool: 3, Timeout: 10 * time.Second, Logger: hl,
	})
	// A node whose journal cannot be written does not vote for itself (it would step
	// down at its first append); a probe write tells when the disk is back.
	c.stable.self = []byte(c.trans.LocalAddr())
	c.stable.refuseSelfVote = func() bool {
		if !c.logs.failed.Load() {
			return false
		}
		if c.logs.j.Probe() == nil {
			c.logs.failed.Store(false)
			return false
		}
		return true
	}
	return nil
}

func raftConfig(cfg *Config, opts Options, hl hclog.Logger) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.NodeID)
	rc.Logger = hl
	rc.MaxAppendEntries = 512
	rc.BatchApplyCh = true
	// Raft snapshots once SnapshotEvery (10,000) entries have gathered, looking every
	// 30-60 s; it keeps TrailingLogs entries after a snapshot for followers that lag.
	rc.SnapshotThreshold = opts.SnapshotEvery
	rc.SnapshotInterval = 30 * time.Second
	rc.TrailingLogs = 10240
	if cfg.TrailingLogs > 0 {
		rc.TrailingLogs = cfg.TrailingLogs
	}
	return rc
}

// startRaft bootstraps a new cluster when this node is one of the configured peers and
// the directory holds no raft state, then starts raft and watches its leader changes.
func (c *Node) startRaft(rc *raft.Config, snaps raft.SnapshotStore) (existing bool, err error) {
	existing, err = raft.HasExistingState(c.logs, c.stable, snaps)
	if err != nil {
		return false, fmt.Errorf("raft state: %w", err)
	}
	if _, self := c.cfg.peer(c.cfg.NodeID); !existing && self {
		var conf raft.Configuration
		for _, p := range c.cfg.Peers {
			conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.RaftAddr)})
		}
		if err := raft.BootstrapCluster(rc, c.logs, c.stable, snaps, c.trans, conf); err != nil {
			return false, fmt.Errorf("bootstrap the cluster: %w", err)
		}
	}
	if c.r, err = raft.NewRaft(rc, c.fsm, c.logs, c.stable, snaps, c.trans); err != nil {
		return false, fmt.Errorf("start raft: %w", err)
	}
	c.obsCh = make(chan raft.Observation, 16)
	c.observer = raft.NewObserver(c.obsCh, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	c.r.RegisterObserver(c.observer)
	return existing, nil
}
