package transport

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"

	"podium/engine"
	"podium/persist"
)

const testAPIKey = "marketing-site-key"

func withAPIKey(c *Config) { c.PublicAPIKey = testAPIKey }

var asSite = auth{hdr: map[string]string{"X-API-Key": testAPIKey}}

// Test images: only the signature matters to the checks.
var (
	pngBytes  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	jpegBytes = []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F'}
	svgBytes  = []byte(`<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>`)
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// get sends a GET with the given headers through a client that does not decompress,
// and returns the response (body read) and the raw body.
func (ts *testServer) get(path string, hdr map[string]string) (*http.Response, []byte) {
	ts.t.Helper()
	req, err := http.NewRequest("GET", ts.URL+path, nil)
	if err != nil {
		ts.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := client.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp, b
}

type scheduleOut struct {
	ID, EventName, Description, StartTime, EndTime, Location, CreatedAt, UpdatedAt string
	Tags                                                                           []string
}

func (s *scheduleOut) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for _, f := range []string{"id", "event_name", "description", "start_time", "end_time", "location", "tags", "created_at", "updated_at"} {
		if _, ok := m[f]; !ok {
			return fmt.Errorf("schedule entry without %q: %s", f, b)
		}
	}
	type plain struct {
		ID          string   `json:"id"`
		EventName   string   `json:"event_name"`
		Description string   `json:"description"`
		StartTime   string   `json:"start_time"`
		EndTime     string   `json:"end_time"`
		Location    string   `json:"location"`
		CreatedAt   string   `json:"created_at"`
		UpdatedAt   string   `json:"updated_at"`
		Tags        []string `json:"tags"`
	}
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*s = scheduleOut(p)
	return nil
}

type sponsorOut struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Tier            string `json:"tier"`
	WebsiteURL      string `json:"website_url"`
	Description     string `json:"description"`
	DisplayOrder    int    `json:"display_order"`
	LogoData        string `json:"logo_data"`
	LogoContentType string `json:"logo_content_type"`
	CreatedAt       string `json:"created_at"`
	UpdatedAt       string `json:"updated_at"`
}

