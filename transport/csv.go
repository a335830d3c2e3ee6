package transport

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"podium/engine"
)

// CSV imports (docs/behaviour.md#admin-operations). Parsing happens here, in transport; each import then becomes ONE
// engine command, so an import is all-or-nothing. Rows are numbered as a spreadsheet
// numbers them: from 1, the header row included, blank lines included.

// csvRow is one record of an uploaded CSV with its spreadsheet row number.
type csvRow struct {
	num   int
	cells []string
}

// blank reports whether every cell of the row is empty or white space.
func (r csvRow) blank() bool {
	for _, c := range r.cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// cell returns the trimmed i-th cell, or "" when the row is shorter.
func (r csvRow) cell(i int) string {
	if i < 0 || i >= len(r.cells) {
		return ""
	}
	return strings.TrimSpace(r.cells[i])
}

// rowError is a refusal that names the row.
func rowError(row int, format string, a ...any) error {
	return badRequest("row %d: "+format, append([]any{row}, a...)...)
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Bounds of an uploaded CSV (docs/behaviour.md#operations: the worst 32 MiB upload must not take much more
// memory than itself). Every cell costs a string header (16 bytes) however short, so a
// file of commas would otherwise cost 16 times its size.
const (
	maxCSVCellsPerRow = 512
	maxCSVCellBytes   = 256 << 10
	maxCSVRowBytes    = 1 << 20
	maxCSVCells       = 2_000_000
	maxCSVRows        = 250_000
)

// readCSV parses a whole CSV file: UTF-8 with or without BOM, CRLF, LF or CR-only line
// ends, quoted cells spanning lines. Invalid UTF-8, NUL characters, malformed quoting
// and rows, cells or files over the bounds above are refused with the row they occur in.
func readCSV(data []byte) ([]csvRow, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	comma := sniffDelimiter(data)
	if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') >= 0 {
		// Line ends of classic Mac OS (and of some exports): CR only.
		data = bytes.ReplaceAll(data, []byte{'\r'}, []byte{'\n'})
	}
	if err := checkCSVShape(data, byte(comma)); err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = comma
	r.FieldsPerRecord = -1
	r.ReuseRecord = false
	var rows []csvRow
	row := 0         // spreadsheet row number of the last record read
	linesBefore := 0 // newlines consumed up to the end of the last record
	prevEnd := int64(0)
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				n := row + 1
				if pe.StartLine > linesBefore {
					n = row + pe.StartLine - linesBefore
				}
				return nil, quoteError(data, byte(comma), n, pe)
			}
			return nil, badRequest("cannot read the CSV file: %v", err)
		}
		line, _ := r.FieldPos(0)
		// Blank lines are skipped by encoding/csv but are rows in a spreadsheet.
		row += 1 + max(0, line-1-linesBefore)
		end := r.InputOffset()
		if end > int64(len(data)) {
			end = int64(len(data))
		}
		linesBefore += bytes.Count(data[prevEnd:end], []byte{'\n'})
		prevEnd = end
		for _, c := range rec {
			if !utf8.ValidString(c) {
				return nil, rowError(row, "the file is not valid UTF-8 (save it as \"CSV UTF-8\")")
			}
			if strings.IndexByte(c, 0) >= 0 {
				return nil, rowError(row, "a cell contains a NUL character (is this a spreadsheet file rather than CSV?)")
			}
		}
		rows = append(rows, csvRow{num: row, cells: rec})
	}
	return rows, nil
}

// quoteError says in plain words what is wrong with the quoting that encoding/csv
// refused (docs/behaviour.md#csv-errors-in-plain-words), naming the spreadsheet row
// (row) and the column of the cell: a quote mark that is never closed, text after a
// closing quote mark, or a quote mark in the middle of a cell that is not quoted.
func quoteError(data []byte, comma byte, row int, pe *csv.ParseError) error {
	start, at := lineOffset(data, pe.StartLine), lineOffset(data, pe.Line)+pe.Column-1
	col := 1
	quoted, cellStart := false, true
	for i := start; i < at && i < len(data); i++ {
		b := data[i]
		switch {
		case quoted:
			if b == '"' {
				if i+1 < len(data) && data[i+1] == '"' {
					i++
				} else {
					quoted = false
				}
			}
		case b == '"' && cellStart:
			quoted, cellStart = true, false
		case b == comma:
			col++
			cellStart = true
		default:
			cellStart = false
		}
	}
	where := fmt.Sprintf("row %d, column %d (%s)", row, col, columnLetters(col))
	const fix = "put the whole cell in quote marks and write each quote mark inside it twice, as in \"say \"\"hi\"\"\""
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return badRequest("%s: a quote mark (\") in the middle of a cell: %s", where, fix)
	case at >= len(data):
		return badRequest("%s: this cell opens a quote mark (\") that is never closed, so everything after it would be one cell: close it, or remove it (inside a quoted cell, write a quote mark twice: \"\")", where)
	default:
		return badRequest("%s: text after the closing quote mark (\") of a quoted cell: %s", where, fix)
	}
}

