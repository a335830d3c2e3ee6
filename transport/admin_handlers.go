package transport

import (
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

func (s *Server) routesAdmin(api fiber.Router) {
	api.Get("/admin/clock", s.adminAuth, s.getClock)
	api.Post("/admin/clock/pause", s.adminAuth, s.clockCmd(&engine.ClockPause{}))
	api.Post("/admin/clock/unpause", s.adminAuth, s.clockCmd(&engine.ClockUnpause{}))
	api.Post("/admin/clock/reset", s.adminAuth, s.clockCmd(&engine.ClockReset{}))
	api.Post("/admin/clock/backup", s.adminAuth, s.clockBackup)
	api.Get("/admin/started", s.started)
	api.Get("/admin/options", s.adminAuth, s.getOptions)
	api.Post("/admin/options", s.adminAuth, s.setOptions)
	api.Post("/admin/tracks", s.adminAuth, s.setOption(func() optionPayload { return &tracksReq{} }))
	api.Post("/admin/track-views", s.adminAuth, s.setOption(func() optionPayload { return &trackViewsReq{} }))
	api.Post("/admin/num-groups", s.adminAuth, s.setOption(func() optionPayload { return &numGroupsReq{} }))
	api.Post("/admin/group-sizes", s.adminAuth, s.setOption(func() optionPayload { return &groupSizesReq{} }))
	api.Post("/admin/block-reqs", s.adminAuth, s.setOption(func() optionPayload { return &blockReqsReq{} }))
	api.Post("/admin/max-reqs", s.adminAuth, s.setOption(func() optionPayload { return &maxReqsReq{} }))
	api.Get("/admin/timer", s.judgeOrAdmin, s.getTimer)
	api.Post("/admin/deliberation", s.adminAuth, s.setOption(func() optionPayload { return &deliberationReq{} }))
	api.Get("/judge/deliberation", s.judgeAuth, s.getDeliberation)
	api.Get("/admin/stats", s.adminAuth, s.adminStats)
	api.Get("/admin/results", s.adminAuth, s.adminResults)
	api.Get("/admin/results.csv", s.adminAuth, s.exportResults)
	api.Get("/admin/stats/:track", s.adminAuth, s.adminTrackStats)
	api.Get("/admin/flags", s.adminAuth, s.listFlags)
	api.Delete("/admin/flag/:id", s.adminAuth, s.dismissFlag)
	api.Get("/admin/log", s.adminAuth, s.auditLog)
	api.Post("/admin/reset", s.adminAuth, s.reset)
	api.Post("/admin/backup", s.adminAuth, s.backup)
	api.Get("/admin/backup/:name", s.adminAuth, s.downloadBackup)
}

func (s *Server) getClock(c *fiber.Ctx) error {
	var clk engine.Clock
	s.node.Read(func(st *engine.State) { clk = st.Options.Clock })
	return c.JSON(fiber.Map{"running": clk.Running, "time": clk.Elapsed(time.Now().UnixMilli())})
}

// clockCmd answers a clock command with {"ok":1, "clock": {...}}. Commands carry no
// fields, so sharing one value between requests is safe.
func (s *Server) clockCmd(cmd engine.Command) fiber.Handler {
	return func(c *fiber.Ctx) error {
		res, err := s.submit(c, cmd)
		if err != nil {
			return err
		}
		return c.JSON(fiber.Map{"ok": 1, "clock": res.(engine.Clock)})
	}
}

func (s *Server) clockBackup(c *fiber.Ctx) error {
	if err := s.node.Snapshot(); err != nil {
		return err
	}
	return ok(c)
}

func (s *Server) started(c *fiber.Ctx) error {
	var running bool
	s.node.Read(func(st *engine.State) { running = st.Options.Clock.Running })
	return okFlag(c, running)
}

func (s *Server) getOptions(c *fiber.Ctx) error {
	var o engine.Options
	s.node.Read(func(st *engine.State) { o = st.OptionsView() })
	return c.JSON(o)
}

// adminResults handles GET /api/admin/results (docs/behaviour.md#ratings).
func (s *Server) adminResults(c *fiber.Ctx) error {
	var out engine.ResultsView
	s.node.Read(func(st *engine.State) { out = st.Results() })
	return c.JSON(out)
}

func (s *Server) getTimer(c *fiber.Ctx) error {
	var t int
	s.node.Read(func(st *engine.State) { t = st.Options.JudgingTimer })
	return c.JSON(fiber.Map{"judging_timer": t})
}

func (s *Server) backup(c *fiber.Ctx) error {
	name, err := s.node.Backup()
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": 1, "backup": name})
}

func (s *Server) downloadBackup(c *fiber.Ctx) error {
	name := c.Params("name")
	p, err := s.node.BackupPath(name)
	if err != nil {
		return notFound("no backup named %q", name)
	}
	c.Set(fiber.HeaderContentType, "application/gzip")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	return c.SendFile(p, false)
}

// parseOptionsBody decodes the body of POST /api/admin/options: any subset of the
// settable fields (an empty body means {}); values are checked by the engine.
func parseOptionsBody(body []byte) (*engine.SetOptions, error) {
	var cmd engine.SetOptions
	if err := decodeJSON(body, &cmd, true); err != nil {
		return nil, err
	}
	return &cmd, nil
}

func (s *Server) setOptions(c *fiber.Ctx) error {
	body, err := jsonBody(c)
	if err != nil {
		return err
	}
	cmd, err := parseOptionsBody(body)
	if err != nil {
		return err
	}
	if cmd.Empty() {
		return ok(c) // nothing to change
	}
	return s.submitOK(c, cmd)
}

// optionPayload is the body of a single-setting route (tracks, track-views,
// num-groups, group-sizes, block-reqs, max-reqs, deliberation): one required field.
type optionPayload interface {
	validate() error
	command() engine.Command
}

// setOption serves a single-setting route; newReq returns a fresh payload per request.
func (s *Server) setOption(newReq func() optionPayload) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req := newReq()
		if err := bindJSON(c, req, false); err != nil {
			return err
		}
		if err := req.validate(); err != nil {
			return err
		}
		return s.submitOK(c, req.command())
	}
}