type faqOut struct {
	ID           string `json:"id"`
	Question     string `json:"question"`
	Answer       string `json:"answer"`
	DisplayOrder int    `json:"display_order"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
}

// envelope decodes {"data": [...]} strictly: one key, an array.
func envelope[T any](t *testing.T, b []byte) []T {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	if len(m) != 1 || m["data"] == nil || m["data"][0] != '[' {
		t.Fatalf("not a {\"data\": [...]} envelope: %s", b)
	}
	var out []T
	if err := json.Unmarshal(m["data"], &out); err != nil {
		t.Fatalf("decode data %s: %v", m["data"], err)
	}
	return out
}

func TestContentAPIKey(t *testing.T) {
	off := startServer(t)
	for _, kind := range engine.ContentKinds {
		for _, a := range []auth{anon, asSite} {
			code, b := off.do("GET", "/v1/public/"+kind, nil, a)
			if code != 503 || string(b) != `{"error":"public content API is disabled"}` {
				t.Fatalf("%s without PUBLIC_API_KEY: %d %s", kind, code, b)
			}
		}
	}
	// The admin routes work without a public key.
	off.must(200, "GET", "/api/admin/content/faq", nil, asAdmin, nil)

	ts := startServer(t, withAPIKey)
	for _, kind := range engine.ContentKinds {
		for name, a := range map[string]auth{
			"missing":     anon,
			"wrong":       {hdr: map[string]string{"X-API-Key": "marketing-site-kez"}},
			"prefix":      {hdr: map[string]string{"X-API-Key": testAPIKey[:5]}},
			"longer":      {hdr: map[string]string{"X-API-Key": testAPIKey + "x"}},
			"admin creds": asAdmin,
		} {
			code, b := ts.do("GET", "/v1/public/"+kind, nil, a)
			if code != 401 || string(b) != `{"error":"invalid or missing API key"}` {
				t.Fatalf("%s with %s key: %d %s", kind, name, code, b)
			}
		}
		b := ts.must(200, "GET", "/v1/public/"+kind, nil, asSite, nil)
		if string(b) != `{"data":[]}` {
			t.Fatalf("empty %s = %s", kind, b)
		}
	}
	// The management routes need admin credentials, not the API key.
	ts.must(401, "GET", "/api/admin/content/sponsors", nil, asSite, nil)
	ts.must(401, "PUT", "/api/admin/content", `{"schedule":[],"sponsors":[],"faq":[]}`, asSite, nil)
	ts.must(401, "POST", "/api/admin/content/faq", `{"question":"q","answer":"a"}`, anon, nil)
}

func TestContentManagementAndOrdering(t *testing.T) {
	ts := startServer(t, withAPIKey)
	var res struct {
		OK int    `json:"ok"`
		ID string `json:"id"`
	}
	// Schedule: created out of order, with a non-UTC offset.
	ts.must(200, "POST", "/api/admin/content/schedule", map[string]any{
		"event_name": "Closing", "start_time": "2026-03-02T17:00:00Z", "end_time": "2026-03-02T18:00:00Z",
	}, asAdmin, &res)
	closing := res.ID
	ts.must(200, "POST", "/api/admin/content/schedule", map[string]any{
		"event_name": "Opening", "description": "Welcome", "location": "Main hall", "tags": []string{"talk", "all"},
		"start_time": "2026-03-01T10:30:00+01:00", "end_time": "2026-03-01T10:00:00.250Z",
	}, asAdmin, &res)
	if res.OK != 1 || len(res.ID) != 24 {
		t.Fatalf("create answer = %+v", res)
	}
	opening := res.ID
	sched := envelope[scheduleOut](t, ts.must(200, "GET", "/v1/public/schedule", nil, asSite, nil))
	if len(sched) != 2 || sched[0].ID != opening || sched[1].ID != closing {
		t.Fatalf("schedule order = %+v", sched)
	}
	o := sched[0]
	if o.StartTime != "2026-03-01T09:30:00Z" || o.EndTime != "2026-03-01T10:00:00.25Z" || o.Location != "Main hall" ||
		strings.Join(o.Tags, ",") != "talk,all" || o.Description != "Welcome" {
		t.Fatalf("opening = %+v", o)
	}
	if _, err := time.Parse(time.RFC3339, o.CreatedAt); err != nil || !strings.HasSuffix(o.CreatedAt, "Z") || o.CreatedAt != o.UpdatedAt {
		t.Fatalf("created_at %q updated_at %q", o.CreatedAt, o.UpdatedAt)
	}
	if sched[1].Tags == nil {
		t.Fatal("tags must be [] when not given")
	}

	// Sponsors: display_order, then name.
	var ids []string
	for _, sp := range []map[string]any{
		{"name": "Zeta Corp", "tier": "gold", "display_order": 1, "website_url": "https://zeta.example", "logo_data": b64(pngBytes), "logo_content_type": "image/png"},
		{"name": "beta labs", "tier": "silver", "display_order": 2},
		{"name": "Alpha Inc", "tier": "silver", "display_order": 2, "logo_data": b64(svgBytes), "logo_content_type": "image/svg+xml", "description": "Cloud"},
		{"name": "Omega", "display_order": 0, "logo_data": b64(jpegBytes), "logo_content_type": "image/jpeg"},
	} {
		ts.must(200, "POST", "/api/admin/content/sponsors", sp, asAdmin, &res)
		ids = append(ids, res.ID)
	}
	sponsors := envelope[sponsorOut](t, ts.must(200, "GET", "/v1/public/sponsors", nil, asSite, nil))
	var names []string
	for _, s := range sponsors {
		names = append(names, s.Name)
	}
	if strings.Join(names, "|") != "Omega|Zeta Corp|Alpha Inc|beta labs" {
		t.Fatalf("sponsor order %v", names)
	}
	z := sponsors[1]
	if z.ID != ids[0] || z.Tier != "gold" || z.WebsiteURL != "https://zeta.example" || z.LogoContentType != "image/png" || z.LogoData != b64(pngBytes) {
		t.Fatalf("zeta = %+v", z)
	}
	if sponsors[3].LogoData != "" || sponsors[3].LogoContentType != "" {
		t.Fatalf("sponsor without logo = %+v", sponsors[3])
	}

	// FAQ: display_order, ties in creation order.
	for _, f := range []map[string]any{
		{"question": "Where?", "answer": "Hall", "display_order": 2},
		{"question": "When?", "answer": "March", "display_order": 1},
		{"question": "Who?", "answer": "Everyone", "display_order": 1},
	} {
		ts.must(200, "POST", "/api/admin/content/faq", f, asAdmin, &res)
	}
	faq := envelope[faqOut](t, ts.must(200, "GET", "/v1/public/faq", nil, asSite, nil))
	if len(faq) != 3 || faq[0].Question != "When?" || faq[1].Question != "Who?" || faq[2].Question != "Where?" {
		t.Fatalf("faq = %+v", faq)
	}
	whereID := faq[2].ID

	// The admin list is the public body.
	for _, kind := range engine.ContentKinds {
		pub := ts.must(200, "GET", "/v1/public/"+kind, nil, asSite, nil)
		adm := ts.must(200, "GET", "/api/admin/content/"+kind, nil, asAdmin, nil)
		if !bytes.Equal(pub, adm) {
			t.Fatalf("%s: admin body differs from public body", kind)
		}
	}

	// Partial update moves an entry; the public route sees it at once.
	ts.must(200, "PUT", "/api/admin/content/faq/"+whereID, map[string]any{"display_order": 0}, asAdmin, nil)
	ts.must(200, "PUT", "/api/admin/content/sponsors/"+ids[1], map[string]any{"display_order": -5, "logo_data": b64(pngBytes), "logo_content_type": "image/png"}, asAdmin, nil)
	ts.must(200, "PUT", "/api/admin/content/schedule/"+closing, map[string]any{"start_time": "2026-03-01T08:00:00Z"}, asAdmin, nil)
	faq = envelope[faqOut](t, ts.must(200, "GET", "/v1/public/faq", nil, asSite, nil))
	if faq[0].Question != "Where?" || faq[0].Answer != "Hall" {
		t.Fatalf("faq after update = %+v", faq)
	}
	sponsors = envelope[sponsorOut](t, ts.must(200, "GET", "/v1/public/sponsors", nil, asSite, nil))
	if sponsors[0].Name != "beta labs" || sponsors[0].LogoContentType != "image/png" || sponsors[0].Tier != "silver" {
		t.Fatalf("sponsors after update = %+v", sponsors[0])
	}
	sched = envelope[scheduleOut](t, ts.must(200, "GET", "/v1/public/schedule", nil, asSite, nil))
	if sched[0].ID != closing || sched[0].EndTime != "2026-03-02T18:00:00Z" {
		t.Fatalf("schedule after update = %+v", sched)
	}

	// Delete, then the id is unknown.
	ts.must(200, "DELETE", "/api/admin/content/schedule/"+closing, nil, asAdmin, nil)
	ts.must(404, "DELETE", "/api/admin/content/schedule/"+closing, nil, asAdmin, nil)
	ts.must(404, "PUT", "/api/admin/content/schedule/"+closing, map[string]any{"location": "x"}, asAdmin, nil)
	sched = envelope[scheduleOut](t, ts.must(200, "GET", "/v1/public/schedule", nil, asSite, nil))
	if len(sched) != 1 || sched[0].ID != opening {
		t.Fatalf("schedule after delete = %+v", sched)
	}
}

// errorIs checks a status and that the error message contains want.
func errorIs(t *testing.T, ts *testServer, wantCode int, want, method, path string, body any) {
	t.Helper()
	code, b := ts.do(method, path, body, asAdmin)
	var e struct{ Error string }
	_ = json.Unmarshal(b, &e)
	if code != wantCode || !strings.Contains(e.Error, want) {
		t.Fatalf("%s %s: %d %s, want %d with %q", method, path, code, b, wantCode, want)
	}
}

func TestContentValidationErrors(t *testing.T) {
	ts := startServer(t, withAPIKey)
	var res struct{ ID string }
	ts.must(200, "POST", "/api/admin/content/sponsors", map[string]any{"name": "Keep", "logo_data": b64(pngBytes), "logo_content_type": "image/png"}, asAdmin, &res)
	spID := res.ID
	ts.must(200, "POST", "/api/admin/content/schedule", map[string]any{"event_name": "Keep", "start_time": "2026-03-01T09:00:00Z", "end_time": "2026-03-01T10:00:00Z"}, asAdmin, &res)
	schedID := res.ID
	ts.must(200, "POST", "/api/admin/content/faq", map[string]any{"question": "Keep?", "answer": "Yes"}, asAdmin, &res)
	faqID := res.ID
	snapshot := func() string {
		var out strings.Builder
		for _, k := range engine.ContentKinds {
			out.Write(ts.must(200, "GET", "/v1/public/"+k, nil, asSite, nil))
		}
		return out.String()
	}
	before := snapshot()

	big := make([]byte, engine.MaxLogoBytes+1)
	copy(big, pngBytes)
	sched := func(m map[string]any) map[string]any {
		out := map[string]any{"event_name": "E", "start_time": "2026-03-01T09:00:00Z", "end_time": "2026-03-01T10:00:00Z"}
		for k, v := range m {
			if v == nil {
				delete(out, k)
			} else {
				out[k] = v
			}
		}
		return out
	}
	cases := []struct {
		name, method, path string
		body               any
		code               int
		want               string
	}{
		{"unknown kind", "POST", "/api/admin/content/news", `{}`, 404, "unknown content kind"},
		{"unknown kind on list", "GET", "/api/admin/content/news", nil, 404, "unknown content kind"},
		{"bad id", "PUT", "/api/admin/content/faq/xyz", `{"answer":"a"}`, 400, "invalid id"},
		{"bad id on delete", "DELETE", "/api/admin/content/sponsors/ABCDEF", nil, 400, "invalid id"},
		{"unknown id", "PUT", "/api/admin/content/faq/0123456789abcdef01234567", `{"answer":"a"}`, 404, "no FAQ entry"},
		{"unknown id on delete", "DELETE", "/api/admin/content/sponsors/0123456789abcdef01234567", nil, 404, "no sponsor"},
		{"id of another kind", "DELETE", "/api/admin/content/faq/" + spID, nil, 404, "no FAQ entry"},
		{"empty body", "POST", "/api/admin/content/faq", nil, 400, "body is required"},
		{"broken JSON", "POST", "/api/admin/content/faq", `{"question":`, 400, "invalid JSON"},
		{"wrong type", "POST", "/api/admin/content/sponsors", `{"name":"a","display_order":"first"}`, 400, "display_order"},
		{"missing event_name", "POST", "/api/admin/content/schedule", sched(map[string]any{"event_name": nil}), 400, "event_name is required"},
		{"blank event_name", "POST", "/api/admin/content/schedule", sched(map[string]any{"event_name": " "}), 400, "event_name must not be empty"},
		{"missing start_time", "POST", "/api/admin/content/schedule", sched(map[string]any{"start_time": nil}), 400, "start_time is required"},
		{"missing end_time", "POST", "/api/admin/content/schedule", sched(map[string]any{"end_time": nil}), 400, "end_time is required"},
		{"time not RFC 3339", "POST", "/api/admin/content/schedule", sched(map[string]any{"start_time": "2026-03-01 09:00"}), 400, "start_time must be an RFC 3339 time"},
		{"time without zone", "POST", "/api/admin/content/schedule", sched(map[string]any{"end_time": "2026-03-01T10:00:00"}), 400, "end_time must be an RFC 3339 time"},
		{"time as number", "POST", "/api/admin/content/schedule", sched(map[string]any{"start_time": 1700000000000}), 400, "start_time"},
		{"end before start", "POST", "/api/admin/content/schedule", sched(map[string]any{"end_time": "2026-03-01T08:59:59Z"}), 400, "end_time must not be before start_time"},
		{"update end before start", "PUT", "/api/admin/content/schedule/" + schedID, map[string]any{"end_time": "2026-03-01T08:00:00Z"}, 400, "end_time must not be before"},
		{"missing sponsor name", "POST", "/api/admin/content/sponsors", `{"tier":"gold"}`, 400, "name is required"},
		{"blank sponsor name", "POST", "/api/admin/content/sponsors", `{"name":""}`, 400, "name must not be empty"},
		{"bad website_url", "POST", "/api/admin/content/sponsors", `{"name":"a","website_url":"javascript:alert(1)"}`, 400, "website_url"},
		{"bad base64", "POST", "/api/admin/content/sponsors", map[string]any{"name": "a", "logo_data": "iVBOR*w0KG", "logo_content_type": "image/png"}, 400, "not valid base64"},
		{"data URI", "POST", "/api/admin/content/sponsors", map[string]any{"name": "a", "logo_data": "data:image/png;base64," + b64(pngBytes), "logo_content_type": "image/png"}, 400, "data: prefix"},
		{"logo over 1 MiB", "POST", "/api/admin/content/sponsors", map[string]any{"name": "a", "logo_data": b64(big), "logo_content_type": "image/png"}, 400, "larger than 1048576 bytes"},
		{"type not allowed", "POST", "/api/admin/content/sponsors", map[string]any{"name": "a", "logo_data": b64(pngBytes), "logo_content_type": "image/tiff"}, 400, "not allowed"},
		{"wrong magic bytes", "POST", "/api/admin/content/sponsors", map[string]any{"name": "a", "logo_data": b64(jpegBytes), "logo_content_type": "image/png"}, 400, "does not contain a image/png image"},
		{"svg declared, png sent", "POST", "/api/admin/content/sponsors", map[string]any{"name": "a", "logo_data": b64(pngBytes), "logo_content_type": "image/svg+xml"}, 400, "does not contain"},
		{"logo without type", "POST", "/api/admin/content/sponsors", map[string]any{"name": "a", "logo_data": b64(pngBytes)}, 400, "logo_content_type is required"},
		{"type without logo", "POST", "/api/admin/content/sponsors", map[string]any{"name": "a", "logo_content_type": "image/png"}, 400, "logo_data is empty"},
		{"update with wrong magic", "PUT", "/api/admin/content/sponsors/" + spID, map[string]any{"logo_content_type": "image/gif"}, 400, "does not contain"},
		{"missing question", "POST", "/api/admin/content/faq", `{"answer":"a"}`, 400, "question is required"},
		{"missing answer", "POST", "/api/admin/content/faq", `{"question":"q"}`, 400, "answer is required"},
		{"blank answer update", "PUT", "/api/admin/content/faq/" + faqID, `{"answer":"  "}`, 400, "answer must not be empty"},
		{"bulk without body", "PUT", "/api/admin/content", nil, 400, "body is required"},
		{"bulk missing faq", "PUT", "/api/admin/content", `{"schedule":[],"sponsors":[]}`, 400, `"faq" is required`},
		{"bulk missing schedule", "PUT", "/api/admin/content", `{"sponsors":[],"faq":[]}`, 400, `"schedule" is required`},
		{"bulk null sponsors", "PUT", "/api/admin/content", `{"schedule":[],"sponsors":null,"faq":[]}`, 400, `"sponsors" is required`},
		{"bulk not an object", "PUT", "/api/admin/content", `[1,2]`, 400, "JSON object"},
		{"bulk sponsors not an array", "PUT", "/api/admin/content", `{"schedule":[],"sponsors":{},"faq":[]}`, 400, "sponsors"},
		{"bulk bad time", "PUT", "/api/admin/content", `{"schedule":[{"event_name":"a","start_time":"soon","end_time":"2026-03-01T10:00:00Z"}],"sponsors":[],"faq":[]}`, 400, "schedule[0]: start_time must be an RFC 3339"},
		{"bulk bad logo is atomic", "PUT", "/api/admin/content", map[string]any{
			"schedule": []any{}, "faq": []any{map[string]string{"question": "q", "answer": "a"}},
			"sponsors": []any{map[string]string{"name": "fine"}, map[string]string{"name": "bad", "logo_data": b64(svgBytes), "logo_content_type": "image/webp"}},
		}, 400, "sponsors[1]: logo_data does not contain a image/webp image"},
		{"bulk end before start", "PUT", "/api/admin/content", `{"schedule":[{"event_name":"a","start_time":"2026-03-01T10:00:00Z","end_time":"2026-03-01T09:00:00Z"}],"sponsors":[],"faq":[]}`, 400, "schedule[0]: end_time must not be before"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errorIs(t, ts, tc.code, tc.want, tc.method, tc.path, tc.body)
			if after := snapshot(); after != before {
				t.Fatal("content changed by a refused request")
			}
		})
	}
	// Body limits: an item over 2 MiB is 413.
	huge := `{"name":"a","description":"` + strings.Repeat("x", 2<<20) + `"}`
	code, _ := ts.do("POST", "/api/admin/content/sponsors", huge, asAdmin)
	if code != 413 {
		t.Fatalf("2 MiB item: %d", code)
	}
}

func TestContentBulkReplace(t *testing.T) {
	ts := startServer(t, withAPIKey)
	ts.must(200, "POST", "/api/admin/content/faq", `{"question":"old","answer":"old"}`, asAdmin, nil)
	doc := map[string]any{
		"schedule": []any{
			map[string]any{"event_name": "B", "start_time": "2026-03-01T12:00:00Z", "end_time": "2026-03-01T13:00:00Z", "id": "ignored", "created_at": "ignored"},
			map[string]any{"event_name": "A", "start_time": "2026-03-01T09:00:00Z", "end_time": "2026-03-01T09:00:00Z"},
		},
		"sponsors": []any{map[string]any{"name": "S", "logo_data": b64(svgBytes), "logo_content_type": "image/svg+xml"}},
		"faq":      []any{},
	}
	ts.must(200, "PUT", "/api/admin/content", doc, asAdmin, nil)
	sched := envelope[scheduleOut](t, ts.must(200, "GET", "/v1/public/schedule", nil, asSite, nil))
	if len(sched) != 2 || sched[0].EventName != "A" || sched[1].EventName != "B" || len(sched[1].ID) != 24 {
		t.Fatalf("schedule = %+v", sched)
	}
	if b := ts.must(200, "GET", "/v1/public/faq", nil, asSite, nil); string(b) != `{"data":[]}` {
		t.Fatalf("faq not emptied: %s", b)
	}
	sponsors := envelope[sponsorOut](t, ts.must(200, "GET", "/v1/public/sponsors", nil, asSite, nil))
	if len(sponsors) != 1 || sponsors[0].LogoData != b64(svgBytes) {
		t.Fatalf("sponsors = %+v", sponsors)
	}
	// A round trip: the public bodies form a valid bulk document again.
	var again strings.Builder
	again.WriteString("{")
	for i, k := range engine.ContentKinds {
		var env struct{ Data json.RawMessage }
		json.Unmarshal(ts.must(200, "GET", "/v1/public/"+k, nil, asSite, nil), &env)
		if i > 0 {
			again.WriteString(",")
		}
		fmt.Fprintf(&again, "%q:%s", k, env.Data)
	}
	again.WriteString("}")
	ts.must(200, "PUT", "/api/admin/content", again.String(), asAdmin, nil)
	if n := len(envelope[scheduleOut](t, ts.must(200, "GET", "/v1/public/schedule", nil, asSite, nil))); n != 2 {
		t.Fatalf("round trip lost entries: %d", n)
	}
}

func TestContentHTTPCaching(t *testing.T) {
	ts := startServer(t, withAPIKey)
	logo := make([]byte, 20000)
	copy(logo, pngBytes)
	for i := 0; i < 5; i++ {
		ts.must(200, "POST", "/api/admin/content/sponsors", map[string]any{
			"name": fmt.Sprintf("Sponsor %d", i), "logo_data": b64(logo), "logo_content_type": "image/png",
		}, asAdmin, nil)
	}
	key := map[string]string{"X-API-Key": testAPIKey}
	resp, plain := ts.get("/v1/public/sponsors", key)
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("plain: %d %v", resp.StatusCode, resp.Header)
	}
	if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) || len(etag) < 10 {
		t.Fatalf("ETag %q is not a strong validator", etag)
	}
	if resp.Header.Get("Cache-Control") != publicCacheControl || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("cache headers: %v", resp.Header)
	}
	if len(envelope[sponsorOut](t, plain)) != 5 {
		t.Fatal("wrong sponsor count")
	}

	// gzip: same JSON once decompressed, its own ETag.
	gzHdr := map[string]string{"X-API-Key": testAPIKey, "Accept-Encoding": "br;q=1.0, gzip;q=0.8"}
	resp, zipped := ts.get("/v1/public/sponsors", gzHdr)
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("gzip headers: %v", resp.Header)
	}
	if len(zipped) >= len(plain) {
		t.Fatalf("gzip body %d bytes, plain %d", len(zipped), len(plain))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, plain) {
		t.Fatalf("gzip body does not decompress to the plain body (err %v)", err)
	}
	etagGz := resp.Header.Get("ETag")
	if etagGz == etag || etagGz == "" {
		t.Fatalf("gzip ETag %q vs %q", etagGz, etag)
	}
	// gzip;q=0 means no gzip.
	resp, _ = ts.get("/v1/public/sponsors", map[string]string{"X-API-Key": testAPIKey, "Accept-Encoding": "gzip;q=0, identity"})
	if resp.Header.Get("Content-Encoding") != "" {
		t.Fatal("gzip sent although q=0")
	}

	// 304 for a matching If-None-Match (either variant's tag, weak form, lists, *).
	for _, inm := range []string{etag, etagGz, "W/" + etag, `"nope", ` + etagGz, "*"} {
		for _, h := range []map[string]string{key, gzHdr} {
			hdr := map[string]string{"If-None-Match": inm}
			for k, v := range h {
				hdr[k] = v
			}
			resp, body := ts.get("/v1/public/sponsors", hdr)
			if resp.StatusCode != 304 || len(body) != 0 || resp.Header.Get("ETag") == "" || resp.Header.Get("Cache-Control") == "" {
				t.Fatalf("If-None-Match %s: %d, %d bytes, %v", inm, resp.StatusCode, len(body), resp.Header)
			}
		}
	}
	// A stale tag gets the full body; the key is still checked first.
	resp, _ = ts.get("/v1/public/sponsors", map[string]string{"X-API-Key": testAPIKey, "If-None-Match": `"stale"`})
	if resp.StatusCode != 200 {
		t.Fatalf("stale tag: %d", resp.StatusCode)
	}
	resp, _ = ts.get("/v1/public/sponsors", map[string]string{"If-None-Match": etag})
	if resp.StatusCode != 401 {
		t.Fatalf("304 without key: %d", resp.StatusCode)
	}

	// A change gives a new ETag, and the old one no longer matches.
	ts.must(200, "POST", "/api/admin/content/sponsors", `{"name":"Late"}`, asAdmin, nil)
	resp, body := ts.get("/v1/public/sponsors", map[string]string{"X-API-Key": testAPIKey, "If-None-Match": etag})
	if resp.StatusCode != 200 || resp.Header.Get("ETag") == etag || len(envelope[sponsorOut](t, body)) != 6 {
		t.Fatalf("after change: %d %s", resp.StatusCode, resp.Header.Get("ETag"))
	}
	// Other kinds keep their tags across a sponsor change.
	r1, _ := ts.get("/v1/public/faq", key)
	ts.must(200, "POST", "/api/admin/content/sponsors", `{"name":"Later"}`, asAdmin, nil)
	r2, _ := ts.get("/v1/public/faq", key)
	if r1.Header.Get("ETag") != r2.Header.Get("ETag") {
		t.Fatal("faq ETag changed by a sponsor change")
	}
	// Tiny bodies are not gzipped (it would not be smaller), and the admin list revalidates.
	resp, _ = ts.get("/v1/public/faq", gzHdr)
	if resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("tiny body: %v", resp.Header)
	}
	resp, _ = ts.get("/api/admin/content/sponsors", map[string]string{"Authorization": "Basic " + b64([]byte("admin:"+testPassword))})
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("ETag") == "" {
		t.Fatalf("admin list: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestAcceptsGzip(t *testing.T) {
	for ae, want := range map[string]bool{
		"":                        false,
		"gzip":                    true,
		"GZIP":                    true,
		"gzip, deflate, br":       true,
		"br;q=1.0, gzip;q=0.8":    true,
		"deflate, br":             false,
		"identity":                false,
		"gzip;q=0":                false,
		"gzip; q=0.000":           false,
		"*":                       true,
		"*;q=0":                   false,
		"gzip;q=0, *":             false,
		"x-gzip":                  true,
		"br, *;q=0.1":             true,
		"gzip;level=1;q=0.5":      true,
		"gzipped, notgzip":        false,
		" gzip ; q = 0.3 , br":    true,
		"identity;q=1, gzip;q=0 ": false,
	} {
		if got := acceptsGzip(ae); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", ae, got, want)
		}
	}
}

// A fasthttp client (which looks headers up in its normalised form) sees the same
// validators as net/http.
func TestContentHeadersForFasthttpClients(t *testing.T) {
	ts := startServer(t, withAPIKey)
	ts.must(200, "POST", "/api/admin/content/faq", `{"question":"q","answer":"`+strings.Repeat("long answer ", 50)+`"}`, asAdmin, nil)
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(ts.URL + "/v1/public/faq")
	req.Header.Set("X-API-Key", testAPIKey)
	req.Header.Set("Accept-Encoding", "gzip")
	if err := fasthttp.Do(req, resp); err != nil {
		t.Fatal(err)
	}
	etag := string(resp.Header.Peek("ETag"))
	if resp.StatusCode() != 200 || etag == "" || string(resp.Header.Peek("Content-Encoding")) != "gzip" ||
		string(resp.Header.Peek("Cache-Control")) != publicCacheControl || string(resp.Header.Peek("Vary")) != "Accept-Encoding" {
		t.Fatalf("headers: %d %s", resp.StatusCode(), resp.Header.String())
	}
	req.Header.Set("If-None-Match", etag)
	if err := fasthttp.Do(req, resp); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() != 304 || len(resp.Body()) != 0 {
		t.Fatalf("revalidation: %d, %d bytes", resp.StatusCode(), len(resp.Body()))
	}
}

// While a body is being rebuilt, public reads get the previous complete body; a waiting
// read (the admin side) gets the new one once the build is done.
func TestContentCacheServesPreviousBodyWhileRebuilding(t *testing.T) {
	ts := startServer(t)
	cc := newContentCache(ts.Node)
	k := kindIndex(engine.ContentFAQ)
	old, err := cc.get(k, false)
	if err != nil || string(old.raw) != `{"data":[]}` {
		t.Fatalf("first body %s, %v", old.raw, err)
	}
	ts.must(200, "POST", "/api/admin/content/faq", `{"question":"new?","answer":"yes"}`, asAdmin, nil)
	cc.kinds[k].gen.Add(1)   // the change is durable: stale
	cc.kinds[k].build.Lock() // and a rebuild is under way
	if b, _ := cc.get(k, false); b != old {
		t.Fatal("public read during a rebuild did not get the previous body")
	}
	done := make(chan *contentBody)
	go func() {
		b, _ := cc.get(k, true)
		done <- b
	}()
	cc.kinds[k].build.Unlock()
	fresh := <-done
	if !strings.Contains(string(fresh.raw), "new?") {
		t.Fatalf("waiting read got %s", fresh.raw)
	}
	if b, _ := cc.get(k, false); b != fresh {
		t.Fatal("public read after the rebuild did not get the new body")
	}
}

// Readers racing with writers always get a complete, current-or-newer body whose ETag
// belongs to it (run with -race).
func TestContentConcurrentReadsDuringChanges(t *testing.T) {
	ts := startServer(t, withAPIKey)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			seen := map[string]string{}
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", ts.URL+"/v1/public/faq", nil)
				req.Header.Set("X-API-Key", testAPIKey)
				resp, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var env struct{ Data []faqOut }
				if resp.StatusCode != 200 || json.Unmarshal(b, &env) != nil || env.Data == nil {
					errs <- fmt.Errorf("bad answer %d %s", resp.StatusCode, b)
					return
				}
				tag := resp.Header.Get("ETag")
				if prev, ok := seen[tag]; ok && prev != string(b) {
					errs <- fmt.Errorf("ETag %s used for two bodies", tag)
					return
				}
				seen[tag] = string(b)
			}
		}()
	}
	var res struct{ ID string }
	for i := 0; i < 30; i++ {
		ts.must(200, "POST", "/api/admin/content/faq", map[string]any{"question": fmt.Sprintf("q%d", i), "answer": "a", "display_order": i}, asAdmin, &res)
		// Read-your-writes: once the admin call returned, the public route has it.
		faq := envelope[faqOut](t, ts.must(200, "GET", "/v1/public/faq", nil, asSite, nil))
		if len(faq) != i+1 || faq[i].ID != res.ID {
			t.Fatalf("after create %d: %d entries", i, len(faq))
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestContentSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ts := startServerIn(t, dir, withAPIKey)
	ts.must(200, "PUT", "/api/admin/content", map[string]any{
		"schedule": []any{map[string]any{"event_name": "Hack", "start_time": "2026-03-01T09:00:00Z", "end_time": "2026-03-02T09:00:00Z", "tags": []string{"main"}}},
		"sponsors": []any{map[string]any{"name": "Acme", "logo_data": b64(pngBytes), "logo_content_type": "image/png", "display_order": 3}},
		"faq":      []any{map[string]any{"question": "q", "answer": "a"}},
	}, asAdmin, nil)
	ts.must(200, "POST", "/api/admin/content/faq", `{"question":"q2","answer":"a2","display_order":1}`, asAdmin, nil)
	before := map[string][]byte{}
	etags := map[string]string{}
	for _, k := range engine.ContentKinds {
		resp, b := ts.get("/v1/public/"+k, map[string]string{"X-API-Key": testAPIKey})
		before[k], etags[k] = b, resp.Header.Get("ETag")
	}

	// A backup holds the content too: restore it into a new directory and serve that.
	var bk struct{ Backup string }
	ts.must(200, "POST", "/api/admin/backup", nil, asAdmin, &bk)
	bkPath, err := ts.Node.BackupPath(bk.Backup)
	if err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if err := persist.Restore(bkPath, restored, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	ts.Stop()

	tr := startServerIn(t, restored, withAPIKey)
	for _, k := range engine.ContentKinds {
		if b := tr.must(200, "GET", "/v1/public/"+k, nil, asSite, nil); !bytes.Equal(b, before[k]) {
			t.Fatalf("%s from the restored backup differs", k)
		}
	}
	tr.Stop()

	ts2 := startServerIn(t, dir, withAPIKey)
	for _, k := range engine.ContentKinds {
		// A consumer's cached tag still matches after the restart.
		resp, _ := ts2.get("/v1/public/"+k, map[string]string{"X-API-Key": testAPIKey, "If-None-Match": etags[k]})
		if resp.StatusCode != 304 {
			t.Fatalf("%s: %d after restart with the old ETag", k, resp.StatusCode)
		}
		_, b := ts2.get("/v1/public/"+k, map[string]string{"X-API-Key": testAPIKey})
		if !bytes.Equal(b, before[k]) {
			t.Fatalf("%s after restart:\n%s\nbefore:\n%s", k, b, before[k])
		}
	}
	if n := len(envelope[faqOut](t, before["faq"])); n != 2 {
		t.Fatalf("faq entries %d", n)
	}
	// And after a snapshot (content is part of it) plus another restart.
	if err := ts2.Node.Snapshot(); err != nil {
		t.Fatal(err)
	}
	ts2.Stop()
	ts3 := startServerIn(t, dir, withAPIKey)
	for _, k := range engine.ContentKinds {
		if b := ts3.must(200, "GET", "/v1/public/"+k, nil, asSite, nil); !bytes.Equal(b, before[k]) {
			t.Fatalf("%s after snapshot and restart differs", k)
		}
	}
}

// Judging data and content are separate: judging commands and every judging reset
// (POST /api/admin/reset) leave State.Content as it was.
func TestContentUntouchedByJudgingChanges(t *testing.T) {
	ts := startServer(t, withAPIKey)
	ts.must(200, "PUT", "/api/admin/content", map[string]any{
		"schedule": []any{map[string]any{"event_name": "Hack", "start_time": "2026-03-01T09:00:00Z", "end_time": "2026-03-02T09:00:00Z"}},
		"sponsors": []any{map[string]any{"name": "Acme", "logo_data": b64(pngBytes), "logo_content_type": "image/png"}},
		"faq":      []any{map[string]any{"question": "q", "answer": "a"}},
	}, asAdmin, nil)
	stored := func() string {
		var b []byte
		ts.Node.Read(func(s *engine.State) { b, _ = json.Marshal(s.Content) })
		return string(b)
	}
	before, beforeFAQ := stored(), ts.must(200, "GET", "/v1/public/faq", nil, asSite, nil)
	if !strings.Contains(before, "Acme") {
		t.Fatalf("content not in State.Content: %s", before)
	}
	ts.addJudge("Ada", "ada@example.com", "")
	ts.addProject("Rocket", "AI")
	ts.must(200, "POST", "/api/admin/clock/reset", nil, asAdmin, nil)
	for _, typ := range []string{"rankings", "judging-data", "judges", "projects", "all"} {
		ts.must(200, "POST", "/api/admin/reset", map[string]string{"type": typ}, asAdmin, nil)
		if after := stored(); after != before {
			t.Fatalf("reset %s changed State.Content:\n%s\nbefore:\n%s", typ, after, before)
		}
	}
	if after := stored(); after != before {
		t.Fatal("content changed by judging commands")
	}
	if after := ts.must(200, "GET", "/v1/public/faq", nil, asSite, nil); !bytes.Equal(beforeFAQ, after) {
		t.Fatal("public content changed by judging commands")
	}
}

// ---- Benchmark ----

// benchServer starts a server for a benchmark (the test harness takes a *testing.T).
func benchServer(b *testing.B) (url string, srv *Server, stop func()) {
	dir := b.TempDir()
	log := zerolog.Nop()
	node, err := persist.Open(dir, persist.Options{Log: log})
	if err != nil {
		b.Fatal(err)
	}
	srv = New(Config{DataDir: dir, AdminPassword: testPassword, PublicAPIKey: testAPIKey}, node, log)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Listen(ln) }()
	return "http://" + ln.Addr().String(), srv, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = node.Close()
	}
}

// loadBenchSponsors stores 40 sponsors with 50 KiB logos through the bulk route. Logos
// are PNG-signed random bytes ("png": incompressible, like real PNGs) or SVG text.
func loadBenchSponsors(b *testing.B, url, logoKind string) {
	sponsors := make([]any, 40)
	for i := range sponsors {
		var logo []byte
		ctype := "image/png"
		if logoKind == "png" {
			logo = make([]byte, 50<<10)
			_, _ = rand.Read(logo)
			copy(logo, pngBytes)
		} else {
			ctype = "image/svg+xml"
			var sb strings.Builder
			sb.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1000 1000">`)
			for j := 0; sb.Len() < 50<<10-20; j++ {
				fmt.Fprintf(&sb, `<path d="M%d %d L%d %d Z" fill="#%06x"/>`, j%997, (j*7)%991, (j*13)%983, (j*31)%977, (i*j*2654435761)&0xffffff)
			}
			sb.WriteString(`</svg>`)
			logo = []byte(sb.String())
		}
		sponsors[i] = map[string]any{"name": fmt.Sprintf("Sponsor %02d", i), "tier": "gold", "display_order": i, "logo_data": b64(logo), "logo_content_type": ctype}
	}
	doc, _ := json.Marshal(map[string]any{"schedule": []any{}, "sponsors": sponsors, "faq": []any{}})
	req, _ := http.NewRequest("PUT", url+"/api/admin/content", bytes.NewReader(doc))
	req.Header.Set("Authorization", "Basic "+b64([]byte("admin:"+testPassword)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("load content: %v %v", err, resp)
	}
	resp.Body.Close()
}

