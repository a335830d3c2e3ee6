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
	api.Get("/project/stats", s.adminAuth, s.projectStats)
	api.Put("/project/hide/:id", s.adminAuth, s.hideProject)
	api.Post("/project/hide", s.adminAuth, s.hideProjects)
	api.Put("/project/move/group/:id", s.adminAuth, s.moveProjectGroup)
	api.Post("/project/move/group", s.adminAuth, s.moveProjectsGroup)
	api.Put("/project/move/:id", s.adminIDRoute(s.moveProject))
	api.Put("/project/prioritize/:id", s.adminAuth, s.prioritizeProject)
	api.Post("/project/prioritize", s.adminAuth, s.prioritizeProjects)
	api.Post("/project/reassign", s.adminAuth, s.okAfterCmd(func() engine.Command { return &engine.ReassignProjects{} }))
	api.Post("/project/balance-groups", s.adminAuth, s.okAfterCmd(func() engine.Command { return &engine.BalanceGroups{} }))
	api.Put("/project/:id", s.adminIDRoute(s.editProject))
	api.Delete("/project/:id", s.adminIDRoute(s.deleteProject))
	api.Get("/challenges", s.listChallenges)
	api.Get("/group-info", s.groupInfo)
}

type newProjectReq struct {
	Name          *string   `json:"name"`
	Description   string    `json:"description"`
	URL           string    `json:"url"`
	TryLink       string    `json:"try_link"`
	VideoLink     string    `json:"video_link"`
	ChallengeList string    `json:"challenge_list"`
	ContactEmails emailList `json:"contact_emails"`
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
		ContactEmails: req.ContactEmails,
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

// editProjectReq is the body of PUT /api/project/:id; every field is optional and
// challenge_list is a comma-separated string as in POST /api/project/new.
type editProjectReq struct {
	Name          *string    `json:"name"`
	Description   *string    `json:"description"`
	URL           *string    `json:"url"`
	TryLink       *string    `json:"try_link"`
	VideoLink     *string    `json:"video_link"`
	ChallengeList *string    `json:"challenge_list"`
	ContactEmails *emailList `json:"contact_emails"`
}

func (s *Server) editProject(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	var req editProjectReq
	if err := bindJSON(c, &req, true); err != nil {
		return err
	}
	cmd := &engine.UpdateProject{
		Project: id, Name: req.Name, Description: req.Description, URL: req.URL,
		TryLink: req.TryLink, VideoLink: req.VideoLink,
	}
	if req.ChallengeList != nil {
		list := engine.SplitChallenges(*req.ChallengeList)
		cmd.ChallengeList = &list
	}
	if req.ContactEmails != nil {
		list := []string(*req.ContactEmails)
		cmd.ContactEmails = &list
	}
	return s.submitOK(c, cmd)
}

func (s *Server) deleteProject(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	return s.submitOK(c, &engine.DeleteProject{Project: id})
}

func (s *Server) hideProject(c *fiber.Ctx) error {
	return submitPathID(s, c, true, func(ids []engine.ID, req *hideReq) engine.Command {
		return &engine.HideProjects{Projects: ids, Hide: req.hide()}
	})
}

func (s *Server) hideProjects(c *fiber.Ctx) error {
	return submitItems(s, c, func(ids []engine.ID, req *bulkHideReq) engine.Command {
		return &engine.HideProjects{Projects: ids, Hide: *req.Hide}
	})
}

func (s *Server) moveProjectGroup(c *fiber.Ctx) error {
	return submitPathID(s, c, false, func(ids []engine.ID, req *groupReq) engine.Command {
		return &engine.MoveProjectsGroup{Projects: ids, Group: *req.Group}
	})
}

func (s *Server) moveProjectsGroup(c *fiber.Ctx) error {
	return submitItems(s, c, func(ids []engine.ID, req *bulkGroupReq) engine.Command {
		return &engine.MoveProjectsGroup{Projects: ids, Group: *req.Group}
	})
}

// moveProjectReq is the body of PUT /api/project/move/:id.
type moveProjectReq struct {
	Location *int `json:"location"`
}

func (r *moveProjectReq) validate() error { return need("location", r.Location != nil) }

func (s *Server) moveProject(c *fiber.Ctx) error {
	return submitPathID(s, c, false, func(ids []engine.ID, req *moveProjectReq) engine.Command {
		return &engine.MoveProject{Project: ids[0], Location: *req.Location}
	})
}

// prioritizeReq is the body of PUT /api/project/prioritize/:id.
type prioritizeReq struct {
	Prioritize *bool `json:"prioritize"`
}

func (r *prioritizeReq) validate() error { return need("prioritize", r.Prioritize != nil) }

// bulkPrioritizeReq is the body of POST /api/project/prioritize.
type bulkPrioritizeReq struct {
	Items      *[]string `json:"items"`
	Prioritize *bool     `json:"prioritize"`
}

func (r *bulkPrioritizeReq) validate() ([]engine.ID, error) {
	return bulkIDs(r.Items, "prioritize", r.Prioritize != nil)
}

func (s *Server) prioritizeProject(c *fiber.Ctx) error {
	return submitPathID(s, c, false, func(ids []engine.ID, req *prioritizeReq) engine.Command {
		return &engine.PrioritizeProjects{Projects: ids, Prioritize: *req.Prioritize}
	})
}

func (s *Server) prioritizeProjects(c *fiber.Ctx) error {
	return submitItems(s, c, func(ids []engine.ID, req *bulkPrioritizeReq) engine.Command {
		return &engine.PrioritizeProjects{Projects: ids, Prioritize: *req.Prioritize}
	})
}

func (s *Server) projectStats(c *fiber.Ctx) error {
	var out entityStats
	s.node.Read(func(st *engine.State) {
		for _, p := range st.Projects {
			out.add(p.Active, p.Seen)
		}
	})
	out.done()
	return c.JSON(out)
}
