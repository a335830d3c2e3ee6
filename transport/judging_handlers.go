package transport

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

// routesJudgingEarly registers the judge's /judge/<word> routes. server.go calls it
// before routesJudges so that, for example, PUT /judge/welcome is not taken for
// PUT /judge/:id.
func (s *Server) routesJudgingEarly(r fiber.Router) {
	// Every judge write takes an Idempotency-Key (s.keyed: docs/behaviour.md#on-the-floor).
	r.Post("/judge/next", s.judgeAuth, s.keyed, s.judgeNext)
	r.Post("/judge/skip", s.judgeAuth, s.keyed, s.judgeSkip)
	r.Post("/judge/finish", s.judgeAuth, s.keyed, s.judgeFinish)
	r.Post("/judge/undo", s.judgeAuth, s.keyed, s.judgeUndo)
	r.Post("/judge/at", s.judgeAuth, s.keyed, s.judgeAt)
	r.Post("/judge/rank", s.judgeAuth, s.keyed, s.judgeRank)
	r.Put("/judge/star", s.judgeAuth, s.keyed, s.judgeStarBody)
	r.Put("/judge/star/:id", s.judgeAuth, s.keyed, s.judgeStar)
	r.Put("/judge/notes/:id", s.judgeAuth, s.keyed, s.judgeNotes)
	r.Put("/judge/feedback/:id", s.judgeAuth, s.keyed, s.judgeFeedback)
	r.Get("/judge/projects", s.judgeAuth, s.judgedProjects)
	r.Get("/judge/project/:id", s.judgeAuth, s.judgedProject)
	r.Get("/judge/welcome", s.judgeAuth, s.getWelcome)
	r.Put("/judge/welcome", s.judgeAuth, s.keyed, s.setWelcome)
	r.Post("/judge/welcome", s.judgeAuth, s.keyed, s.setWelcome)
}

// routesJudging registers the judge-facing project routes (docs/behaviour.md#judging-flow). They come after
// routesProjects so that GET /project/list and other /project/<word> routes match first;
// /project/count precedes /project/:id.
func (s *Server) routesJudging(r fiber.Router) {
	r.Get("/project/count", s.judgeAuth, s.projectCount)
	r.Get("/project/:id", s.judgeAuth, s.projectForJudge)
}

func (s *Server) judgeNext(c *fiber.Ctx) error {
	id := judgeID(c)
	var res engine.NextResult
	final := false
	// On a cluster node the local state may lag the leader's log (a judge that moved
	// here after a failover may have a finish this node has not applied yet), so the
	// answer always comes from the log; a single node answers a final one (the judge
	// can be given nothing) locally, unless the request has an Idempotency-Key (its
	// answer is kept with the command). It does not wait for the writer for that:
	// when the writer holds the state, the command answers the same (at the cost of a
	// journal record), and a judge loop's next is rarely final.
	if _, clustered := s.node.(ClusterNode); !clustered && keyOf(c) == nil {
		s.node.TryRead(func(st *engine.State) { res, final = st.PeekNext(id) })
	}
	if !final {
		out, err := s.submit(c, &engine.JudgeNext{Judge: id})
		if err != nil {
			return err
		}
		res = out.(engine.NextResult)
	}
	return sendJSON(c, res.AppendJSON(make([]byte, 0, 120)))
}

type skipReq struct {
	Reason *string `json:"reason"`
}

func (r *skipReq) validate() error {
	if err := need("reason", r.Reason != nil); err != nil {
		return err
	}
	if !engine.ValidSkipReason(*r.Reason) {
		return badRequest("reason must be one of busy, absent, cannot-demo, too-complex, offensive, conflict")
	}
	return nil
}

func (s *Server) judgeSkip(c *fiber.Ctx) error {
	var req skipReq
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	if err := req.validate(); err != nil {
		return err
	}
	return s.submitOK(c, &engine.JudgeSkip{Judge: judgeID(c), Reason: *req.Reason})
}

type finishReq struct {
	Notes    string  `json:"notes"`
	Starred  bool    `json:"starred"`
	Project  *string `json:"project"`  // docs/behaviour.md#on-the-floor
	Feedback string  `json:"feedback"` // docs/behaviour.md#after-judging
}

