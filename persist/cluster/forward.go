package cluster

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"
	"podium/persist"
)

// Followers forward changes to the leader over the members' HTTP URLs (docs/behaviour.md#cluster):
// POST <leader>/api/cluster/forward with the entry (command, actor, request id) and a
// header X-Podium-Cluster: <unix ms>.<hex HMAC-SHA256(secret, "fwd\n" ms "\n" body)>.
// The leader answers once the entry is committed and applied there.

// ForwardPath is the leader's route for forwarded changes.
const ForwardPath = "/api/cluster/forward"

// ForwardAuthHeader carries the forwarding MAC.
const ForwardAuthHeader = "X-Podium-Cluster"

// forwardSkew is how far the MAC's time may be from the receiver's clock.
const forwardSkew = 60 * time.Second

type forwardRequest struct {
	Op     string        `json:"op"` // apply | add | remove
	Entry  *clusterEntry `json:"entry,omitempty"`
	Member *Peer         `json:"member,omitempty"`
}

type forwardResponse struct {
	Index uint64 `json:"index,omitempty"`
	Error string `json:"error,omitempty"`
	Retry bool   `json:"retry,omitempty"`
}

func forwardMAC(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("fwd\n" + ts + "\n"))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// forward sends req to the leader and returns the index it committed.
func (c *Node) forward(ctx context.Context, req forwardRequest) (uint64, error) {
	id, url := c.leaderURL()
	if id == "" {
		return 0, errRetry{errors.New("no leader known")}
	}
	if url == "" {
		return 0, errRetry{fmt.Errorf("no HTTP URL known for leader %s", id)}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, leaderWait+2*time.Second)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url+ForwardPath, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	ts := strconv.FormatInt(time.Now().UnixMilli(), 10)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set(ForwardAuthHeader, ts+"."+forwardMAC(c.secret, ts, body))
	resp, err := c.client.Do(hr)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return 0, ctx.Err()
		}
		return 0, errRetry{fmt.Errorf("forward to leader %s: %w", id, err)}
	}
	defer resp.Body.Close()
	var fr forwardResponse
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = json.Unmarshal(b, &fr)
	switch {
	case resp.StatusCode == http.StatusOK:
		return fr.Index, nil
	case fr.Retry || resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusMisdirectedRequest:
		return 0, errRetry{fmt.Errorf("leader %s: %s", id, fr.Error)}
	case resp.StatusCode == http.StatusUnauthorized:
		c.log.Error().Str("leader", id).Msg("the leader refused a forwarded change: CLUSTER_SECRET differs between nodes")
		return 0, fmt.Errorf("leader %s refused the forwarded change (cluster secret)", id)
	default:
		if fr.Error == "" {
			fr.Error = resp.Status
		}
		return 0, fmt.Errorf("leader %s: %s", id, fr.Error)
	}
}

// HandleForward serves a forwarded change on the leader. auth is the
// X-Podium-Cluster header; the answer is a status and a JSON body.
func (c *Node) HandleForward(auth string, body []byte) (int, []byte) {
	answer := func(status int, fr forwardResponse) (int, []byte) {
		b, _ := json.Marshal(fr)
		return status, b
	}
	ts, mac, ok := strings.Cut(auth, ".")
	ms, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil || !hmac.Equal([]byte(mac), []byte(forwardMAC(c.secret, ts, body))) {
		return answer(http.StatusUnauthorized, forwardResponse{Error: "bad cluster authentication"})
	}
	if d := time.Since(time.UnixMilli(ms)); d > forwardSkew || d < -forwardSkew {
		return answer(http.StatusUnauthorized, forwardResponse{Error: "cluster authentication expired (clocks differ by more than a minute?)"})
	}
	var req forwardRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return answer(http.StatusBadRequest, forwardResponse{Error: "bad forwarded request: " + err.Error()})
	}
	if c.r.State() != raft.Leader {
		return answer(http.StatusMisdirectedRequest, forwardResponse{Error: "not the leader", Retry: true})
	}
	var idx uint64
	switch req.Op {
	case "apply":
		if req.Entry == nil || (req.Entry.Env == nil && req.Entry.Member == nil) {
			return answer(http.StatusBadRequest, forwardResponse{Error: "empty entry"})
		}
		idx, err = c.propose(req.Entry)
	case "add":
		if req.Member == nil {
			return answer(http.StatusBadRequest, forwardResponse{Error: "no member"})
		}
		idx, err = c.addLocal(*req.Member)
	case "remove":
		if req.Member == nil {
			return answer(http.StatusBadRequest, forwardResponse{Error: "no member"})
		}
		idx, err = c.removeLocal(req.Member.ID)
	default:
		return answer(http.StatusBadRequest, forwardResponse{Error: "unknown op"})
	}
	var rt errRetry
	switch {
	case err == nil:
		return answer(http.StatusOK, forwardResponse{Index: idx})
	case errors.As(err, &rt), errors.Is(err, persist.ErrClosed), errors.Is(err, persist.ErrReadOnly):
		return answer(http.StatusServiceUnavailable, forwardResponse{Error: err.Error(), Retry: true})
	default:
		return answer(http.StatusBadRequest, forwardResponse{Error: err.Error()})
	}
}
