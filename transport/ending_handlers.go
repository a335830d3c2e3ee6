package transport

import (
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

// The event's ending (docs/behaviour.md#after-judging): prizes, the proposed and
// published winners, the judges' feedback for the teams and its review.

// routesEnding registers the ending's routes. PUT /judge/feedback/:id is registered
// with the judge's other /judge/<word> routes (routesJudgingEarly).
func (s *Server) routesEnding(api fiber.Router) {
	api.Get("/admin/prizes", s.adminAuth, s.getPrizes)
	api.Put("/admin/prizes", s.adminAuth, s.setPrizes)
	api.Get("/admin/winners", s.adminAuth, s.getWinners)
	api.Post("/admin/winners/publish", s.adminAuth, s.publishWinners)
	api.Delete("/admin/winners/publish", s.adminAuth, s.takeBackWinners)
	api.Get("/admin/feedback", s.adminAuth, s.listFeedback)
	api.Delete("/admin/feedback/:judge/:project", s.adminAuth, s.removeFeedback)
	api.Get("/admin/export/feedback", s.adminAuth, s.exportFeedback)
	api.Get("/winners", s.publicWinners)
	api.Get("/admin/floor-https", s.adminAuth, s.floorHTTPS)
}

func (s *Server) getPrizes(c *fiber.Ctx) error {
	var out []engine.Prize
	s.node.Read(func(st *engine.State) { out = st.PrizesView() })
	return c.JSON(out)
}

// prizeReq is one prize of PUT /api/admin/prizes.
type prizeReq struct {
	ID     *string `json:"id"`
	Name   *string `json:"name"`
	Track  string  `json:"track"`
	Places *int    `json:"places"`
}

func (s *Server) setPrizes(c *fiber.Ctx) error {
	var req []prizeReq
	body, err := jsonBody(c)
	if err != nil {
		return err
	}
	if err := decodeJSON(body, &req, false); err != nil {
		return err
	}
	if req == nil {
		return badRequest("the body must be a JSON array of prizes (an empty array removes them all)")
	}
	cmd := &engine.SetPrizes{Prizes: make([]engine.PrizeInput, 0, len(req))}
	for i, p := range req {
		if p.Name == nil {
			return badRequest("prize %d: name is required", i+1)
		}
		if p.Places == nil {
			return badRequest("prize %d (%s): places is required", i+1, *p.Name)
		}
		in := engine.PrizeInput{Name: *p.Name, Track: p.Track, Places: *p.Places}
		if p.ID != nil && *p.ID != "" {
			if in.ID, err = engine.ParseID(*p.ID); err != nil {
				return badRequest("prize %d (%s): id must be a 24-character hex id", i+1, *p.Name)
			}
		}
		cmd.Prizes = append(cmd.Prizes, in)
	}
	return s.submitOK(c, cmd)
}

func (s *Server) getWinners(c *fiber.Ctx) error {
	var out engine.WinnersView
	s.node.Read(func(st *engine.State) { out = st.Winners() })
	return c.JSON(out)
}

// publishReq is POST /api/admin/winners/publish.
type publishReq struct {
	Prizes *[]struct {
		Prize   string   `json:"prize"`
		Winners []string `json:"winners"`
	} `json:"prizes"`
	Feedback bool `json:"feedback"`
}

func (s *Server) publishWinners(c *fiber.Ctx) error {
	var req publishReq
	if err := bindJSON(c, &req, false); err != nil {
		return err
	}
	if err := need("prizes", req.Prizes != nil); err != nil {
		return err
	}
	cmd := &engine.PublishWinners{Feedback: req.Feedback, Lists: make([]engine.PrizeList, 0, len(*req.Prizes))}
	for i, p := range *req.Prizes {
		pid, err := engine.ParseID(p.Prize)
		if err != nil {
			return badRequest("prizes[%d]: prize must be a 24-character hex id", i)
		}
		l := engine.PrizeList{Prize: pid, Winners: make([]engine.ID, 0, len(p.Winners))}
		for _, w := range p.Winners {
			id, err := engine.ParseID(w)
			if err != nil {
				return badRequest("prizes[%d]: winner %q is not a 24-character hex id", i, w)
			}
			l.Winners = append(l.Winners, id)
		}
		cmd.Lists = append(cmd.Lists, l)
	}
	return s.submitOK(c, cmd)
}

func (s *Server) takeBackWinners(c *fiber.Ctx) error {
	return s.submitOK(c, &engine.TakeBackWinners{})
}

func (s *Server) listFeedback(c *fiber.Ctx) error {
	var out []engine.FeedbackItem
	s.node.Read(func(st *engine.State) { out = st.FeedbackItems() })
	return c.JSON(out)
}

func (s *Server) removeFeedback(c *fiber.Ctx) error {
	jid, pid, err := judgeProjectParams(c)
	if err != nil {
		return err
	}
	return s.submitOK(c, &engine.RemoveFeedback{Judge: jid, Project: pid})
}

// exportFeedback handles GET /api/admin/export/feedback: one row per project with
// feedback, for an organiser's own mail merge.
func (s *Server) exportFeedback(c *fiber.Ctx) error {
	type row struct {
		name     string
		location int
		emails   []string
		items    []string
	}
	var rows []*row
	s.node.Read(func(st *engine.State) {
		byProject := map[engine.ID]*row{}
		for _, it := range st.FeedbackItems() {
			r, ok := byProject[it.ProjectID]
			if !ok {
				r = &row{name: it.ProjectName, location: it.Location, emails: st.Projects[it.ProjectID].ContactEmails}
				byProject[it.ProjectID] = r
				rows = append(rows, r)
			}
			r.items = append(r.items, it.Feedback)
		}
	})
	most := 0
	for _, r := range rows {
		most = max(most, len(r.items))
	}
	header := []string{"name", "location", "contact_emails"}
	for i := range most {
		header = append(header, "feedback_"+exportInt(i+1))
	}
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		cells := []string{safeCell(r.name), exportInt(r.location), safeCell(strings.Join(r.emails, ", "))}
		for i := range most {
			v := ""
			if i < len(r.items) {
				v = safeCell(r.items[i])
			}
			cells = append(cells, v)
		}
		out = append(out, cells)
	}
	return sendCSV(c, "feedback.csv", encodeCSV(header, out))
}