// lineOffset is the byte offset at which line (from 1) of data starts.
func lineOffset(data []byte, line int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return len(data)
		}
		off += i + 1
	}
	return off
}

// columnLetters names column n (from 1) as a spreadsheet does: A, B, …, Z, AA, AB, ….
func columnLetters(n int) string {
	var b []byte
	for ; n > 0; n = (n - 1) / 26 {
		b = append([]byte{byte('A' + (n-1)%26)}, b...)
	}
	return string(b)
}

// checkCSVShape walks the file once, without allocating, and refuses it when a row has
// too many cells or bytes, a cell too many bytes, or the file too many cells or rows —
// before encoding/csv builds any of them. Quoting follows encoding/csv: a quote opens a
// quoted cell only at the start of a cell, and "" inside one is a quote. Rows are
// counted as readCSV numbers them (a line break inside quotes does not start a row).
func checkCSVShape(data []byte, comma byte) error {
	row, rows, cells, total := 1, 0, 1, 0
	cellBytes, rowBytes := 0, 0
	quoted, cellStart, blank := false, true, true
	endRow := func() error {
		if !blank {
			rows++
			total += cells
		}
		if rows > maxCSVRows {
			return rowError(row, "the file has more than %d rows", maxCSVRows)
		}
		if total > maxCSVCells {
			return rowError(row, "the file has more than %d cells", maxCSVCells)
		}
		row++
		cells, cellBytes, rowBytes, cellStart, blank = 1, 0, 0, true, true
		return nil
	}
	for i := 0; i < len(data); i++ {
		b := data[i]
		rowBytes++
		if rowBytes > maxCSVRowBytes {
			return rowError(row, "the row is longer than %d bytes", maxCSVRowBytes)
		}
		switch {
		case quoted:
			if b == '"' {
				if i+1 < len(data) && data[i+1] == '"' {
					i++
					rowBytes++
				} else {
					quoted = false
					continue
				}
			}
			cellBytes++
		case b == '"' && cellStart:
			quoted, cellStart, blank = true, false, false
			continue
		case b == comma:
			cells++
			if cells > maxCSVCellsPerRow {
				return rowError(row, "the row has more than %d cells", maxCSVCellsPerRow)
			}
			cellBytes, cellStart, blank = 0, true, false
			continue
		case b == '\n':
			if err := endRow(); err != nil {
				return err
			}
			continue
		default:
			cellStart = false
			if b != '\r' && b != ' ' && b != '\t' {
				blank = false
			}
			cellBytes++
		}
		if cellBytes > maxCSVCellBytes {
			return rowError(row, "a cell is longer than %d bytes", maxCSVCellBytes)
		}
	}
	return endRow()
}

// sniffDelimiter picks the separator of the first line: a comma, unless that line has
// no comma outside quotes but has semicolons (spreadsheets in locales that write decimal
// commas) or tabs.
func sniffDelimiter(data []byte) rune {
	var counts [256]int
	quoted := false
	for _, b := range data {
		if b == '"' {
			quoted = !quoted
			continue
		}
		if quoted {
			continue
		}
		if b == '\n' {
			if counts[','] > 0 || counts[';'] > 0 || counts['\t'] > 0 {
				break
			}
			continue
		}
		counts[b]++
	}
	switch {
	case counts[','] > 0:
		return ','
	case counts[';'] > 0:
		return ';'
	case counts['\t'] > 0:
		return '\t'
	}
	return ','
}

