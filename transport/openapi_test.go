package transport

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"podium/metrics"
)

// openAPIOps lists the operations of transport/openapi.json as "METHOD /path".
func openAPIOps(t *testing.T) map[string]bool {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	out := map[string]bool{}
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options":
				out[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	return out
}

var fiberParam = regexp.MustCompile(`:(\w+)`)

// openAPIPath turns a Fiber route path into its OpenAPI template
// ("/api/judge/:id" → "/api/judge/{id}", "/static/*" → "/static/{path}").
func openAPIPath(p string) string {
	p = fiberParam.ReplaceAllString(p, "{$1}")
	return strings.Replace(p, "*", "{path}", 1)
}

// startOpenAPIServer starts a server wired as cmd/podium wires it (metrics included),
// with the public content API enabled under key "public-key".
func startOpenAPIServer(t *testing.T) *testServer {
	t.Helper()
	m := metrics.New()
	ts := startServerWith(t, m, []Option{WithObserver(m), WithHubObserver(m), WithMetricsHandler(m.Handler())},
		func(c *Config) { c.PublicAPIKey = "public-key" })
	m.WatchState(ts.Node.Read)
	return ts
}

// TestOpenAPIMatchesRoutes checks that every route registered in Fiber is described in
// openapi.json and every described operation is a registered route. HEAD routes are
// Fiber's automatic twins of GET routes and are not described separately.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	ts := startOpenAPIServer(t)
	described := openAPIOps(t)
	registered := map[string]bool{}
	for _, r := range ts.Srv.app.GetRoutes(true) {
		if r.Method == http.MethodHead {
			continue
		}
		registered[r.Method+" "+openAPIPath(r.Path)] = true
	}
	var missing, extra []string
	for op := range registered {
		if !described[op] {
			missing = append(missing, op)
		}
	}
	for op := range described {
		if !registered[op] {
			extra = append(extra, op)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	for _, op := range missing {
		t.Errorf("route %s is not described in transport/openapi.json: add one entry under \"paths\" "+
			"(copy a neighbour; schemas under components/schemas, e.g. Results, ClusterStatus, StarProject)", op)
	}
	for _, op := range extra {
		t.Errorf("transport/openapi.json describes %s, which is not a route", op)
	}
}

// newOpenAPIValidator builds a validator from the embedded document and checks the
// document itself against the OpenAPI 3.1 schema.
func newOpenAPIValidator(t *testing.T) (validator.Validator, *v3.Document) {
	t.Helper()
	doc, err := libopenapi.NewDocument(openAPIDoc)
	if err != nil {
		t.Fatalf("parse openapi.json: %v", err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Fatalf("openapi version %q, want 3.1.0", v)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("build model: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("build validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("openapi.json is not a valid OpenAPI 3.1 document: %v", e)
		}
		t.FailNow()
	}
	return v, &model.Model
}

// apiCheck sends real requests to a real server and validates each response (status,
// content type, body) against openapi.json.
type apiCheck struct {
	ts      *testServer
	v       validator.Validator
	model   *v3.Document
	covered map[string]bool
}

// pathItem finds the described path a concrete path is served by. Like Fiber, the most
// specific template wins ("/api/admin/qr/{track}.png" over "/api/admin/qr/{track}"),
// which the validator's own router cannot tell apart.
func (c *apiCheck) pathItem(path string) (*v3.PathItem, string) {
	best, bestLen := "", -1
	for tmpl := range c.model.Paths.PathItems.KeysFromOldest() {
		if !templateMatches(tmpl, path) {
			continue
		}
		if n := len(fiberParamTmpl.ReplaceAllString(tmpl, "")); n > bestLen {
			best, bestLen = tmpl, n
		}
	}
	if best == "" {
		return nil, ""
	}
	return c.model.Paths.PathItems.GetOrZero(best), best
}

var fiberParamTmpl = regexp.MustCompile(`\{\w+\}`)

// call sends one request; body is nil, a value sent as JSON, or a *multipart.Writer
// result (see form). It fails the test when the status is not want or the response
// does not validate, and returns the body.
func (c *apiCheck) call(want int, method, path string, body any, a auth) []byte {
	c.ts.t.Helper()
	t := c.ts.t
	var raw []byte
	ctype := ""
	switch b := body.(type) {
	case nil:
	case multipartBody:
		raw, ctype = b.data, b.ctype
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		raw, ctype = enc, "application/json"
	}
	newReq := func() *http.Request {
		var rd io.Reader
		if raw != nil {
			rd = bytes.NewReader(raw)
		}
		req, err := http.NewRequest(method, c.ts.URL+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if a.admin {
			req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("admin:"+testPassword)))
		}
		if a.token != "" {
			req.Header.Set("Authorization", "Bearer "+a.token)
		}
		for k, v := range a.hdr {
			req.Header.Set(k, v)
		}
		return req
	}
	item, tmpl := c.pathItem(strings.SplitN(path, "?", 2)[0])
	if item == nil {
		t.Errorf("%s %s: no path of openapi.json matches", method, path)
	}
	// A request the test expects to succeed must match the description too (requests
	// meant to be refused are sent with bad input on purpose).
	if item != nil && want < 400 {
		if ok, errs := c.v.ValidateHttpRequestSyncWithPathItem(newReq(), item, tmpl); !ok {
			for _, e := range errs {
				t.Errorf("%s %s: request does not match openapi.json: %v", method, path, e)
			}
		}
	}
	resp, err := http.DefaultClient.Do(newReq())
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Errorf("%s %s: status %d, want %d; body %.300s", method, path, resp.StatusCode, want, out)
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	vreq, _ := http.NewRequest(method, c.ts.URL+path, nil) // the validator only routes on it
	if item == nil {
		return out
	}
	if ok, errs := c.v.GetResponseBodyValidator().ValidateResponseBodyWithPathItem(vreq, resp, item, tmpl); !ok {
		for _, e := range errs {
			t.Errorf("%s %s (%d): response does not match openapi.json: %v", method, path, resp.StatusCode, e)
		}
	}
	checkDeclared(t, method, path, tmpl, resp.StatusCode, out)
	c.covered[method+" "+path] = true
	return out
}

type multipartBody struct {
	data  []byte
	ctype string
}

// form builds a multipart body with a csv file and string fields.
func form(t *testing.T, csv string, fields map[string]string) multipartBody {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	fw, err := w.CreateFormFile("csv", "data.csv")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write([]byte(csv))
	_ = w.Close()
	return multipartBody{data: buf.Bytes(), ctype: w.FormDataContentType()}
}
