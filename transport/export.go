package transport

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

// Exports (docs/behaviour.md#admin-operations). Rows are copied out of the state under the read lock and encoded
// after it is released, so a large export never holds the engine up.

// Column headers of the exports.
var (
	judgesHeader   = []string{"Name", "Email", "Code", "Track", "Group", "Active", "ReadWelcome", "Seen", "Notes", "LastActivity", "Flagged", "Reliability", "Conflicts"}
	projectsHeader = []string{"Name", "Table", "Group", "Description", "URL", "TryLink", "VideoLink", "ChallengeList", "Seen", "Score", "Stars", "Mu", "Active", "Prioritized", "LastActivity", "Rank", "Rating", "RatingSD", "PTop"}
	rankingsHeader = []string{"JudgeName", "JudgeCode", "Track", "Ranked", "Unranked"}
	resultsHeader  = []string{"Rank", "Name", "Table", "Rating", "RatingSD", "PTop", "Score", "Stars", "Views"}
)

// safeCell defuses spreadsheet formula injection: user text starting with = + - @ tab or
// carriage return gets a leading apostrophe.
func safeCell(v string) string {
	if v == "" {
		return v
	}
	switch v[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + v
	}
	return v
}

// exportTime formats a time (ms) as RFC 3339 UTC; 0 (never) is an empty cell.
func exportTime(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

func exportInt(n int) string { return strconv.Itoa(n) }

func exportFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func exportBool(b bool) string { return strconv.FormatBool(b) }

// encodeCSV writes the header and rows as RFC 4180 CSV (CRLF line ends).
func encodeCSV(header []string, rows [][]string) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.UseCRLF = true
	_ = w.Write(header)
	_ = w.WriteAll(rows) // writes to memory cannot fail
	return buf.Bytes()
}

// sendCSV answers with a CSV attachment.
func sendCSV(c *fiber.Ctx, name string, body []byte) error {
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Send(body)
}

// exportJudges handles GET /api/admin/export/judges.
func (s *Server) exportJudges(c *fiber.Ctx) error {
	var rows [][]string
	s.node.Read(func(st *engine.State) {
		js := st.JudgesInOrder()
		rows = make([][]string, 0, len(js))
		for _, j := range js {
			flagged := make([]string, 0, len(j.Flagged))
			for _, id := range j.Flagged {
				if p, ok := st.Projects[id]; ok {
					flagged = append(flagged, exportInt(p.Location))
				}
			}
			rows = append(rows, []string{
				safeCell(j.Name), safeCell(j.Email), j.Code, safeCell(j.Track), exportInt(j.Group),
				exportBool(j.Active), exportBool(j.ReadWelcome), exportInt(j.Seen), safeCell(j.Notes), exportTime(j.LastActivity),
				strings.Join(flagged, ", "),
				exportFloat(j.ReliabilityOf()), exportInt(st.ConflictCount(j.ID)),
			})
		}
	})
	return sendCSV(c, "judges.csv", encodeCSV(judgesHeader, rows))
}

// exportProjectRow is one projects.csv row plus the challenges it is filed under.
type exportProjectRow struct {
	cells      []string
	challenges []string
}

// projectRows copies every project (in table order) into export rows. It must run under
// the read lock.
func projectRows(st *engine.State) []exportProjectRow {
	ps := st.ProjectsByLocation()
	out := make([]exportProjectRow, 0, len(ps))
	for _, p := range ps {
		v := st.AdminView(p)
		mu := st.ScoreOf(p.ID).Mu
		out = append(out, exportProjectRow{
			challenges: v.ChallengeList,
			cells: []string{
				safeCell(v.Name), exportInt(v.Location), exportInt(v.Group), safeCell(v.Description), safeCell(v.URL),
				safeCell(v.TryLink), safeCell(v.VideoLink), safeCell(strings.Join(v.ChallengeList, ", ")),
				exportInt(v.Seen), exportInt(v.Score), exportInt(v.Stars), strconv.FormatFloat(mu, 'f', -1, 64),
				exportBool(v.Active), exportBool(v.Prioritized), exportTime(v.LastActivity),
				exportInt(v.Rank), exportFloat(v.Rating), exportFloat(v.RatingSD), exportFloat(v.PTop),
			},
		})
	}
	return out
}

// exportProjects handles GET /api/admin/export/projects.
func (s *Server) exportProjects(c *fiber.Ctx) error {
	crowdBT.Refresh(s.node) // Mu: compute Crowd-BT outside the lock when it is stale
	var rows []exportProjectRow
	s.node.Read(func(st *engine.State) { rows = projectRows(st) })
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = r.cells
	}
	return sendCSV(c, "projects.csv", encodeCSV(projectsHeader, cells))
}