// dataRows drops the header (when there is one) and blank rows. It refuses a file
// without any data row.
func dataRows(rows []csvRow, hasHeader bool) ([]csvRow, error) {
	if hasHeader && len(rows) > 0 {
		rows = rows[1:]
	}
	out := make([]csvRow, 0, len(rows))
	for _, r := range rows {
		if !r.blank() {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, badRequest("the CSV file has no data rows")
	}
	return out, nil
}

// judgeImport is a parsed judges CSV.
type judgeImport struct {
	judges []engine.NewJudge
	rows   []int
}

// parseJudgesCSV reads the judges CSV of docs/behaviour.md#admin-operations: name, email, track?, notes?. It checks
// every row against the current tracks and judges (tracks, emails) so that the error
// names the right row; the engine checks again when the command applies.
func parseJudgesCSV(data []byte, hasHeader bool, tracks []string, emails map[string]bool) (*judgeImport, error) {
	rows, err := readCSV(data)
	if err != nil {
		return nil, err
	}
	rows, err = dataRows(rows, hasHeader)
	if err != nil {
		return nil, err
	}
	out := &judgeImport{judges: make([]engine.NewJudge, 0, len(rows)), rows: make([]int, 0, len(rows))}
	seen := make(map[string]int, len(rows))
	for _, r := range rows {
		if err := checkJudgeRow(r, tracks, emails, seen, out); err != nil {
			return nil, headerHint(err, r.num, hasHeader)
		}
	}
	return out, nil
}

// checkJudgeRow checks one judges CSV row and appends it to out.
func checkJudgeRow(r csvRow, tracks []string, emails map[string]bool, seen map[string]int, out *judgeImport) error {
	if len(r.cells) < 2 {
		return rowError(r.num, "expected at least 2 columns (name, email), got %d", len(r.cells))
	}
	nj := engine.NewJudge{Name: r.cell(0), Email: r.cell(1), Track: r.cell(2), Notes: r.cell(3)}
	if err := csvCheckName("name", nj.Name); err != nil {
		return rowError(r.num, "%v", err)
	}
	if !engine.ValidEmail(nj.Email) {
		return rowError(r.num, "email %q is not a valid address", nj.Email)
	}
	if utf8.RuneCountInString(nj.Notes) > engine.MaxNotesLen {
		return rowError(r.num, "notes are longer than %d characters", engine.MaxNotesLen)
	}
	if nj.Track != "" && !csvHasTrack(tracks, nj.Track) {
		return rowError(r.num, "track %q does not exist", nj.Track)
	}
	nj.Track = csvTrackName(tracks, nj.Track)
	key := strings.ToLower(nj.Email)
	if emails[key] {
		return rowError(r.num, "a judge with email %s already exists", nj.Email)
	}
	if first, dup := seen[key]; dup {
		return rowError(r.num, "email %s is also in row %d", nj.Email, first)
	}
	seen[key] = r.num
	out.judges = append(out.judges, nj)
	out.rows = append(out.rows, r.num)
	return nil
}

// headerHint adds a hint to an error in row 1 of a file uploaded without hasHeader:
// the row is most likely a header.
func headerHint(err error, row int, hasHeader bool) error {
	var he *httpError
	if row != 1 || hasHeader || !errors.As(err, &he) {
		return err
	}
	return badRequest("%s (if row 1 is a header row, upload with hasHeader=true)", he.msg)
}

// projectImport is a parsed projects CSV or submission export.
type projectImport struct {
	projects []engine.NewProject
	rows     []int
	skipped  int // rows left out before the engine (Draft submissions)
}

// parseProjectsCSV reads the projects CSV of docs/behaviour.md#admin-operations: name, description, url, try_link?,
// video_link?, challenge_list? (comma-separated), contact_emails? (the column after
// challenge_list; with a header row, the column named for emails instead: csvEmailColumn).
func parseProjectsCSV(data []byte, hasHeader bool) (*projectImport, error) {
	rows, err := readCSV(data)
	if err != nil {
		return nil, err
	}
	emailCol := 6
	if hasHeader && len(rows) > 0 {
		emailCol = csvEmailColumn(rows[0])
	}
	rows, err = dataRows(rows, hasHeader)
	if err != nil {
		return nil, err
	}
	out := &projectImport{projects: make([]engine.NewProject, 0, len(rows)), rows: make([]int, 0, len(rows))}
	for _, r := range rows {
		if len(r.cells) < 3 {
			return nil, rowError(r.num, "expected at least 3 columns (name, description, url), got %d", len(r.cells))
		}
		np := engine.NewProject{
			Name:          r.cell(0),
			Description:   r.cell(1),
			URL:           r.cell(2),
			TryLink:       csvFirstLink(r.cell(3)),
			VideoLink:     csvFirstLink(r.cell(4)),
			ChallengeList: engine.SplitChallenges(r.cell(5)),
			ContactEmails: csvEmails(r.cell(emailCol)),
		}
		if err := engine.CheckProject(&np); err != nil {
			return nil, headerHint(rowError(r.num, "%s", err.Msg), r.num, hasHeader)
		}
		out.projects = append(out.projects, np)
		out.rows = append(out.rows, r.num)
	}
	return out, nil
}

// Header names of the submission platform's export (matched case-insensitively).
const (
	subTitle       = "project title"
	subURL         = "submission url"
	subStatus      = "project status"
	subAbout       = "about the project"
	subTryContains = "try it out"
	subVideo       = "video demo link"
	subPrizes      = "opt-in prizes"
)

// parseSubmissionsCSV reads a submission platform's export: a header row, columns found
// by name in any order, other columns ignored, Draft rows skipped.
func parseSubmissionsCSV(data []byte) (*projectImport, error) {
	rows, err := readCSV(data)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, badRequest("the CSV file is empty")
	}
	col := map[string]int{subTitle: -1, subURL: -1, subStatus: -1, subAbout: -1, subTryContains: -1, subVideo: -1, subPrizes: -1}
	for i, h := range rows[0].cells {
		h = strings.ToLower(strings.Join(strings.Fields(h), " "))
		key := h
		if strings.Contains(h, subTryContains) {
			key = subTryContains
		}
		if j, known := col[key]; known && j < 0 {
			col[key] = i
		}
	}
	if col[subTitle] < 0 {
		return nil, badRequest("row %d: no \"Project Title\" column in the header", rows[0].num)
	}
	emailCols := submissionEmailColumns(rows[0])
	out := &projectImport{projects: make([]engine.NewProject, 0, len(rows)), rows: make([]int, 0, len(rows))}
	for _, r := range rows[1:] {
		if r.blank() {
			continue
		}
		if status := strings.ToLower(r.cell(col[subStatus])); strings.HasPrefix(status, "draft") {
			out.skipped++
			continue
		}
		np := engine.NewProject{
			Name:          r.cell(col[subTitle]),
			Description:   r.cell(col[subAbout]),
			URL:           r.cell(col[subURL]),
			TryLink:       csvFirstLink(r.cell(col[subTryContains])),
			VideoLink:     csvFirstLink(r.cell(col[subVideo])),
			ChallengeList: engine.SplitChallenges(r.cell(col[subPrizes])),
		}
		for _, i := range emailCols {
			np.ContactEmails = append(np.ContactEmails, r.cell(i))
		}
		np.ContactEmails = csvEmails(np.ContactEmails...)
		if err := engine.CheckProject(&np); err != nil {
			return nil, rowError(r.num, "%s", err.Msg)
		}
		out.projects = append(out.projects, np)
		out.rows = append(out.rows, r.num)
	}
	if len(out.projects) == 0 && out.skipped == 0 {
		return nil, badRequest("the CSV file has no data rows")
	}
	return out, nil
}

// csvFirstLink returns the first of several links in one cell (platform exports put all of
// a project's "try it out" links in one cell, separated by commas, spaces or newlines).
func csvFirstLink(v string) string {
	f := strings.FieldsFunc(v, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\n' || r == '\r' || r == '\t'
	})
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// csvCheckName applies the name rules of docs/behaviour.md#conventions (non-empty, at most 200 characters).
func csvCheckName(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New(field + " is required")
	}
	if utf8.RuneCountInString(v) > engine.MaxNameLen {
		return errors.New(field + " is longer than 200 characters")
	}
	return nil
}

// csvHasTrack reports whether list holds v, ignoring case.
func csvHasTrack(list []string, v string) bool {
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

// csvTrackName returns the spelling of v used in list (tracks typed in another case).
func csvTrackName(list []string, v string) string {
	for _, x := range list {
		if x == v {
			return x
		}
	}
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return x
		}
	}
	return v
}