// drainBufs are large read buffers for benchmark clients: reading a 2 MB body in 8 KiB
// pieces (io.Discard's own buffer) would make the client, not the server, the cost.
var drainBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// drain reads r to the end through a 256 KiB buffer and returns the byte count.
func drain(r io.Reader) (int64, error) {
	buf := drainBufs.Get().(*[]byte)
	defer drainBufs.Put(buf)
	return io.CopyBuffer(struct{ io.Writer }{io.Discard}, r, *buf)
}

type benchCase struct {
	name, path string
	hdr        map[string]string
	code       int
}

func benchCases(etag string) []benchCase {
	gz := map[string]string{"X-API-Key": testAPIKey, "Accept-Encoding": "gzip"}
	return []benchCase{
		{"heartbeat", "/api/", nil, 200},
		{"sponsors-gzip", "/v1/public/sponsors", gz, 200},
		{"sponsors-revalidate", "/v1/public/sponsors", map[string]string{"X-API-Key": testAPIKey, "Accept-Encoding": "gzip", "If-None-Match": etag}, 304},
	}
}

func logRates(b *testing.B, label string, rates map[string]float64) {
	if nh := rates["nethttp-gzip"]; nh > 0 {
		b.Logf("%s: net/http serving the same gzip'd sponsors body %.0f req/s; Podium %.2f of it", label, nh, rates["sponsors-gzip"]/nh)
	}
	if h := rates["heartbeat"]; h > 0 {
		b.Logf("%s: heartbeat %.0f req/s; sponsors gzip %.0f req/s (ratio %.2f); revalidate (304) %.0f req/s (ratio %.2f)",
			label, h, rates["sponsors-gzip"], rates["sponsors-gzip"]/h, rates["sponsors-revalidate"], rates["sponsors-revalidate"]/h)
	}
}

