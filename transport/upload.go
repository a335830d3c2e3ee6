package transport

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// upload is a CSV import's multipart form: the "csv" part (a file or a plain value) and
// the small fields next to it.
type upload struct {
	csv    []byte
	hasCSV bool
	fields map[string]string
}

const (
	maxUploadParts = 64      // parts in one form
	maxUploadField = 4 << 10 // bytes of a field other than "csv" (longer ones are refused)
)

// bool reads a multipart boolean (docs/behaviour.md#conventions): "true" (any case) or "1" is true.
func (u *upload) bool(name string) bool {
	v := strings.TrimSpace(u.fields[name])
	return v == "1" || strings.EqualFold(v, "true")
}

// hasHeader reads hasHeader, or headerRow (the name Jury's web client sends).
func (u *upload) hasHeader() bool { return u.bool("hasHeader") || u.bool("headerRow") }

// readUpload parses the multipart form of a CSV import straight from the socket (the
// route is deferred, see body.go): one copy of the CSV in memory, nothing on disk, and
// never more than maxMultipartBody bytes read. Call it after the route's auth.
func readUpload(c *fiber.Ctx) (*upload, error) {
	mt, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || mt != fiber.MIMEMultipartForm || params["boundary"] == "" {
		return nil, badRequest("expected a multipart/form-data upload with a \"csv\" file")
	}
	var src io.Reader
	st, _ := c.Locals(localBody).(*bodyState)
	if st != nil && st.pending && c.Request().BodyStream() != nil {
		st.pending = false
		src = c.Request().BodyStream()
	} else {
		if _, err := requestBody(c); err != nil {
			return nil, err
		}
		src = bytes.NewReader(c.Request().Body())
	}
	lr := &io.LimitedReader{R: src, N: maxMultipartBody + 1}
	u, err := parseUpload(lr, params["boundary"], c.Request().Header.ContentLength())
	if lr.N <= 0 {
		drainBody(c)
		return nil, errTooLarge(maxMultipartBody)
	}
	if err != nil {
		c.Set(fiber.HeaderConnection, "close") // the rest of the body may still be unread
		return nil, err
	}
	if !u.hasCSV {
		return nil, badRequest("multipart field \"csv\" (the CSV file) is required")
	}
	return u, nil
}

// parseUpload reads a multipart form from r. sizeHint (the Content-Length, or < 0)
// sizes the CSV buffer so that it is allocated once.
func parseUpload(r io.Reader, boundary string, sizeHint int) (*upload, error) {
	u := &upload{fields: map[string]string{}}
	mr := multipart.NewReader(r, boundary)
	for n := 0; ; n++ {
		part, err := mr.NextPart()
		if err == io.EOF {
			return u, nil
		}
		if err != nil {
			return nil, badRequest("malformed multipart/form-data body")
		}
		if n >= maxUploadParts {
			return nil, badRequest("too many parts in the multipart form (at most %d)", maxUploadParts)
		}
		name := part.FormName()
		switch {
		case name == "csv" && !u.hasCSV:
			hint := 4096
			if sizeHint > 0 {
				hint = min(sizeHint, maxMultipartBody) + 1
			}
			buf := bytes.NewBuffer(make([]byte, 0, hint))
			if _, err := buf.ReadFrom(part); err != nil {
				return nil, badRequest("malformed multipart/form-data body")
			}
			u.csv, u.hasCSV = buf.Bytes(), true
		default:
			b, err := io.ReadAll(io.LimitReader(part, maxUploadField+1))
			if err != nil {
				return nil, badRequest("malformed multipart/form-data body")
			}
			if len(b) > maxUploadField {
				if name == "csv" {
					continue // a second CSV: ignored (its rest is skipped by NextPart)
				}
				return nil, badRequest("multipart field %q is too long", name)
			}
			if _, seen := u.fields[name]; !seen && name != "csv" {
				u.fields[name] = string(b)
			}
		}
	}
}
