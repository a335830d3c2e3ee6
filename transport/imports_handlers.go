package transport

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

// routesImportExport registers CSV and submission imports, exports, QR and email (docs/behaviour.md#admin-operations, #email).
func (s *Server) routesImportExport(r fiber.Router) {
	r.Post("/judge/csv", s.adminAuth, s.importJudges)
	r.Post("/project/csv", s.adminAuth, s.importProjects)
	r.Post("/project/submissions", s.adminAuth, s.importSubmissions)
	r.Post("/project/devpost", s.adminAuth, s.importSubmissions)

	r.Get("/admin/export/judges", s.adminAuth, s.exportJudges)
	r.Get("/admin/export/projects", s.adminAuth, s.exportProjects)
	r.Get("/admin/export/rankings", s.adminAuth, s.exportRankings)
	r.Get("/admin/export/challenges", s.adminAuth, s.exportChallenges)

	s.routesQR(r)
}

// importJudges handles POST /api/judge/csv.
func (s *Server) importJudges(c *fiber.Ctx) error {
	up, err := readUpload(c)
	if err != nil {
		return err
	}
	data, hasHeader, noSend := up.csv, up.hasHeader(), up.bool("noSend")
	var tracks []string
	var emails map[string]bool
	s.node.Read(func(st *engine.State) {
		tracks = append([]string{}, st.Options.Tracks...)
		emails = make(map[string]bool, len(st.Judges))
		for _, j := range st.Judges {
			emails[strings.ToLower(j.Email)] = true
		}
	})
	imp, err := parseJudgesCSV(data, hasHeader, tracks, emails)
	if err != nil {
		return err
	}
	cmd := &engine.CreateJudges{Judges: imp.judges, Codes: newLoginCodes(len(imp.judges)), Mail: !noSend}
	if consecutiveRows(imp.rows) {
		cmd.RowOffset = imp.rows[0]
	}
	res, err := s.submit(c, cmd)
	if err != nil {
		return err
	}
	created := res.([]engine.CreatedJudge)
	if !noSend {
		s.mailQueued()
	}
	return c.JSON(fiber.Map{"ok": 1, "added": len(created)})
}

// consecutiveRows reports whether rows are consecutive numbers (so the engine's RowOffset
// numbers its errors right).
func consecutiveRows(rows []int) bool {
	for i := 1; i < len(rows); i++ {
		if rows[i] != rows[i-1]+1 {
			return false
		}
	}
	return len(rows) > 0
}

// importProjects handles POST /api/project/csv.
func (s *Server) importProjects(c *fiber.Ctx) error {
	up, err := readUpload(c)
	if err != nil {
		return err
	}
	imp, err := parseProjectsCSV(up.csv, up.hasHeader())
	if err != nil {
		return err
	}
	return s.createImported(c, imp)
}

// importSubmissions handles POST /api/project/submissions (and /api/project/devpost).
func (s *Server) importSubmissions(c *fiber.Ctx) error {
	up, err := readUpload(c)
	if err != nil {
		return err
	}
	imp, err := parseSubmissionsCSV(up.csv)
	if err != nil {
		return err
	}
	return s.createImported(c, imp)
}

// createImported submits the parsed projects as one command and answers with counts.
func (s *Server) createImported(c *fiber.Ctx, imp *projectImport) error {
	if len(imp.projects) == 0 {
		return c.JSON(fiber.Map{"ok": 1, "added": 0, "skipped": imp.skipped})
	}
	res, err := s.submit(c, &engine.CreateProjects{Projects: imp.projects, SkipIgnored: true, Rows: imp.rows})
	if err != nil {
		return err
	}
	cp := res.(engine.CreatedProjects)
	return c.JSON(fiber.Map{"ok": 1, "added": len(cp.IDs), "skipped": cp.Skipped + imp.skipped})
}