// BenchmarkPublicSponsors compares GET /v1/public/sponsors (40 sponsors with 50 KiB
// logos, gzip accepted) with the GET /api/ heartbeat on the same server, over real HTTP
// (loopback) with concurrent clients; "revalidate" sends the ETag back and gets a 304.
func BenchmarkPublicSponsors(b *testing.B) {
	for _, logoKind := range []string{"png", "svg"} {
		b.Run(logoKind, func(b *testing.B) {
			url, _, stop := benchServer(b)
			defer stop()
			loadBenchSponsors(b, url, logoKind)
			client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}}
			fetch := func(path string, hdr map[string]string) (int, int, string) {
				req, _ := http.NewRequest("GET", url+path, nil)
				for k, v := range hdr {
					req.Header.Set(k, v)
				}
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return 0, 0, ""
				}
				n, _ := drain(resp.Body)
				resp.Body.Close()
				return resp.StatusCode, int(n), resp.Header.Get("ETag")
			}
			_, size, etag := fetch("/v1/public/sponsors", map[string]string{"X-API-Key": testAPIKey, "Accept-Encoding": "gzip"})
			_, plainSize, _ := fetch("/v1/public/sponsors", map[string]string{"X-API-Key": testAPIKey})
			b.Logf("%s logos: body %d bytes JSON, %d bytes gzip", logoKind, plainSize, size)
			rates := map[string]float64{}
			for _, tc := range benchCases(etag) {
				b.Run(tc.name, func(b *testing.B) {
					b.SetParallelism(4) // 4 x GOMAXPROCS concurrent clients
					start := time.Now()
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if code, _, _ := fetch(tc.path, tc.hdr); code != tc.code {
								b.Errorf("%s: status %d", tc.path, code)
								return
							}
						}
					})
					rate := float64(b.N) / time.Since(start).Seconds()
					b.ReportMetric(rate, "req/s")
					rates[tc.name] = rate
				})
			}
			logRates(b, "HTTP, "+logoKind+" logos", rates)
		})
	}
}