type tracksReq struct {
	Tracks *[]string `json:"tracks"`
}

func (r *tracksReq) validate() error         { return need("tracks", r.Tracks != nil) }
func (r *tracksReq) command() engine.Command { return &engine.SetOptions{Tracks: r.Tracks} }

type trackViewsReq struct {
	TrackViews *[]int `json:"track_views"`
}

func (r *trackViewsReq) validate() error { return need("track_views", r.TrackViews != nil) }
func (r *trackViewsReq) command() engine.Command {
	return &engine.SetOptions{TrackViews: r.TrackViews}
}

type numGroupsReq struct {
	NumGroups *int `json:"num_groups"`
}

func (r *numGroupsReq) validate() error { return need("num_groups", r.NumGroups != nil) }
func (r *numGroupsReq) command() engine.Command {
	return &engine.SetOptions{NumGroups: r.NumGroups}
}

type groupSizesReq struct {
	GroupSizes *[]int `json:"group_sizes"`
}

func (r *groupSizesReq) validate() error { return need("group_sizes", r.GroupSizes != nil) }
func (r *groupSizesReq) command() engine.Command {
	return &engine.SetOptions{GroupSizes: r.GroupSizes}
}

type blockReqsReq struct {
	BlockReqs *bool `json:"block_reqs"`
}

func (r *blockReqsReq) validate() error { return need("block_reqs", r.BlockReqs != nil) }
func (r *blockReqsReq) command() engine.Command {
	return &engine.SetOptions{BlockReqs: r.BlockReqs}
}

type maxReqsReq struct {
	MaxReqPerMin *int `json:"max_req_per_min"`
}

func (r *maxReqsReq) validate() error { return need("max_req_per_min", r.MaxReqPerMin != nil) }
func (r *maxReqsReq) command() engine.Command {
	return &engine.SetOptions{MaxReqPerMin: r.MaxReqPerMin}
}

type deliberationReq struct {
	Start *bool `json:"start"`
}

func (r *deliberationReq) validate() error { return need("start", r.Start != nil) }
func (r *deliberationReq) command() engine.Command {
	return &engine.SetDeliberation{Start: *r.Start}
}

func (s *Server) getDeliberation(c *fiber.Ctx) error {
	var on bool
	s.node.Read(func(st *engine.State) { on = st.Options.Deliberation })
	return okFlag(c, on)
}

func (s *Server) adminStats(c *fiber.Ctx) error {
	var st engine.AdminStats
	s.node.Read(func(state *engine.State) { st = state.AdminStats("") })
	return c.JSON(st)
}

func (s *Server) adminTrackStats(c *fiber.Ctx) error {
	track, err := url.PathUnescape(c.Params("track"))
	if err != nil {
		return badRequest("invalid track name in path")
	}
	var st engine.AdminStats
	found := false
	s.node.Read(func(state *engine.State) {
		for _, t := range state.Options.Tracks {
			if t == track {
				found = true
				st = state.AdminStats(track)
				return
			}
		}
	})
	if !found {
		return notFound("no track named %q", track)
	}
	return c.JSON(st)
}

func (s *Server) listFlags(c *fiber.Ctx) error {
	var out []engine.Flag
	s.node.Read(func(st *engine.State) { out = st.FlagsView() })
	return c.JSON(out)
}

func (s *Server) dismissFlag(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return s.submitOK(c, &engine.DismissFlag{Flag: id})
}

func (s *Server) auditLog(c *fiber.Ctx) error {
	// Strings are immutable: copy only the headers under the lock, join outside it.
	var lines []string
	s.node.Read(func(st *engine.State) {
		l := st.Log
		if len(l) > engine.MaxLogLines {
			l = l[len(l)-engine.MaxLogLines:]
		}
		lines = append([]string(nil), l...)
	})
	return c.JSON(fiber.Map{"log": strings.Join(lines, "\n")})
}

type resetReq struct {
	Type *string `json:"type"`
}

func (r *resetReq) validate() error {
	if r.Type != nil && !engine.ValidResetType(*r.Type) {
		return badRequest("unknown reset type %q (want all, projects, judges, judging-data or rankings)", *r.Type)
	}
	return nil
}

func (s *Server) reset(c *fiber.Ctx) error {
	var req resetReq
	if err := bindJSON(c, &req, true); err != nil {
		return err
	}
	if err := req.validate(); err != nil {
		return err
	}
	t := engine.ResetAll
	if req.Type != nil {
		t = *req.Type
	}
	_, name, err := s.node.SubmitWithBackup(c.UserContext(), actorOf(c), &engine.Reset{Type: t, TrackRule: engine.TrackRuleCover})
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": 1, "backup": name})
}
