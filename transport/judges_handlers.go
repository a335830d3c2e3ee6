package transport

import (
	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

func (s *Server) routesJudges(api fiber.Router) {
	api.Get("/judge", s.judgeAuth, s.getJudgeSelf)
	api.Post("/judge/new", s.adminAuth, s.newJudge)
	api.Get("/judge/list", s.adminAuth, s.listJudges)
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
	})
	if err != nil {
		return err
	}
	created := res.([]engine.CreatedJudge)
	if !req.NoSend {
		s.sendLoginCodes(created)
	}
	return c.JSON(fiber.Map{"ok": 1, "id": created[0].ID})
}

func (s *Server) listJudges(c *fiber.Ctx) error {
	var out []engine.JudgeView
	s.node.Read(func(st *engine.State) {
		out = make([]engine.JudgeView, 0, len(st.JudgeOrder))
		for _, j := range st.JudgesInOrder() {
			out = append(out, j.View())
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