// exportResults handles GET /api/admin/results.csv: the Results tab's ranking, one row
// per active project by rank, with the tab's columns (docs/behaviour.md#dashboard-and-expo).
func (s *Server) exportResults(c *fiber.Ctx) error {
	var ps []engine.ResultEntry
	s.node.Read(func(st *engine.State) { ps = st.Results().Projects })
	rows := make([][]string, len(ps))
	for i, p := range ps {
		rows[i] = []string{
			exportInt(p.Rank), safeCell(p.Name), exportInt(p.Location), exportFloat(p.Rating), exportFloat(p.RatingSD),
			exportFloat(p.PTop), exportInt(p.Score), exportInt(p.Stars), exportInt(p.Seen),
		}
	}
	return sendCSV(c, "results.csv", encodeCSV(resultsHeader, rows))
}

// exportRankings handles GET /api/admin/export/rankings.
func (s *Server) exportRankings(c *fiber.Ctx) error {
	var rows [][]string
	s.node.Read(func(st *engine.State) { rows = rankingRows(st) })
	return sendCSV(c, "rankings.csv", encodeCSV(rankingsHeader, rows))
}

// rankingRows lists every judge (creation order) with the tables of its ranking, best
// first, and its judged tables left out of the ranking (in the order judged). It must
// run under the read lock.
func rankingRows(st *engine.State) [][]string {
	js := st.JudgesInOrder()
	rows := make([][]string, 0, len(js))
	table := func(id engine.ID) (string, bool) {
		if p, ok := st.Projects[id]; ok {
			return exportInt(p.Location), true
		}
		return "", false
	}
	for _, j := range js {
		ranked := make([]string, 0, len(j.Rankings))
		inRanking := make(map[engine.ID]bool, len(j.Rankings))
		for _, id := range j.Rankings {
			inRanking[id] = true
			if t, ok := table(id); ok {
				ranked = append(ranked, t)
			}
		}
		unranked := []string{}
		for _, sp := range j.SeenProjects {
			if inRanking[sp.ProjectID] {
				continue
			}
			if t, ok := table(sp.ProjectID); ok {
				unranked = append(unranked, t)
			}
		}
		rows = append(rows, []string{
			safeCell(j.Name), j.Code, safeCell(j.Track), strings.Join(ranked, ", "), strings.Join(unranked, ", "),
		})
	}
	return rows
}

// exportChallenges handles GET /api/admin/export/challenges: a ZIP with one
// projects.csv-shaped file per challenge (sorted by challenge name).
func (s *Server) exportChallenges(c *fiber.Ctx) error {
	crowdBT.Refresh(s.node)
	var rows []exportProjectRow
	s.node.Read(func(st *engine.State) { rows = projectRows(st) })
	byChallenge := map[string][][]string{}
	for _, r := range rows {
		for _, ch := range uniqueChallenges(r.challenges) {
			byChallenge[ch] = append(byChallenge[ch], r.cells)
		}
	}
	names := make([]string, 0, len(byChallenge))
	for ch := range byChallenge {
		names = append(names, ch)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	used := map[string]bool{}
	now := time.Now().UTC()
	for _, ch := range names {
		fh := &zip.FileHeader{Name: uniqueName(zipEntryName(ch), used), Method: zip.Deflate, Modified: now}
		w, err := zw.CreateHeader(fh)
		if err != nil {
			return err
		}
		if _, err := w.Write(encodeCSV(projectsHeader, byChallenge[ch])); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/zip")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="challenges.zip"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Send(buf.Bytes())
}

// uniqueChallenges drops repeated challenges of one project.
func uniqueChallenges(list []string) []string {
	if len(list) < 2 {
		return list
	}
	seen := make(map[string]bool, len(list))
	out := make([]string, 0, len(list))
	for _, v := range list {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// windowsReserved are base names Windows refuses whatever the extension.
var windowsReserved = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
}

// zipEntryName turns a challenge name into a harmless file base name: letters, digits,
// spaces and a few punctuation marks survive; path separators, "..", control and
// shell/Windows-special characters become "_" (runs of "_" collapse to one); no leading
// dot or space; no Windows device name; at most 100 characters.
func zipEntryName(ch string) string {
	var b strings.Builder
	for _, r := range ch {
		switch {
		case r == utf8.RuneError:
			b.WriteByte('_')
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case r == ' ' || r == '-' || r == '_' || r == '.' || r == '(' || r == ')' || r == '&' || r == '+' || r == ',' || r == '#' || r == '!' || r == '\'':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	for strings.Contains(name, "..") {
		name = strings.ReplaceAll(name, "..", "_")
	}
	for strings.Contains(name, "__") {
		name = strings.ReplaceAll(name, "__", "_")
	}
	name = strings.Trim(name, ". ")
	if utf8.RuneCountInString(name) > 100 {
		name = strings.TrimRight(string([]rune(name)[:100]), ". ")
	}
	if name == "" {
		name = "challenge"
	}
	if base, _, _ := strings.Cut(name, "."); windowsReserved[strings.ToUpper(strings.TrimSpace(base))] {
		name = "_" + name
	}
	return name
}

// uniqueName returns base+".csv", or base+" (n).csv" when that name (compared without
// case, as Windows and macOS do) is taken.
func uniqueName(base string, used map[string]bool) string {
	name := base + ".csv"
	for n := 2; used[strings.ToLower(name)]; n++ {
		name = base + " (" + strconv.Itoa(n) + ").csv"
	}
	used[strings.ToLower(name)] = true
	return name
}