// decodePlain decodes the finish bodies judges send, {"notes":"...","starred":true},
// without reflection, and reports false for anything else, which goes to encoding/json:
// an object of the keys "notes" and "starred" (exactly so spelt, in any order, repeated
// or not), notes of printable ASCII without escapes, starred true or false, JSON
// whitespace anywhere between tokens. For such a body encoding/json gives the same
// result (FuzzFinishDecodePlain checks it).
func (r *finishReq) decodePlain(b []byte) bool {
	i := 0
	ws := func() {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	lit := func(s string) bool {
		if len(b)-i >= len(s) && string(b[i:i+len(s)]) == s {
			i += len(s)
			return true
		}
		return false
	}
	var out finishReq
	ws()
	if !lit("{") {
		return false
	}
	ws()
	if lit("}") {
		ws()
		return i == len(b) // the zero request
	}
	for {
		switch {
		case lit(`"notes"`):
			ws()
			if !lit(":") {
				return false
			}
			ws()
			if !lit(`"`) {
				return false
			}
			start := i
			for i < len(b) && b[i] != '"' {
				if b[i] < 0x20 || b[i] > 0x7e || b[i] == '\\' {
					return false
				}
				i++
			}
			if i == len(b) {
				return false
			}
			out.Notes = string(b[start:i])
			i++
		case lit(`"starred"`):
			ws()
			if !lit(":") {
				return false
			}
			ws()
			switch {
			case lit("true"):
				out.Starred = true
			case lit("false"):
				out.Starred = false
			default:
				return false
			}
		default:
			return false
		}
		ws()
		if lit("}") {
			ws()
			if i != len(b) {
				return false
			}
			*r = out
			return true
		}
		if !lit(",") {
			return false
		}
		ws()
	}
}

func (s *Server) judgeFinish(c *fiber.Ctx) error {
	var req finishReq
	body, err := jsonBody(c)
	if err != nil {
		return err
	}
	if !req.decodePlain(body) {
		if err := decodeJSON(body, &req, true); err != nil {
			return err
		}
	}
	cmd := &engine.JudgeFinish{Judge: judgeID(c), Notes: req.Notes, Starred: req.Starred, Feedback: req.Feedback}
	if req.Project != nil {
		if cmd.Project, err = engine.ParseID(*req.Project); err != nil {
			return badRequest("project must be a 24-character hex id")
		}
	}
	return s.submitOK(c, cmd)
}

// judgeUndo takes back the judge's last finish (docs/behaviour.md#on-the-floor).
func (s *Server) judgeUndo(c *fiber.Ctx) error {
	res, err := s.submit(c, &engine.JudgeUndo{Judge: judgeID(c)})
	if err != nil {
		return err
	}
	return sendJSON(c, engine.ReplyBody(res))
}

type atReq struct {
	Project *string `json:"project"`
}

// judgeAt tells the server which project the judge stands at, a visit begun offline
// (docs/behaviour.md#offered-projects-only).
func (s *Server) judgeAt(c *fiber.Ctx) error {
	var req atReq
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	if err := need("project", req.Project != nil); err != nil {
		return err
	}
	pid, err := engine.ParseID(*req.Project)
	if err != nil {
		return badRequest("project must be a 24-character hex id")
	}
	return s.submitOK(c, &engine.JudgeAt{Judge: judgeID(c), Project: pid})
}

type rankReq struct {
	Ranking *[]string `json:"ranking"`
}

func (r *rankReq) validate() ([]engine.ID, error) {
	if err := need("ranking", r.Ranking != nil); err != nil {
		return nil, err
	}
	return parseIDs(*r.Ranking)
}

func (s *Server) judgeRank(c *fiber.Ctx) error {
	var req rankReq
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	ids, err := req.validate()
	if err != nil {
		return err
	}
	return s.submitOK(c, &engine.JudgeRank{Judge: judgeID(c), Ranking: ids})
}

type starReq struct {
	Starred *bool `json:"starred"`
}

func (s *Server) judgeStar(c *fiber.Ctx) error {
	pid, err := paramID(c, "id")
	if err != nil {
		return err
	}
	var req starReq
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	if err := need("starred", req.Starred != nil); err != nil {
		return err
	}
	return s.submitOK(c, &engine.JudgeStar{Judge: judgeID(c), Project: pid, Starred: *req.Starred})
}

// starBodyReq is Jury's form of the star route: PUT /api/judge/star {project, starred}.
type starBodyReq struct {
	Project *string `json:"project"`
	Starred *bool   `json:"starred"`
}

func (s *Server) judgeStarBody(c *fiber.Ctx) error {
	var req starBodyReq
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	if err := need("project", req.Project != nil); err != nil {
		return err
	}
	if err := need("starred", req.Starred != nil); err != nil {
		return err
	}
	pid, err := engine.ParseID(*req.Project)
	if err != nil {
		return badRequest("project must be a 24-character hex id")
	}
	return s.submitOK(c, &engine.JudgeStar{Judge: judgeID(c), Project: pid, Starred: *req.Starred})
}

type notesReq struct {
	Notes string `json:"notes"`
}

func (s *Server) judgeNotes(c *fiber.Ctx) error {
	pid, err := paramID(c, "id")
	if err != nil {
		return err
	}
	var req notesReq
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	return s.submitOK(c, &engine.JudgeNotes{Judge: judgeID(c), Project: pid, Notes: req.Notes})
}

type feedbackReq struct {
	Feedback *string `json:"feedback"`
}

// judgeFeedback handles PUT /api/judge/feedback/:id (docs/behaviour.md#after-judging).
func (s *Server) judgeFeedback(c *fiber.Ctx) error {
	pid, err := paramID(c, "id")
	if err != nil {
		return err
	}
	var req feedbackReq
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	if err := need("feedback", req.Feedback != nil); err != nil {
		return err
	}
	return s.submitOK(c, &engine.JudgeFeedback{Judge: judgeID(c), Project: pid, Feedback: *req.Feedback})
}

func (s *Server) judgedProjects(c *fiber.Ctx) error {
	id := judgeID(c)
	var out []engine.JudgedProject
	s.node.Read(func(st *engine.State) { out = st.JudgedProjects(id) })
	return c.JSON(out)
}

func (s *Server) judgedProject(c *fiber.Ctx) error {
	pid, err := paramID(c, "id")
	if err != nil {
		return err
	}
	id := judgeID(c)
	var v engine.JudgedProject
	found := false
	s.node.Read(func(st *engine.State) { v, found = st.JudgedProject(id, pid) })
	if !found {
		return notFound("project not among the judge's judged projects")
	}
	return c.JSON(v)
}

func (s *Server) getWelcome(c *fiber.Ctx) error {
	id := judgeID(c)
	read := false
	s.node.Read(func(st *engine.State) {
		if j, ok := st.Judges[id]; ok {
			read = j.ReadWelcome
		}
	})
	return okFlag(c, read)
}

func (s *Server) setWelcome(c *fiber.Ctx) error {
	return s.submitOK(c, &engine.JudgeWelcome{Judge: judgeID(c)})
}

func (s *Server) projectCount(c *fiber.Ctx) error {
	id := judgeID(c)
	n := 0
	s.node.Read(func(st *engine.State) { n = st.ProjectCount(id) })
	return sendJSON(c, append(strconv.AppendInt(append(make([]byte, 0, 24), `{"count":`...), int64(n), 10), '}'))
}

// crowdBT recomputes stale Crowd-BT values outside the engine's lock, one request at a
// time (the others wait for its result).
var crowdBT engine.CrowdBT

func (s *Server) projectForJudge(c *fiber.Ctx) error {
	pid, err := paramID(c, "id")
	if err != nil {
		return err
	}
	crowdBT.Refresh(s.node)
	var v engine.ProjectJudgeView
	found := false
	s.node.Read(func(st *engine.State) {
		if p, ok := st.Projects[pid]; ok {
			v, found = st.JudgeView(p), true
		}
	})
	if !found {
		return notFound("project not found")
	}
	return c.JSON(v)
}
