package transport

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

// Cache-Control of the public content routes. The consumers are marketing-site servers
// that keep their own copy: they may reuse it for a minute without asking, then
// revalidate with If-None-Match (a 304 carries no body). "private" keeps shared caches
// (CDNs, proxies) from storing a response that was only served against an API key.
const publicCacheControl = "private, max-age=60"

// adminCacheControl: admin screens must see their own edits at once; they revalidate
// every time.
const adminCacheControl = "no-cache"

var (
	publicCacheControlBytes = []byte(publicCacheControl)
	adminCacheControlBytes  = []byte(adminCacheControl)
)

var (
	errAPIKey         = &httpError{status: fiber.StatusUnauthorized, msg: "invalid or missing API key"}
	errPublicDisabled = &httpError{status: fiber.StatusServiceUnavailable, msg: "public content API is disabled"}
)

// contentHandlers serves the public content API and its management routes (docs/behaviour.md#public-content-api).
type contentHandlers struct {
	s       *Server
	cache   *contentCache
	keyHash [32]byte // SHA-256 of PUBLIC_API_KEY (compared in constant time)
	keySet  bool
}

// routesContent registers the public content API and its management routes (docs/behaviour.md#public-content-api).
func (s *Server) routesContent(r fiber.Router) {
	h := &contentHandlers{s: s, cache: newContentCache(s.node), keySet: s.cfg.PublicAPIKey != ""}
	h.keyHash = sha256.Sum256([]byte(s.cfg.PublicAPIKey))
	s.watchReplicatedChanges(h.cache) // cluster nodes: content changed through other nodes
	for i, kind := range engine.ContentKinds {
		r.Get("/v1/public/"+kind, h.public(i))
	}
	r.Get("/v1/public/winners", h.winners)
	r.Get("/api/admin/public-api", s.adminAuth, h.status)
	r.Put("/api/admin/content", s.adminAuth, h.replace)
	r.Get("/api/admin/content/:kind", s.adminAuth, h.list)
	r.Post("/api/admin/content/:kind", s.adminAuth, h.create)
	r.Put("/api/admin/content/:kind/:id", s.adminAuth, h.update)
	r.Delete("/api/admin/content/:kind/:id", s.adminAuth, h.delete)
}

// public answers GET /v1/public/{kind} from the cache.
func (h *contentHandlers) public(k int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if !h.keySet {
			return errPublicDisabled
		}
		got := sha256.Sum256(c.Request().Header.Peek("X-API-Key"))
		if subtle.ConstantTimeCompare(got[:], h.keyHash[:]) != 1 {
			return errAPIKey
		}
		b, err := h.cache.get(k, false)
		if err != nil {
			return err
		}
		return b.send(c, publicCacheControlBytes)
	}
}

// winners answers GET /v1/public/winners (docs/behaviour.md#after-judging) under the
// content API's rules: key, ETag, 304, gzip, encoded once per change.
func (h *contentHandlers) winners(c *fiber.Ctx) error {
	if !h.keySet {
		return errPublicDisabled
	}
	got := sha256.Sum256(c.Request().Header.Peek("X-API-Key"))
	if subtle.ConstantTimeCompare(got[:], h.keyHash[:]) != 1 {
		return errAPIKey
	}
	b, err := h.s.winnerBodies.get(1)
	if err != nil {
		return err
	}
	return b.send(c, publicCacheControlBytes)
}

// status answers GET /api/admin/public-api: whether the public content API serves
// (PUBLIC_API_KEY set) or answers 503, for the dashboard's Site content tab
// (docs/behaviour.md#public-api-state-on-the-dashboard). The key itself is never sent.
func (h *contentHandlers) status(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"enabled": h.keySet, "env": "PUBLIC_API_KEY", "header": "X-API-Key",
		"paths": []string{"/v1/public/schedule", "/v1/public/sponsors", "/v1/public/faq", "/v1/public/winners"}})
}

// kindParam returns the :kind of a management route (404 when unknown).
func kindParam(c *fiber.Ctx) (string, int, error) {
	kind := c.Params("kind")
	k := kindIndex(kind)
	if k < 0 {
		return "", -1, notFound("unknown content kind %q: want schedule, sponsors or faq", kind)
	}
	return kind, k, nil
}

