package transport

import (
	"sort"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

func (s *Server) routesProjects(api fiber.Router) {
	api.Post("/project/new", s.adminAuth, s.newProject)
	api.Get("/project/list", s.adminAuth, s.listProjects)
	api.Get("/project/list/public", s.listPublicProjects)
	api.Get("/challenges", s.listChallenges)
	api.Get("/group-info", s.groupInfo)
}

type newProjectReq struct {
	Name          *string `json:"name"`
	Description   string  `json:"description"`
	URL           string  `json:"url"`
	TryLink       string  `json:"try_link"`
	VideoLink     string  `json:"video_link"`
	ChallengeList string  `json:"challenge_list"`
}

func (s *Server) newProject(c *fiber.Ctx) error {
	var req newProjectReq
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	if err := need("name", req.Name != nil); err != nil {
		return err
	}
	res, err := s.submit(c, &engine.CreateProjects{Projects: []engine.NewProject{{
		Name: *req.Name, Description: req.Description, URL: req.URL, TryLink: req.TryLink,
		VideoLink: req.VideoLink, ChallengeList: engine.SplitChallenges(req.ChallengeList),
	}}})
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": 1, "id": res.(engine.CreatedProjects).IDs[0]})
}

func (s *Server) listProjects(c *fiber.Ctx) error {
	var out []engine.ProjectAdminView
	s.node.Read(func(st *engine.State) {
		ps := st.ProjectsByLocation()
		out = make([]engine.ProjectAdminView, 0, len(ps))
		for _, p := range ps {
			out = append(out, st.AdminView(p))
		}
	})
	return c.JSON(out)
}

func (s *Server) listPublicProjects(c *fiber.Ctx) error {
	var out []engine.PublicProject
	s.node.Read(func(st *engine.State) {
		ps := st.ProjectsByLocation()
		out = make([]engine.PublicProject, 0, len(ps))
		for _, p := range ps {
			if p.Active {
				out = append(out, p.Public())
			}
		}
	})
	return c.JSON(out)
}

func (s *Server) listChallenges(c *fiber.Ctx) error {
	set := map[string]bool{}
	s.node.Read(func(st *engine.State) {
		for _, p := range st.Projects {
			if p.Active {
				for _, ch := range p.ChallengeList {
					set[ch] = true
				}
			}
		}
	})
	out := make([]string, 0, len(set))
	for ch := range set {
		out = append(out, ch)
	}
	sort.Strings(out)
	return c.JSON(out)
}

func (s *Server) groupInfo(c *fiber.Ctx) error {
	var gi engine.GroupInfo
	s.node.Read(func(st *engine.State) { gi = st.GroupInfoView() })
	return c.JSON(gi)
}
