package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/raft"

	"podium/engine"
	"podium/persist"
)

// MemberStatus is one member in GET /api/admin/cluster.
type MemberStatus struct {
	ID            string `json:"id"`
	RaftAddr      string `json:"raft_addr"`
	HTTPURL       string `json:"http_url"`
	Voter         bool   `json:"voter"`
	Reachable     bool   `json:"reachable"`
	LastContactMS int64  `json:"last_contact_ms"`
}

// Status is the answer of GET /api/admin/cluster (docs/behaviour.md#cluster).
type Status struct {
	NodeID       string         `json:"node_id,omitempty"`
	State        string         `json:"state"`
	LeaderID     string         `json:"leader_id,omitempty"`
	Term         uint64         `json:"term,omitempty"`
	CommitIndex  uint64         `json:"commit_index,omitempty"`
	AppliedIndex uint64         `json:"applied_index,omitempty"`
	LeadsDuties  bool           `json:"leads_duties,omitempty"`
	Nodes        []MemberStatus `json:"nodes,omitempty"`
	StateDigest  *StateDigest   `json:"state_digest,omitempty"`
}

// ClusterStatus reports this node's view of the cluster.
func (c *Node) ClusterStatus() (Status, error) {
	_, leader := c.r.LeaderWithID()
	st := Status{
		NodeID: c.cfg.NodeID, State: stateName(c.r.State()), LeaderID: string(leader),
		Term: c.r.CurrentTerm(), CommitIndex: c.r.CommitIndex(), Nodes: []MemberStatus{},
		LeadsDuties: c.LeadsDuties(),
	}
	if t, err := strconv.ParseUint(c.r.Stats()["term"], 10, 64); err == nil {
		st.Term = t
	}
	d, err := c.fsm.digest()
	if err != nil {
		return st, fmt.Errorf("state digest: %w", err)
	}
	st.StateDigest, st.AppliedIndex = &d, max(d.Index, c.r.AppliedIndex())
	if st.CommitIndex < st.AppliedIndex {
		st.CommitIndex = st.AppliedIndex
	}
	f := c.r.GetConfiguration()
	if err := f.Error(); err != nil {
		return st, fmt.Errorf("raft configuration: %w", err)
	}
	urls := c.memberURLs()
	for _, s := range f.Configuration().Servers {
		ns := MemberStatus{
			ID: string(s.ID), RaftAddr: string(s.Address), HTTPURL: urls[string(s.ID)],
			Voter: s.Suffrage == raft.Voter, LastContactMS: -1,
		}
		if string(s.ID) == c.cfg.NodeID {
			ns.Reachable, ns.LastContactMS = true, 0
		} else if v, ok := c.contacts.Load(string(s.ID)); ok {
			ago := time.Since(v.(time.Time))
			ns.LastContactMS = ago.Milliseconds()
			ns.Reachable = ago < 3*time.Second
		}
		st.Nodes = append(st.Nodes, ns)
	}
	return st, nil
}

func invalid(format string, a ...any) error {
	return &engine.Error{Kind: engine.KindInvalid, Msg: fmt.Sprintf(format, a...)}
}

// AddClusterNode adds a voter through the leader (from any node).
func (c *Node) AddClusterNode(ctx context.Context, id, raftAddr, httpURL string) error {
	m := Peer{ID: id, RaftAddr: raftAddr, HTTPURL: httpURL}
	if !nodeIDRE.MatchString(id) {
		return invalid("id %q: use letters, digits, '.', '_' or '-' (at most 64)", id)
	}
	if err := checkHostPort(raftAddr, false); err != nil {
		return invalid("raft_addr %q: %v", raftAddr, err)
	}
	if err := checkHTTPURL(httpURL); err != nil {
		return invalid("%v", err)
	}
	return c.viaLeader(ctx, forwardRequest{Op: "add", Member: &m}, func() (uint64, error) { return c.addLocal(m) })
}

// RemoveClusterNode removes a member through the leader (from any node).
func (c *Node) RemoveClusterNode(ctx context.Context, id string) error {
	f := c.r.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	found := false
	for _, s := range f.Configuration().Servers {
		found = found || string(s.ID) == id
	}
	if !found {
		return &engine.Error{Kind: engine.KindNotFound, Msg: fmt.Sprintf("no cluster node %q", id)}
	}
	return c.viaLeader(ctx, forwardRequest{Op: "remove", Member: &Peer{ID: id}}, func() (uint64, error) { return c.removeLocal(id) })
}

