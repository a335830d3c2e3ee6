package transport

import (
	"io"
	"strings"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

// routesImportExport registers CSV and submission imports, exports, QR and email (SPEC §4, §10).
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

// multipartBool reads a multipart boolean (SPEC §1): "true" (any case) or "1" is true.
func multipartBool(c *fiber.Ctx, name string) bool {
	v := strings.TrimSpace(c.FormValue(name))
	return v == "1" || strings.EqualFold(v, "true")
}

// multipartHasHeader reads hasHeader, or headerRow, the name Jury's web client sends
// (SPEC §1): either one true means the first row is a header.
func multipartHasHeader(c *fiber.Ctx) bool {
	return multipartBool(c, "hasHeader") || multipartBool(c, "headerRow")
}

// uploadedCSV returns the bytes of the multipart field "csv" (a file, or a plain form
// value from clients that send the text itself).
func uploadedCSV(c *fiber.Ctx) ([]byte, error) {
	if !strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderContentType)), fiber.MIMEMultipartForm) {
		return nil, badRequest("expected a multipart/form-data upload with a \"csv\" file")
	}
	if fh, err := c.FormFile("csv"); err == nil {
		if fh.Size > maxMultipartBody {
			return nil, fiber.ErrRequestEntityTooLarge
		}
		f, err := fh.Open()
		if err != nil {
			return nil, badRequest("cannot read the uploaded file")
		}
		defer f.Close()
		data := make([]byte, fh.Size)
		if _, err := io.ReadFull(f, data); err != nil {
			return nil, badRequest("cannot read the uploaded file")
		}
		return data, nil
	}
	if v := c.FormValue("csv"); v != "" {
		return []byte(v), nil
	}
	return nil, badRequest("multipart field \"csv\" (the CSV file) is required")
}

// importJudges handles POST /api/judge/csv.
func (s *Server) importJudges(c *fiber.Ctx) error {
	data, err := uploadedCSV(c)
	if err != nil {
		return err
	}
	hasHeader, noSend := multipartHasHeader(c), multipartBool(c, "noSend")
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
	cmd := &engine.CreateJudges{Judges: imp.judges, Codes: newLoginCodes(len(imp.judges))}
	if consecutiveRows(imp.rows) {
		cmd.RowOffset = imp.rows[0]
	}
	res, err := s.submit(c, cmd)
	if err != nil {
		return err
	}
	created := res.([]engine.CreatedJudge)
	if !noSend {
		s.sendLoginCodes(created)
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
	data, err := uploadedCSV(c)
	if err != nil {
		return err
	}
	imp, err := parseProjectsCSV(data, multipartHasHeader(c))
	if err != nil {
		return err
	}
	return s.createImported(c, imp)
}

// importSubmissions handles POST /api/project/submissions (and /api/project/devpost).
func (s *Server) importSubmissions(c *fiber.Ctx) error {
	data, err := uploadedCSV(c)
	if err != nil {
		return err
	}
	imp, err := parseSubmissionsCSV(data)
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