// BenchmarkPublicSponsorsRounds measures the same three requests as
// BenchmarkPublicSponsors (PNG logos), and net/http serving the same gzip'd response
// (netHTTPSponsors; "ratio-nethttp" compares the two), in interleaved rounds: every round runs each case
// for 250 ms with 8 concurrent clients, rotating the order, so that load from other
// processes on a shared machine hits all cases alike. It runs once whatever b.N is:
//
//	go test ./transport -run '^$' -bench PublicSponsorsRounds -benchtime 1x -v
func BenchmarkPublicSponsorsRounds(b *testing.B) {
	url, _, stop := benchServer(b)
	defer stop()
	loadBenchSponsors(b, url, "png")
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}}
	fetch := func(tc benchCase) (int, string) {
		target := url + tc.path
		if strings.HasPrefix(tc.path, "http") {
			target = tc.path
		}
		req, _ := http.NewRequest("GET", target, nil)
		for k, v := range tc.hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Error(err)
			return 0, ""
		}
		_, _ = drain(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("ETag")
	}
	_, etag := fetch(benchCase{path: "/v1/public/sponsors", hdr: map[string]string{"X-API-Key": testAPIKey, "Accept-Encoding": "gzip"}})
	base := netHTTPSponsors(b, url)
	cases := append(benchCases(etag), benchCase{"nethttp-gzip", base + "/v1/public/sponsors", nil, 200})
	const rounds, clients, slice = 12, 8, 250 * time.Millisecond
	counts := make([]int64, len(cases))
	spent := make([]time.Duration, len(cases))
	for r := 0; r < rounds; r++ {
		for j := range cases {
			i := (r + j) % len(cases)
			tc := cases[i]
			var n sync.WaitGroup
			var mu sync.Mutex
			start := time.Now()
			deadline := start.Add(slice)
			for c := 0; c < clients; c++ {
				n.Add(1)
				go func() {
					defer n.Done()
					var done int64
					for time.Now().Before(deadline) {
						if code, _ := fetch(tc); code != tc.code {
							b.Errorf("%s: status %d", tc.path, code)
							return
						}
						done++
					}
					mu.Lock()
					counts[i] += done
					mu.Unlock()
				}()
			}
			n.Wait()
			spent[i] += time.Since(start)
		}
	}
	rates := map[string]float64{}
	for i, tc := range cases {
		rates[tc.name] = float64(counts[i]) / spent[i].Seconds()
		b.ReportMetric(rates[tc.name], tc.name+"-req/s")
	}
	b.ReportMetric(rates["sponsors-gzip"]/rates["nethttp-gzip"], "ratio-nethttp")
	b.ReportMetric(rates["sponsors-gzip"]/rates["heartbeat"], "ratio-gzip")
	b.ReportMetric(rates["sponsors-revalidate"]/rates["heartbeat"], "ratio-304")
	logRates(b, "HTTP rounds, png logos", rates)
}

