package transport

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

// ClusterNode is what the cluster routes need from a cluster node (cluster.Node). A
// node without them (a single node) answers {"state":"standalone"} for the status, 409
// for the membership and restore calls, and has no forwarding route (standalone).
type ClusterNode interface {
	ClusterStatusJSON() ([]byte, error)
	AddClusterNode(ctx context.Context, id, raftAddr, httpURL string) error
	RemoveClusterNode(ctx context.Context, id string) error
	// RestoreClusterBackup replaces the cluster's state with a backup (leader only).
	RestoreClusterBackup(ctx context.Context, name string) error
	// HandleForward serves a change forwarded by another node; auth is the
	// X-Podium-Cluster header (HMAC over the cluster secret, checked by the node).
	HandleForward(auth string, body []byte) (status int, resp []byte)
}

// forwardAuthHeader is cluster.ForwardAuthHeader (transport does not import persist).
const forwardAuthHeader = "X-Podium-Cluster"

// routesCluster adds docs/behaviour.md#cluster's routes when the node supports them.
func (s *Server) routesCluster(api fiber.Router) {
	cn, isCluster := s.node.(ClusterNode)
	if !isCluster {
		cn = standalone{}
	} else {
		api.Post("/cluster/forward", func(c *fiber.Ctx) error {
			auth := c.Get(forwardAuthHeader)
			if auth == "" { // nothing to verify: do not read a body for it
				return &httpError{status: fiber.StatusUnauthorized, msg: "bad cluster authentication"}
			}
			b, err := requestBody(c)
			if err != nil {
				return err
			}
			status, body := cn.HandleForward(auth, b)
			c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
			return c.Status(status).Send(body)
		})
	}
	api.Get("/admin/cluster", s.adminAuth, func(c *fiber.Ctx) error {
		b, err := cn.ClusterStatusJSON()
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(b)
	})
	api.Post("/admin/cluster/nodes", s.adminAuth, func(c *fiber.Ctx) error {
		var req struct {
			ID       *string `json:"id"`
			RaftAddr *string `json:"raft_addr"`
			HTTPURL  *string `json:"http_url"`
		}
		if err := bindJSON(c, &req, false); err != nil {
			return err
		}
		if err := need("id", req.ID != nil); err != nil {
			return err
		}
		if err := need("raft_addr", req.RaftAddr != nil); err != nil {
			return err
		}
		if err := need("http_url", req.HTTPURL != nil); err != nil {
			return err
		}
		if err := cn.AddClusterNode(c.UserContext(), *req.ID, *req.RaftAddr, *req.HTTPURL); err != nil {
			return err
		}
		return ok(c)
	})
	api.Post("/admin/cluster/restore", s.adminAuth, func(c *fiber.Ctx) error {
		var req struct {
			Backup *string `json:"backup"`
		}
		if err := bindJSON(c, &req, false); err != nil {
			return err
		}
		if err := need("backup", req.Backup != nil); err != nil {
			return err
		}
		if err := cn.RestoreClusterBackup(c.UserContext(), *req.Backup); err != nil {
			return err
		}
		return ok(c)
	})
	api.Delete("/admin/cluster/nodes/:id", s.adminAuth, func(c *fiber.Ctx) error {
		if err := cn.RemoveClusterNode(c.UserContext(), c.Params("id")); err != nil {
			return err
		}
		return ok(c)
	})
}

// applyHooker is implemented by cluster nodes: fn runs on the node's apply goroutine
// after every command it applies, whichever node took the request (kind "" after the
// whole state was replaced by a snapshot). It must not block.
type applyHooker interface {
	SetApplyHook(fn func(kind string))
}

// watchReplicatedChanges keeps the content cache right on a cluster node: content the
// other nodes changed (or a reset, or a snapshot install) marks the cached bodies stale,
// and the next request rebuilds them. A single node's handlers invalidate it themselves.
// It also wakes the outbox when mails were queued through another node.
func (s *Server) watchReplicatedChanges(cc *contentCache) {
	ah, ok := s.node.(applyHooker)
	if !ok {
		return
	}
	ah.SetApplyHook(func(kind string) {
		if kind == "" || kind == "judge.create" || kind == "email.queue" || kind == "email.queue_team" {
			s.mailQueued() // mails queued on another node: the leader's outbox starts now
		}
		if kind == "" || kind == "admin.reset" || strings.HasPrefix(kind, "content.") {
			for k := range cc.kinds {
				cc.kinds[k].gen.Add(1)
			}
		}
	})
}

// errNotCluster answers the membership calls of a single node.
var errNotCluster = &engine.Error{Kind: engine.KindConflict, Msg: "this server is not part of a cluster"}

// standalone answers the cluster routes for a node that is not a cluster member.
type standalone struct{}

func (standalone) ClusterStatusJSON() ([]byte, error) { return []byte(`{"state":"standalone"}`), nil }

func (standalone) AddClusterNode(context.Context, string, string, string) error {
	return errNotCluster
}

func (standalone) RemoveClusterNode(context.Context, string) error { return errNotCluster }

func (standalone) RestoreClusterBackup(context.Context, string) error {
	return &engine.Error{Kind: engine.KindConflict, Msg: "this server is not part of a cluster: use `podium restore`"}
}

// HandleForward is never called: a standalone node has no forwarding route.
func (standalone) HandleForward(string, []byte) (int, []byte) {
	return fiber.StatusNotFound, []byte(`{"error":"not a cluster node"}`)
}