// list answers GET /api/admin/content/{kind} with the public route's body.
func (h *contentHandlers) list(c *fiber.Ctx) error {
	_, k, err := kindParam(c)
	if err != nil {
		return err
	}
	b, err := h.cache.get(k, true)
	if err != nil {
		return err
	}
	return b.send(c, adminCacheControlBytes)
}

// submit runs a content command and, unless the engine refused it (nothing changed),
// rebuilds the cached bodies of the kinds it touched. The command is durable by then.
func (h *contentHandlers) submit(c *fiber.Ctx, cmd engine.Command, kinds ...int) (any, error) {
	res, err := h.s.submit(c, cmd)
	var refused *engine.Error
	if !errors.As(err, &refused) {
		h.cache.invalidate(kinds...)
	}
	return res, err
}

func (h *contentHandlers) create(c *fiber.Ctx) error {
	kind, k, err := kindParam(c)
	if err != nil {
		return err
	}
	cmd, err := entryCommand(c, kind, nil)
	if err != nil {
		return err
	}
	res, err := h.submit(c, cmd, k)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": 1, "id": res.(engine.ID)})
}

func (h *contentHandlers) update(c *fiber.Ctx) error {
	kind, k, err := kindParam(c)
	if err != nil {
		return err
	}
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	cmd, err := entryCommand(c, kind, &id)
	if err != nil {
		return err
	}
	if _, err := h.submit(c, cmd, k); err != nil {
		return err
	}
	return ok(c)
}

// entryCommand decodes the request body as an entry of kind and returns the command that
// creates it (id nil) or that updates the entry *id with it.
func entryCommand(c *fiber.Ctx, kind string, id *engine.ID) (engine.Command, error) {
	switch kind {
	case engine.ContentSchedule:
		var it scheduleItem
		if err := bindJSON(c, &it, false); err != nil {
			return nil, err
		}
		if id != nil && it == (scheduleItem{}) {
			return nil, errNothingToChange("event_name, description, start_time, end_time, location, tags")
		}
		f, err := it.fields()
		if err != nil {
			return nil, badRequest("%s", err.Error())
		}
		if id == nil {
			return &engine.CreateScheduleEntry{Entry: f}, nil
		}
		return &engine.UpdateScheduleEntry{ID: *id, Entry: f}, nil
	case engine.ContentSponsors:
		var it sponsorItem
		if err := bindJSON(c, &it, false); err != nil {
			return nil, err
		}
		if id != nil && it == (sponsorItem{}) {
			return nil, errNothingToChange("name, tier, website_url, description, display_order, logo_data, logo_content_type")
		}
		if id == nil {
			return &engine.CreateSponsor{Sponsor: it.fields()}, nil
		}
		return &engine.UpdateSponsor{ID: *id, Sponsor: it.fields()}, nil
	default:
		var it faqItem
		if err := bindJSON(c, &it, false); err != nil {
			return nil, err
		}
		if id != nil && it == (faqItem{}) {
			return nil, errNothingToChange("question, answer, display_order")
		}
		if id == nil {
			return &engine.CreateFAQEntry{Entry: it.fields()}, nil
		}
		return &engine.UpdateFAQEntry{ID: *id, Entry: it.fields()}, nil
	}
}

func (h *contentHandlers) delete(c *fiber.Ctx) error {
	kind, k, err := kindParam(c)
	if err != nil {
		return err
	}
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	if _, err := h.submit(c, &engine.DeleteContent{Content: kind, ID: id}, k); err != nil {
		return err
	}
	return ok(c)
}

// replace answers PUT /api/admin/content: the bulk document replaces all three kinds.
func (h *contentHandlers) replace(c *fiber.Ctx) error {
	body, err := jsonBody(c)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("request body is required")
	}
	cmd, err := ParseContentDocument(body)
	if err != nil {
		return err
	}
	if _, err := h.submit(c, cmd, 0, 1, 2); err != nil {
		return err
	}
	return ok(c)
}

// errNothingToChange refuses an update that names no field (PUT with {}): updates
// change only the fields given, so such a request could only be a mistake.
func errNothingToChange(fields string) error {
	return badRequest("the body names no field to change (give at least one of: %s)", fields)
}

// ---- Payloads ----

// scheduleItem is a schedule entry in a request. Times are RFC 3339 strings.
type scheduleItem struct {
	EventName   *string   `json:"event_name"`
	Description *string   `json:"description"`
	StartTime   *string   `json:"start_time"`
	EndTime     *string   `json:"end_time"`
	Location    *string   `json:"location"`
	Tags        *[]string `json:"tags"`
}

