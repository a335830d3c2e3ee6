package transport

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

func (s *Server) routesJudges(api fiber.Router) {
	api.Get("/judge", s.judgeAuth, s.getJudgeSelf)
	api.Post("/judge/new", s.adminAuth, s.newJudge)
	api.Get("/judge/list", s.adminAuth, s.listJudges)
	api.Get("/judge/stats", s.adminAuth, s.judgeStats)
	api.Put("/judge/hide/:id", s.adminAuth, s.hideJudge)
	api.Post("/judge/hide", s.adminAuth, s.hideJudges)
	api.Put("/judge/move/group/:id", s.adminAuth, s.moveJudgeGroup)
	api.Post("/judge/move/group", s.adminAuth, s.moveJudgesGroup)
	api.Post("/judge/email", s.adminAuth, s.resendLoginCodes)
	api.Post("/judge/reassign", s.adminAuth, s.okAfterCmd(func() engine.Command { return &engine.ReassignJudges{} }))
	api.Post("/admin/groups/swap", s.adminAuth, s.okAfterCmd(func() engine.Command { return &engine.SwapGroups{} }))
	// These must not swallow other routes' static paths (PUT /judge/welcome is
	// registered later): see adminIDRoute.
	api.Put("/judge/:id", s.adminIDRoute(s.editJudge))
	api.Delete("/judge/:id", s.adminIDRoute(s.deleteJudge))
}

type newJudgeReq struct {
	Name   *string `json:"name"`
	Email  *string `json:"email"`
	Notes  string  `json:"notes"`
	Track  string  `json:"track"`
	NoSend bool    `json:"no_send"`
}

func (r *newJudgeReq) validate() error {
	if err := need("name", r.Name != nil); err != nil {
		return err
	}
	return need("email", r.Email != nil)
}

func (s *Server) newJudge(c *fiber.Ctx) error {
	var req newJudgeReq
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	if err := req.validate(); err != nil {
		return err
	}
	res, err := s.submit(c, &engine.CreateJudges{
		Judges: []engine.NewJudge{{Name: *req.Name, Email: *req.Email, Notes: req.Notes, Track: req.Track}},
		Codes:  newLoginCodes(1),
		// A duplicate email conflicts with current state (docs/behaviour.md#conventions): 409.
		DuplicateIsConflict: true,
		Mail:                !req.NoSend,
	})
	if err != nil {
		return err
	}
	created := res.([]engine.CreatedJudge)
	if !req.NoSend {
		s.mailQueued()
	}
	return c.JSON(fiber.Map{"ok": 1, "id": created[0].ID})
}

func (s *Server) listJudges(c *fiber.Ctx) error {
	var out []engine.JudgeView
	s.node.Read(func(st *engine.State) {
		out = make([]engine.JudgeView, 0, len(st.JudgeOrder))
		for _, j := range st.JudgesInOrder() {
			v := j.AdminView()
			v.Mail = st.MailViewOf(j.ID)
			out = append(out, v)
		}
	})
	return c.JSON(out)
}

func (s *Server) getJudgeSelf(c *fiber.Ctx) error {
	id := judgeID(c)
	var v engine.JudgeView
	found := false
	s.node.Read(func(st *engine.State) {
		if j, ok := st.Judges[id]; ok {
			v, found = j.View(), true
		}
	})
	if !found {
		return errUnauthorized
	}
	return c.JSON(v)
}

// okAfterCmd answers {"ok":1} after running a command that takes no input.
func (s *Server) okAfterCmd(mk func() engine.Command) fiber.Handler {
	return func(c *fiber.Ctx) error { return s.submitOK(c, mk()) }
}

// editJudgeReq is the body of PUT /api/judge/:id; every field is optional.
type editJudgeReq struct {
	Name  *string `json:"name"`
	Email *string `json:"email"`
	Notes *string `json:"notes"`
	Track *string `json:"track"`
}

// adminIDRoute serves an admin route whose last segment is :id, such as
// PUT /api/judge/:id, as a single handler. When the segment is not an id but the path is
// another route's static path (PUT /api/judge/welcome, DELETE /api/judge/list), the
// request is handed on to the routes registered after this one, and answered 405 when
// none takes it; a single handler is needed for that, because c.Next() only continues
// with the next matching route after the last handler of a route.
func (s *Server) adminIDRoute(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if _, err := engine.ParseID(c.Params("id")); err != nil && s.isStaticPath(c.Path()) {
			err := c.Next()
			var fe *fiber.Error
			if errors.As(err, &fe) && fe.Code == fiber.StatusNotFound {
				return fiber.ErrMethodNotAllowed
			}
			return err
		}
		if !s.adminFromRequest(c) {
			return s.adminAuth(c) // refuses exactly as the middleware does (401 or 429)
		}
		c.Locals(localAdmin, true)
		return h(c)
	}
}

// isStaticPath reports whether some route (any method) has exactly this parameterless
// path. Only requests with a malformed id get here, so the route list is not cached.
func (s *Server) isStaticPath(path string) bool {
	path = strings.TrimSuffix(path, "/")
	for _, r := range s.app.GetRoutes(true) {
		if !strings.Contains(r.Path, ":") && !strings.Contains(r.Path, "*") && strings.EqualFold(r.Path, path) {
			return true
		}
	}
	return false
}

func (s *Server) editJudge(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	var req editJudgeReq
	if err := bindJSON(c, &req, true); err != nil {
		return err
	}
	return s.submitOK(c, &engine.UpdateJudge{Judge: id, Name: req.Name, Email: req.Email, Notes: req.Notes, Track: req.Track})
}

