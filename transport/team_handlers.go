package transport

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	qrcode "github.com/skip2/go-qrcode"

	"podium/engine"
)

// Team links and pages (docs/behaviour.md#after-judging): every project has a secret
// link /team/<token>; the organiser exports the links, prints them as QR codes per
// table, mails them to the teams' contact emails, and replaces one that leaked.

// teamTokenBytes is the entropy of a team token: 18 random bytes (144 bits), 24
// URL-safe characters.
const teamTokenBytes = 18

// routesTeams registers the team-link routes.
func (s *Server) routesTeams(api fiber.Router) {
	api.Get("/admin/team-links", s.adminAuth, s.listTeamLinks)
	api.Get("/admin/team-links/qr/:id", s.adminAuth, s.teamLinkQR)
	api.Post("/admin/team-links/rotate/:id", s.adminAuth, s.rotateTeamLink)
	api.Post("/admin/team-links/send", s.adminAuth, s.sendTeamLinks)
	api.Get("/admin/export/team-links", s.adminAuth, s.exportTeamLinks)
	api.Get("/team/:token", s.teamPage)
}

// teamLink is the link a team token opens: <PUBLIC_URL>/team/<token>, or the request's
// own scheme and host without PUBLIC_URL.
func (s *Server) teamLink(c *fiber.Ctx, token string) string {
	return s.teamLinkBase(c) + "/team/" + token
}

// teamLinkBase is PUBLIC_URL, or the request's own scheme and host without it.
func (s *Server) teamLinkBase(c *fiber.Ctx) string {
	base := strings.TrimRight(s.cfg.PublicURL, "/")
	if base == "" {
		base = c.BaseURL()
	}
	return base
}

// sendTeamLinks handles POST /api/admin/team-links/send: it queues the team-link mail
// of every active project with contact emails (docs/behaviour.md#team-links-by-mail);
// the outbox sends them like login-code mails (claimed and recorded through the log,
// skipped without SMTP). It answers how many were queued and how many projects have no
// contact email (a mail being sent right now is not queued again).
func (s *Server) sendTeamLinks(c *fiber.Ctx) error {
	if err := s.ensureTeamLinks(c); err != nil {
		return err
	}
	res, err := s.submit(c, &engine.QueueTeamMails{Base: s.teamLinkBase(c)})
	if err != nil {
		return err
	}
	q := res.(engine.TeamMailsQueued)
	if q.Queued > 0 {
		s.mailQueued()
	}
	return c.JSON(fiber.Map{"ok": 1, "queued": q.Queued, "without_email": q.WithoutEmail, "sending": q.Sending})
}

// ensureTeamLinks gives every project without a team link one (a journaled command;
// nothing is written when all have one).
func (s *Server) ensureTeamLinks(c *fiber.Ctx) error {
	var missing []engine.ID
	s.node.Read(func(st *engine.State) { missing = st.MissingTeamLinks() })
	if len(missing) == 0 {
		return nil
	}
	cmd := &engine.IssueTeamLinks{Links: make([]engine.TeamLink, len(missing))}
	for i, id := range missing {
		cmd.Links[i] = engine.TeamLink{Project: id, Token: newToken(teamTokenBytes)}
	}
	_, err := s.submit(c, cmd)
	return err
}

// teamLinkView is one row of GET /api/admin/team-links.
type teamLinkView struct {
	ID            engine.ID `json:"id"`
	Name          string    `json:"name"`
	Location      int       `json:"location"`
	Active        bool      `json:"active"`
	ContactEmails []string  `json:"contact_emails"`
	Link          string    `json:"link"`
	// Mail is the team-link email's state (absent when none was queued).
	Mail *engine.MailView `json:"mail,omitempty"`
}

func (s *Server) teamLinkViews(c *fiber.Ctx) ([]teamLinkView, error) {
	if err := s.ensureTeamLinks(c); err != nil {
		return nil, err
	}
	var rows []engine.TeamLinkRow
	var mails []*engine.MailView
	s.node.Read(func(st *engine.State) {
		rows = st.TeamLinks()
		mails = make([]*engine.MailView, len(rows))
		for i, r := range rows {
			mails[i] = st.MailViewOf(r.ID)
		}
	})
	out := make([]teamLinkView, 0, len(rows))
	for i, r := range rows {
		out = append(out, teamLinkView{ID: r.ID, Name: r.Name, Location: r.Location, Active: r.Active,
			ContactEmails: r.ContactEmails, Link: s.teamLink(c, r.Token), Mail: mails[i]})
	}
	return out, nil
}