// netHTTPSponsors starts a plain net/http server that answers every request with the
// gzip'd sponsors response Podium gives (same body and headers), the baseline of
// BenchmarkPublicSponsorsRounds, and returns its base URL.
func netHTTPSponsors(b *testing.B, url string) string {
	req, _ := http.NewRequest("GET", url+"/v1/public/sponsors", nil)
	req.Header.Set("X-API-Key", testAPIKey)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	hdr := resp.Header.Clone()
	hdr.Del("Date")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range hdr {
			w.Header()[k] = v
		}
		_, _ = w.Write(body)
	})}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// BenchmarkPublicSponsorsHandler runs the same requests through the server's handler
// chain in process (middlewares, auth, cache, headers; no socket), to separate the
// server's own work per request from moving the bytes over the network.
func BenchmarkPublicSponsorsHandler(b *testing.B) {
	url, srv, stop := benchServer(b)
	defer stop()
	loadBenchSponsors(b, url, "png")
	handler := srv.app.Handler()
	remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
	serve := func(ctx *fasthttp.RequestCtx, req *fasthttp.Request) int {
		ctx.Response.Reset()
		ctx.Init(req, remote, nil)
		handler(ctx)
		return ctx.Response.StatusCode()
	}
	var etag string
	{
		var req fasthttp.Request
		var ctx fasthttp.RequestCtx
		req.SetRequestURI("/v1/public/sponsors")
		req.Header.Set("X-API-Key", testAPIKey)
		req.Header.Set("Accept-Encoding", "gzip")
		if code := serve(&ctx, &req); code != 200 {
			b.Fatalf("status %d", code)
		}
		etag = string(ctx.Response.Header.Peek("ETag"))
	}
	rates := map[string]float64{}
	for _, tc := range benchCases(etag) {
		b.Run(tc.name, func(b *testing.B) {
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				var req fasthttp.Request
				var ctx fasthttp.RequestCtx
				req.SetRequestURI(tc.path)
				for k, v := range tc.hdr {
					req.Header.Set(k, v)
				}
				for pb.Next() {
					if code := serve(&ctx, &req); code != tc.code {
						b.Errorf("%s: status %d", tc.path, code)
						return
					}
				}
			})
			rate := float64(b.N) / time.Since(start).Seconds()
			b.ReportMetric(rate, "req/s")
			rates[tc.name] = rate
		})
	}
	logRates(b, "in process, png logos", rates)
}