// viaLeader runs local on the leader or forwards req, retrying until leaderWait.
func (c *Node) viaLeader(ctx context.Context, req forwardRequest, local func() (uint64, error)) error {
	deadline := time.Now().Add(leaderWait)
	for {
		var err error
		if c.r.State() == raft.Leader {
			_, err = local()
		} else {
			_, err = c.forward(ctx, req)
		}
		var rt errRetry
		if err == nil || !errors.As(err, &rt) {
			return err
		}
		if time.Now().After(deadline) {
			return ErrNoLeader
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// addLocal records the member's HTTP URL in the log, then adds it as a voter.
func (c *Node) addLocal(m Peer) (uint64, error) {
	if _, err := c.propose(&clusterEntry{Member: &clusterMember{ID: m.ID, HTTPURL: m.HTTPURL}}); err != nil {
		return 0, err
	}
	f := c.r.AddVoter(raft.ServerID(m.ID), raft.ServerAddress(m.RaftAddr), 0, 10*time.Second)
	if err := f.Error(); err != nil {
		return 0, raftErr(err)
	}
	c.log.Info().Str("id", m.ID).Str("raft_addr", m.RaftAddr).Msg("cluster node added")
	return f.Index(), nil
}

func (c *Node) removeLocal(id string) (uint64, error) {
	f := c.r.RemoveServer(raft.ServerID(id), 0, 10*time.Second)
	if err := f.Error(); err != nil {
		return 0, raftErr(err)
	}
	c.log.Info().Str("id", id).Msg("cluster node removed")
	return f.Index(), nil
}

func raftErr(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrEnqueueTimeout), errors.Is(err, raft.ErrLeadershipTransferInProgress),
		errors.Is(err, raft.ErrAbortedByRestore):
		return errRetry{err}
	case errors.Is(err, raft.ErrRaftShutdown):
		return persist.ErrClosed
	}
	return err
}

// ClusterStatusJSON is ClusterStatus encoded (for transport).
func (c *Node) ClusterStatusJSON() ([]byte, error) {
	st, err := c.ClusterStatus()
	if err != nil {
		return nil, err
	}
	return json.Marshal(st)
}

// RestoreClusterBackup replaces the whole cluster's state with a backup file from this
// node's backup directory (DATA_DIR/backups). It runs on the leader only: raft installs
// the state there and sends it to every follower as a snapshot.
func (c *Node) RestoreClusterBackup(ctx context.Context, name string) error {
	if c.r.State() != raft.Leader {
		id, url := c.leaderURL()
		return &engine.Error{Kind: engine.KindConflict, Msg: fmt.Sprintf("restore on the leader (%s %s), with the backup file in its backup directory", id, url)}
	}
	path, err := c.BackupPath(name)
	if err != nil {
		return &engine.Error{Kind: engine.KindNotFound, Msg: fmt.Sprintf("no backup %q in this node's backup directory", name)}
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, data, err := persist.ReadBackup(f)
	if err != nil {
		return invalid("%v", err)
	}
	if err := engine.New().Restore(data); err != nil {
		return invalid("backup state does not decode: %v", err)
	}
	h, _ := c.fsm.capture()
	h.Index = c.r.LastIndex() + 1
	h.Seen, h.SeenIdx = nil, nil
	hdr, err := json.Marshal(h)
	if err != nil {
		return err
	}
	conf := c.r.GetConfiguration()
	if err := conf.Error(); err != nil {
		return err
	}
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Configuration: conf.Configuration(), ConfigurationIndex: c.r.LastIndex(), Size: int64(len(hdr) + 1 + len(data))}
	body := io.MultiReader(bytes.NewReader(append(hdr, '\n')), bytes.NewReader(data))
	if err := c.r.Restore(meta, body, time.Minute); err != nil {
		return raftErr(err)
	}
	c.log.Warn().Str("backup", name).Msg("cluster state replaced by a backup")
	return nil
}