func (s *Server) deleteJudge(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return s.submitOK(c, &engine.DeleteJudge{Judge: id})
}

// hideReq is the optional body of the single hide routes (absent hide means true).
type hideReq struct {
	Hide *bool `json:"hide"`
}

func (r *hideReq) validate() error { return nil }

func (r *hideReq) hide() bool { return r.Hide == nil || *r.Hide }

// bulkHideReq is the body of the bulk hide routes.
type bulkHideReq struct {
	Items *[]string `json:"items"`
	Hide  *bool     `json:"hide"`
}

func (r *bulkHideReq) validate() ([]engine.ID, error) {
	return bulkIDs(r.Items, "hide", r.Hide != nil)
}

// groupReq is the body of the single group move routes.
type groupReq struct {
	Group *int `json:"group"`
}

func (r *groupReq) validate() error { return need("group", r.Group != nil) }

// bulkGroupReq is the body of the bulk group move routes.
type bulkGroupReq struct {
	Items *[]string `json:"items"`
	Group *int      `json:"group"`
}

func (r *bulkGroupReq) validate() ([]engine.ID, error) {
	return bulkIDs(r.Items, "group", r.Group != nil)
}

// bulkIDs checks the two required fields of a bulk route's body ("items" first, then
// the field saying what to do with them) and parses the items.
func bulkIDs(items *[]string, field string, present bool) ([]engine.ID, error) {
	if err := need("items", items != nil); err != nil {
		return nil, err
	}
	if err := need(field, present); err != nil {
		return nil, err
	}
	return parseIDs(*items)
}

// submitPathID serves a single-item route such as PUT /api/judge/hide/:id: the id from
// the path, the body decoded into an R (an empty body is allowed when optionalBody) and
// validated, then the command mk builds from them. Bulk routes use submitItems.
func submitPathID[R any, P interface {
	*R
	validate() error
}](s *Server, c *fiber.Ctx, optionalBody bool, mk func(ids []engine.ID, req *R) engine.Command) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	req := new(R)
	if err := bindJSON(c, req, optionalBody); err != nil {
		return err
	}
	if err := P(req).validate(); err != nil {
		return err
	}
	return s.submitOK(c, mk([]engine.ID{id}, req))
}

// submitItems serves a bulk route such as POST /api/judge/hide: the body (required)
// decoded into an R, whose validate returns the ids of its "items", then the command mk
// builds from them.
func submitItems[R any, P interface {
	*R
	validate() ([]engine.ID, error)
}](s *Server, c *fiber.Ctx, mk func(ids []engine.ID, req *R) engine.Command) error {
	req := new(R)
	if err := bindJSON(c, req, false); err != nil {
		return err
	}
	ids, err := P(req).validate()
	if err != nil {
		return err
	}
	return s.submitOK(c, mk(ids, req))
}

func (s *Server) hideJudge(c *fiber.Ctx) error {
	return submitPathID(s, c, true, func(ids []engine.ID, req *hideReq) engine.Command {
		return &engine.HideJudges{Judges: ids, Hide: req.hide()}
	})
}

func (s *Server) hideJudges(c *fiber.Ctx) error {
	return submitItems(s, c, func(ids []engine.ID, req *bulkHideReq) engine.Command {
		return &engine.HideJudges{Judges: ids, Hide: *req.Hide}
	})
}

// bulkMailReq is the body of POST /api/judge/email.
type bulkMailReq struct {
	Items *[]string `json:"items"`
}

func (r *bulkMailReq) validate() ([]engine.ID, error) { return bulkIDs(r.Items, "items", true) }

// resendLoginCodes handles POST /api/judge/email: the judges' login-code emails are
// queued again (the organiser's resend, e.g. after an "unknown" or "failed" outcome).
func (s *Server) resendLoginCodes(c *fiber.Ctx) error {
	if err := submitItems(s, c, func(ids []engine.ID, _ *bulkMailReq) engine.Command {
		return &engine.QueueMail{Judges: ids}
	}); err != nil {
		return err
	}
	s.mailQueued()
	return nil
}

func (s *Server) moveJudgeGroup(c *fiber.Ctx) error {
	return submitPathID(s, c, false, func(ids []engine.ID, req *groupReq) engine.Command {
		return &engine.MoveJudgesGroup{Judges: ids, Group: *req.Group}
	})
}

func (s *Server) moveJudgesGroup(c *fiber.Ctx) error {
	return submitItems(s, c, func(ids []engine.ID, req *bulkGroupReq) engine.Command {
		return &engine.MoveJudgesGroup{Judges: ids, Group: *req.Group}
	})
}

// entityStats is the body of GET /api/judge/stats and GET /api/project/stats.
type entityStats struct {
	Num       int     `json:"num"`
	NumActive int     `json:"num_active"`
	AvgSeen   float64 `json:"avg_seen"`
}

func (st *entityStats) add(active bool, seen int) {
	st.Num++
	if active {
		st.NumActive++
		st.AvgSeen += float64(seen) // a sum until done
	}
}

func (st *entityStats) done() {
	if st.NumActive > 0 {
		st.AvgSeen /= float64(st.NumActive)
	}
}

func (s *Server) judgeStats(c *fiber.Ctx) error {
	var out entityStats
	s.node.Read(func(st *engine.State) {
		for _, j := range st.Judges {
			out.add(j.Active, j.Seen)
		}
	})
	out.done()
	return c.JSON(out)
}
