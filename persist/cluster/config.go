package cluster

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Peer is one initial voter from CLUSTER_PEERS.
type Peer struct {
	ID       string
	RaftAddr string
	HTTPURL  string
}

// Config holds the settings of docs/behaviour.md#cluster.
type Config struct {
	NodeID        string
	RaftAddr      string // listen address
	RaftAdvertise string // address the others reach this node at
	Peers         []Peer
	Secret        string
	// TrailingLogs is how many applied entries stay in the log after a snapshot
	// (RAFT_TRAILING_LOGS, default 10,240); a follower further behind gets a snapshot.
	TrailingLogs uint64
	// TLSCert, TLSKey and TLSCA (RAFT_TLS_*), all or none, wrap raft connections in
	// mutual TLS (the HMAC handshake still runs inside).
	TLSCert, TLSKey, TLSCA string
}

// settings are the environment variables that switch cluster mode on.
var settings = []string{"NODE_ID", "RAFT_ADDR", "RAFT_ADVERTISE", "CLUSTER_PEERS", "CLUSTER_SECRET"}

var nodeIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// minSecret is the shortest CLUSTER_SECRET accepted.
const minSecret = 32

// ParseConfig reads the cluster settings through get (os.Getenv). It returns nil
// when none is set (single-node mode) and an error naming the setting when one is
// missing or malformed.
func ParseConfig(get func(string) string) (*Config, error) {
	any := false
	for _, k := range settings {
		if get(k) != "" {
			any = true
		}
	}
	if !any {
		return nil, nil
	}
	c := &Config{
		NodeID: strings.TrimSpace(get("NODE_ID")), RaftAddr: strings.TrimSpace(get("RAFT_ADDR")),
		RaftAdvertise: strings.TrimSpace(get("RAFT_ADVERTISE")), Secret: get("CLUSTER_SECRET"),
	}
	if c.NodeID == "" {
		return nil, fmt.Errorf("NODE_ID is required in cluster mode")
	}
	if !nodeIDRE.MatchString(c.NodeID) {
		return nil, fmt.Errorf("NODE_ID=%q: use letters, digits, '.', '_' or '-' (at most 64)", c.NodeID)
	}
	if c.RaftAddr == "" {
		return nil, fmt.Errorf("RAFT_ADDR is required in cluster mode (host:port)")
	}
	if err := checkHostPort(c.RaftAddr, true); err != nil {
		return nil, fmt.Errorf("RAFT_ADDR=%q: %v", c.RaftAddr, err)
	}
	if c.RaftAdvertise != "" {
		if err := checkHostPort(c.RaftAdvertise, false); err != nil {
			return nil, fmt.Errorf("RAFT_ADVERTISE=%q: %v", c.RaftAdvertise, err)
		}
	}
	if len(c.Secret) < minSecret {
		return nil, fmt.Errorf("CLUSTER_SECRET is required in cluster mode and must be at least %d characters", minSecret)
	}
	if v := strings.TrimSpace(get("RAFT_TRAILING_LOGS")); v != "" {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("RAFT_TRAILING_LOGS=%q: want a whole number", v)
		}
		c.TrailingLogs = n
	}
	c.TLSCert, c.TLSKey, c.TLSCA = get("RAFT_TLS_CERT"), get("RAFT_TLS_KEY"), get("RAFT_TLS_CA")
	if set := btoi(c.TLSCert != "") + btoi(c.TLSKey != "") + btoi(c.TLSCA != ""); set != 0 && set != 3 {
		return nil, fmt.Errorf("RAFT_TLS_CERT, RAFT_TLS_KEY and RAFT_TLS_CA go together: set all three or none")
	}
	peers, err := parsePeers(get("CLUSTER_PEERS"))
	if err != nil {
		return nil, fmt.Errorf("CLUSTER_PEERS: %v", err)
	}
	c.Peers = peers
	if c.RaftAdvertise == "" {
		host, _, _ := net.SplitHostPort(c.RaftAddr)
		if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
			c.RaftAdvertise = c.RaftAddr
		} else if p, ok := c.peer(c.NodeID); ok {
			c.RaftAdvertise = p.RaftAddr
		} else {
			return nil, fmt.Errorf("RAFT_ADVERTISE is required when RAFT_ADDR=%q has no host and NODE_ID is not in CLUSTER_PEERS", c.RaftAddr)
		}
	}
	if p, ok := c.peer(c.NodeID); ok && p.RaftAddr != c.RaftAdvertise {
		return nil, fmt.Errorf("CLUSTER_PEERS gives %s the raft address %s, but this node advertises %s (RAFT_ADDR/RAFT_ADVERTISE)", c.NodeID, p.RaftAddr, c.RaftAdvertise)
	}
	return c, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (c *Config) peer(id string) (Peer, bool) {
	for _, p := range c.Peers {
		if p.ID == id {
			return p, true
		}
	}
	return Peer{}, false
}

func checkHostPort(s string, allowEmptyHost bool) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("want host:port")
	}
	if host == "" && !allowEmptyHost {
		return fmt.Errorf("want host:port with a host")
	}
	if port == "" || strings.Trim(port, "0123456789") != "" {
		return fmt.Errorf("port must be a number")
	}
	return nil
}

// parsePeers parses "id=raft_host:raft_port=http_base_url,...".
func parsePeers(v string) ([]Peer, error) {
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("required in cluster mode (id=raft_host:port=http_url,...)")
	}
	var out []Peer
	ids := map[string]bool{}
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		parts := strings.SplitN(item, "=", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("%q: want id=raft_host:port=http_url", item)
		}
		p := Peer{ID: parts[0], RaftAddr: parts[1], HTTPURL: strings.TrimRight(parts[2], "/")}
		if !nodeIDRE.MatchString(p.ID) {
			return nil, fmt.Errorf("%q: bad node id", item)
		}
		if ids[p.ID] {
			return nil, fmt.Errorf("node id %q appears twice", p.ID)
		}
		ids[p.ID] = true
		if err := checkHostPort(p.RaftAddr, false); err != nil {
			return nil, fmt.Errorf("%q: raft address: %v", item, err)
		}
		if err := checkHTTPURL(p.HTTPURL); err != nil {
			return nil, fmt.Errorf("%q: %v", item, err)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no peers")
	}
	return out, nil
}

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("http url %q: want http(s)://host[:port]", s)
	}
	return nil
}