// listTeamLinks handles GET /api/admin/team-links (links missing are made first).
func (s *Server) listTeamLinks(c *fiber.Ctx) error {
	out, err := s.teamLinkViews(c)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(out)
}

// exportTeamLinks handles GET /api/admin/export/team-links.
func (s *Server) exportTeamLinks(c *fiber.Ctx) error {
	views, err := s.teamLinkViews(c)
	if err != nil {
		return err
	}
	rows := make([][]string, 0, len(views))
	for _, v := range views {
		rows = append(rows, []string{safeCell(v.Name), exportInt(v.Location), safeCell(strings.Join(v.ContactEmails, ", ")), v.Link})
	}
	return sendCSV(c, "team-links.csv", encodeCSV([]string{"name", "location", "contact_emails", "link"}, rows))
}

// teamLinkQR handles GET /api/admin/team-links/qr/:id: the project's team link as a
// QR code image, for the printed sheet.
func (s *Server) teamLinkQR(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	if err := s.ensureTeamLinks(c); err != nil {
		return err
	}
	token, found := "", false
	s.node.Read(func(st *engine.State) {
		if p, ok := st.Projects[id]; ok {
			token, found = p.TeamToken, true
		}
	})
	if !found {
		return notFound("project not found")
	}
	png, err := qrcode.Encode(s.teamLink(c, token), qrcode.Medium, 384)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "image/png")
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Send(png)
}

// rotateTeamLink handles POST /api/admin/team-links/rotate/:id.
func (s *Server) rotateTeamLink(c *fiber.Ctx) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	token := newToken(teamTokenBytes)
	if _, err := s.submit(c, &engine.RotateTeamLink{Project: id, Token: token}); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": 1, "link": s.teamLink(c, token)})
}

// teamPage handles GET /api/team/:token: no login; an unknown token is a 404 that says
// nothing more. Like failed login codes, unknown tokens are counted per address
// (max_req_per_min a minute; block_reqs refuses every lookup): guessing is what a limit
// must stop, while a hall of phones behind one address reloading their own valid
// links at the moment of the results must not be refused.
func (s *Server) teamPage(c *fiber.Ctx) error {
	var max int
	var blocked bool
	s.node.Read(func(st *engine.State) { max, blocked = st.Options.MaxReqPerMin, st.Options.BlockReqs })
	key := "team_page:" + ipKey(s.clientIP(c))
	if blocked {
		s.obs.Throttled("team_page")
		return &httpError{status: fiber.StatusTooManyRequests, msg: "requests are blocked by the organisers", retryAfter: 60}
	}
	if n, retry := s.teamLimit.peek(key); n >= max {
		s.obs.Throttled("team_page")
		return tooManyLogins("too many unknown team links from this address", retry)
	}
	token := c.Params("token")
	var page engine.TeamPage
	found := false
	now := time.Now().UnixMilli()
	s.node.Read(func(st *engine.State) { page, found = st.TeamPageOf(token, now) })
	if !found {
		s.teamLimit.hit(key)
		return notFound("this team link is not valid: ask the organisers for a new one")
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(page)
}

// emailList is a list of addresses given as a JSON array or as one string separated
// by commas, semicolons or spaces (as forms and spreadsheets carry them).
type emailList []string

// UnmarshalJSON accepts an array of strings or one string.
func (l *emailList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*l = splitEmails(one)
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return badRequest("contact_emails must be a string or an array of strings")
	}
	out := emailList{}
	for _, m := range many {
		out = append(out, splitEmails(m)...)
	}
	*l = out
	return nil
}

// splitEmails splits a cell of addresses on commas, semicolons and white space,
// dropping empties.
func splitEmails(v string) []string {
	out := []string{}
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		out = append(out, f)
	}
	return out
}