// publicWinners handles GET /api/winners: the published winners as the expo, the
// kiosk and team pages show them (no login; nothing before publishing).
func (s *Server) publicWinners(c *fiber.Ctx) error {
	b, err := s.winnerBodies.get(0)
	if err != nil {
		return err
	}
	return b.send(c, publicListCacheControl)
}

// winnersCache holds the encoded public winners in their two shapes, rebuilt when
// State.WinnersChangedAt moves: 0 is GET /api/winners, 1 is GET /v1/public/winners.
type winnersCache struct {
	node  Node
	build sync.Mutex
	cur   [2]atomic.Pointer[publicBody]
}

func (wc *winnersCache) get(k int) (*contentBody, error) {
	var version uint64
	wc.node.Read(func(st *engine.State) { version = st.WinnersChangedAt() })
	if cur := wc.cur[k].Load(); cur != nil && cur.version == version && time.Since(cur.built) < publicListMaxAge {
		return cur.contentBody, nil
	}
	wc.build.Lock()
	defer wc.build.Unlock()
	var data any
	wc.node.Read(func(st *engine.State) {
		version = st.WinnersChangedAt()
		if k == 0 {
			data = st.PublicWinners()
		} else {
			data = struct {
				Data []engine.WinnerRecord `json:"data"`
			}{st.WinnerRecords()}
		}
	})
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	cb, err := newContentBody(raw, "winners")
	if err != nil {
		return nil, err
	}
	wc.cur[k].Store(&publicBody{contentBody: cb, version: version, built: time.Now()})
	return cb, nil
}
