package transport

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

// Conflicts of interest (docs/behaviour.md#on-the-floor): the admin's import, list and
// removal. A judge declares one by skipping with reason "conflict".

// routesConflicts registers the admin's conflict routes.
func (s *Server) routesConflicts(r fiber.Router) {
	r.Post("/admin/conflicts/csv", s.adminAuth, s.importConflicts)
	r.Get("/admin/conflicts", s.adminAuth, s.listConflicts)
	r.Delete("/admin/conflicts/:judge/:project", s.adminAuth, s.removeConflict)
	r.Delete("/admin/conflicts/:judge/:project/judgement", s.adminAuth, s.dropConflictedJudgement)
}

// conflictRow is one row of a conflicts CSV: who (a judge's email or login code) and
// which project (its name or table number).
type conflictRow struct {
	num            int
	judge, project string
}

// parseConflictsCSV reads the conflicts CSV: judge email or code, project name or table
// number. It checks the shape only; resolveConflicts names the judges and projects.
func parseConflictsCSV(data []byte, hasHeader bool) ([]conflictRow, error) {
	rows, err := readCSV(data)
	if err != nil {
		return nil, err
	}
	rows, err = dataRows(rows, hasHeader)
	if err != nil {
		return nil, err
	}
	out := make([]conflictRow, 0, len(rows))
	for _, r := range rows {
		cr := conflictRow{num: r.num, judge: r.cell(0), project: r.cell(1)}
		switch {
		case len(r.cells) < 2:
			return nil, headerHint(rowError(r.num, "expected 2 columns (judge email or code, project name or table), got %d", len(r.cells)), r.num, hasHeader)
		case cr.judge == "":
			return nil, rowError(r.num, "the judge (email or code) is empty")
		case cr.project == "":
			return nil, rowError(r.num, "the project (name or table number) is empty")
		}
		out = append(out, cr)
	}
	return out, nil
}

// resolveConflicts turns the rows into judge and project ids, under the read lock. A
// judge is found by email (any case) or login code (spaces ignored); a project by table
// number when the cell is a number, else by name (any case, which must be unique).
func resolveConflicts(st *engine.State, rows []conflictRow, hasHeader bool) ([]engine.ConflictPair, error) {
	byEmail := make(map[string]engine.ID, len(st.Judges))
	for id, j := range st.Judges {
		byEmail[strings.ToLower(j.Email)] = id
	}
	byName := make(map[string][]engine.ID, len(st.Projects))
	byTable := make(map[int]engine.ID, len(st.Projects))
	for id, p := range st.Projects {
		k := strings.ToLower(strings.TrimSpace(p.Name))
		byName[k] = append(byName[k], id)
		byTable[p.Location] = id
	}
	out := make([]engine.ConflictPair, 0, len(rows))
	for _, r := range rows {
		jid, ok := byEmail[strings.ToLower(r.judge)]
		if !ok {
			if j, found := st.JudgeByCode(strings.ReplaceAll(r.judge, " ", "")); found {
				jid, ok = j.ID, true
			}
		}
		if !ok {
			return nil, headerHint(rowError(r.num, "no judge has the email or code %q", r.judge), r.num, hasHeader)
		}
		var pid engine.ID
		if n, err := strconv.Atoi(r.project); err == nil {
			if pid, ok = byTable[n]; !ok {
				return nil, rowError(r.num, "no project is at table %d", n)
			}
		} else {
			ids := byName[strings.ToLower(r.project)]
			switch len(ids) {
			case 0:
				return nil, headerHint(rowError(r.num, "no project is named %q", r.project), r.num, hasHeader)
			case 1:
				pid = ids[0]
			default:
				return nil, rowError(r.num, "%d projects are named %q: give the table number instead", len(ids), r.project)
			}
		}
		out = append(out, engine.ConflictPair{Row: r.num, Judge: jid, Project: pid})
	}
	return out, nil
}

// importConflicts handles POST /api/admin/conflicts/csv: all rows or none. The answer
// lists the pairs whose judge already judged the project (judged), for the organiser
// to keep or remove (docs/behaviour.md#a-conflict-found-after-the-judgement).
func (s *Server) importConflicts(c *fiber.Ctx) error {
	up, err := readUpload(c)
	if err != nil {
		return err
	}
	rows, err := parseConflictsCSV(up.csv, up.hasHeader())
	if err != nil {
		return err
	}
	var pairs []engine.ConflictPair
	s.node.Read(func(st *engine.State) { pairs, err = resolveConflicts(st, rows, up.hasHeader()) })
	if err != nil {
		return err
	}
	res, err := s.submit(c, &engine.ConflictsAdd{Pairs: pairs})
	if err != nil {
		return err
	}
	added := res.(engine.ConflictsAdded)
	return c.JSON(fiber.Map{"ok": 1, "added": added.Added, "judged": added.Judged})
}

// listConflicts handles GET /api/admin/conflicts.
func (s *Server) listConflicts(c *fiber.Ctx) error {
	var out []engine.ConflictView
	s.node.Read(func(st *engine.State) { out = st.ConflictsView() })
	return c.JSON(out)
}

// judgeProjectParams reads the :judge and :project ids of a route.
func judgeProjectParams(c *fiber.Ctx) (judge, project engine.ID, err error) {
	if judge, err = paramID(c, "judge"); err != nil {
		return
	}
	project, err = paramID(c, "project")
	return
}

// removeConflict handles DELETE /api/admin/conflicts/:judge/:project.
func (s *Server) removeConflict(c *fiber.Ctx) error {
	jid, pid, err := judgeProjectParams(c)
	if err != nil {
		return err
	}
	return s.submitOK(c, &engine.ConflictRemove{Judge: jid, Project: pid})
}

// dropConflictedJudgement handles DELETE /api/admin/conflicts/:judge/:project/judgement:
// the judge's finished view of the project leaves the judging data; the conflict stays.
func (s *Server) dropConflictedJudgement(c *fiber.Ctx) error {
	jid, pid, err := judgeProjectParams(c)
	if err != nil {
		return err
	}
	return s.submitOK(c, &engine.ConflictDropJudgement{Judge: jid, Project: pid})
}