// fields converts the item into engine fields, parsing its times. The engine checks
// required fields and the rest of docs/behaviour.md#public-content-api.
func (it *scheduleItem) fields() (engine.ScheduleFields, error) {
	f := engine.ScheduleFields{EventName: it.EventName, Description: it.Description, Location: it.Location, Tags: it.Tags}
	var err error
	if f.StartTime, err = parseContentTime("start_time", it.StartTime); err != nil {
		return f, err
	}
	if f.EndTime, err = parseContentTime("end_time", it.EndTime); err != nil {
		return f, err
	}
	return f, nil
}

// parseContentTime parses an RFC 3339 time (any offset; stored as UTC milliseconds).
func parseContentTime(field string, v *string) (*int64, error) {
	if v == nil {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(*v))
	if err != nil {
		return nil, fmt.Errorf("%s must be an RFC 3339 time such as 2026-03-01T09:30:00Z", field)
	}
	ms := t.UnixMilli()
	return &ms, nil
}

// sponsorItem is a sponsor in a request.
type sponsorItem struct {
	Name            *string `json:"name"`
	Tier            *string `json:"tier"`
	WebsiteURL      *string `json:"website_url"`
	Description     *string `json:"description"`
	DisplayOrder    *int    `json:"display_order"`
	LogoData        *string `json:"logo_data"`
	LogoContentType *string `json:"logo_content_type"`
}

func (it *sponsorItem) fields() engine.SponsorFields {
	return engine.SponsorFields{
		Name: it.Name, Tier: it.Tier, WebsiteURL: it.WebsiteURL, Description: it.Description,
		DisplayOrder: it.DisplayOrder, LogoData: it.LogoData, LogoContentType: it.LogoContentType,
	}
}

// faqItem is a FAQ entry in a request.
type faqItem struct {
	Question     *string `json:"question"`
	Answer       *string `json:"answer"`
	DisplayOrder *int    `json:"display_order"`
}

func (it *faqItem) fields() engine.FAQFields {
	return engine.FAQFields{Question: it.Question, Answer: it.Answer, DisplayOrder: it.DisplayOrder}
}

// contentDocument is the bulk document {schedule, sponsors, faq}; all three keys are
// required and must be arrays. Entry ids and timestamps in it are ignored.
type contentDocument struct {
	Schedule *[]scheduleItem `json:"schedule"`
	Sponsors *[]sponsorItem  `json:"sponsors"`
	FAQ      *[]faqItem      `json:"faq"`
}

// ParseContentDocument decodes the bulk content document of docs/behaviour.md#public-content-api into the command
// that replaces all public content. Errors are 400s with a readable message (the CLI
// prints them as they are).
func ParseContentDocument(body []byte) (*engine.ReplaceContent, error) {
	var doc contentDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, badRequest("field %q has the wrong type (want %s)", te.Field, te.Type)
		}
		if errors.As(err, &te) {
			return nil, badRequest("the content document must be a JSON object {schedule, sponsors, faq}")
		}
		return nil, badRequest("invalid JSON body")
	}
	for _, k := range []struct {
		name string
		ok   bool
	}{{"schedule", doc.Schedule != nil}, {"sponsors", doc.Sponsors != nil}, {"faq", doc.FAQ != nil}} {
		if !k.ok {
			return nil, badRequest("field %q is required (an array; [] empties it)", k.name)
		}
	}
	cmd := &engine.ReplaceContent{
		Schedule: make([]engine.ScheduleFields, 0, len(*doc.Schedule)),
		Sponsors: make([]engine.SponsorFields, 0, len(*doc.Sponsors)),
		FAQ:      make([]engine.FAQFields, 0, len(*doc.FAQ)),
	}
	for i := range *doc.Schedule {
		f, err := (*doc.Schedule)[i].fields()
		if err != nil {
			return nil, badRequest("schedule[%d]: %s", i, err.Error())
		}
		cmd.Schedule = append(cmd.Schedule, f)
	}
	for i := range *doc.Sponsors {
		cmd.Sponsors = append(cmd.Sponsors, (*doc.Sponsors)[i].fields())
	}
	for i := range *doc.FAQ {
		cmd.FAQ = append(cmd.FAQ, (*doc.FAQ)[i].fields())
	}
	return cmd, nil
}
