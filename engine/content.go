package engine

import (
	"sort"
	"strings"
	"time"
)

func init() {
	register(
		func() Command { return &CreateScheduleEntry{} },
		func() Command { return &UpdateScheduleEntry{} },
		func() Command { return &CreateSponsor{} },
		func() Command { return &UpdateSponsor{} },
		func() Command { return &CreateFAQEntry{} },
		func() Command { return &UpdateFAQEntry{} },
		func() Command { return &DeleteContent{} },
		func() Command { return &ReplaceContent{} },
	)
}

// The content kinds of docs/behaviour.md#public-content-api, as they appear in management routes.
const (
	ContentSchedule = "schedule"
	ContentSponsors = "sponsors"
	ContentFAQ      = "faq"
)

// ContentKinds lists the content kinds in a fixed order.
var ContentKinds = []string{ContentSchedule, ContentSponsors, ContentFAQ}

// MaxLogoBytes is the largest accepted logo (decoded), docs/behaviour.md#public-content-api.
const MaxLogoBytes = 1 << 20

// LogoContentTypes are the accepted logo media types.
var LogoContentTypes = []string{"image/png", "image/jpeg", "image/webp", "image/gif", "image/svg+xml"}

// Content is the public content of docs/behaviour.md#public-content-api (schedule, sponsors, FAQ). It lives in the
// same state and journal as judging data but no judging reset touches it. Each slice is
// in creation order (document order after a bulk replace); the views sort.
type Content struct {
	Schedule []ScheduleEntry `json:"schedule"`
	Sponsors []Sponsor       `json:"sponsors"`
	FAQ      []FAQEntry      `json:"faq"`
}

// ScheduleEntry is one item of the event schedule. Times are ms since the Unix epoch.
type ScheduleEntry struct {
	ID          ID       `json:"id"`
	EventName   string   `json:"event_name"`
	Description string   `json:"description"`
	StartTime   int64    `json:"start_time"`
	EndTime     int64    `json:"end_time"`
	Location    string   `json:"location"`
	Tags        []string `json:"tags"`
	CreatedAt   int64    `json:"created_at"`
	UpdatedAt   int64    `json:"updated_at"`
}

// Sponsor is one sponsor with its inlined logo (raw base64 and its media type; both
// empty when the sponsor has no logo).
type Sponsor struct {
	ID              ID     `json:"id"`
	Name            string `json:"name"`
	Tier            string `json:"tier"`
	WebsiteURL      string `json:"website_url"`
	Description     string `json:"description"`
	DisplayOrder    int    `json:"display_order"`
	LogoData        string `json:"logo_data"`
	LogoContentType string `json:"logo_content_type"`
	CreatedAt       int64  `json:"created_at"`
	UpdatedAt       int64  `json:"updated_at"`
}

// FAQEntry is one question and answer.
type FAQEntry struct {
	ID           ID     `json:"id"`
	Question     string `json:"question"`
	Answer       string `json:"answer"`
	DisplayOrder int    `json:"display_order"`
	CreatedAt    int64  `json:"created_at"`
	UpdatedAt    int64  `json:"updated_at"`
}

func newContent() Content {
	return Content{Schedule: []ScheduleEntry{}, Sponsors: []Sponsor{}, FAQ: []FAQEntry{}}
}

// fill replaces nil slices after a restore.
func (c *Content) fill() {
	if c.Schedule == nil {
		c.Schedule = []ScheduleEntry{}
	}
	if c.Sponsors == nil {
		c.Sponsors = []Sponsor{}
	}
	if c.FAQ == nil {
		c.FAQ = []FAQEntry{}
	}
	for i := range c.Schedule {
		if c.Schedule[i].Tags == nil {
			c.Schedule[i].Tags = []string{}
		}
	}
}

// hasID reports whether any content entry uses id.
func (c *Content) hasID(id ID) bool {
	return indexContent(c.Schedule, id) >= 0 || indexContent(c.Sponsors, id) >= 0 || indexContent(c.FAQ, id) >= 0
}

// newContentID returns an id unused by judges, projects, content and taken.
func (c *Ctx) newContentID(taken map[ID]bool) ID {
	for {
		id := c.newID()
		if !c.state.Content.hasID(id) && !taken[id] {
			if taken != nil {
				taken[id] = true
			}
			return id
		}
	}
}

// ---- Commands ----

// CreateScheduleEntry adds a schedule entry. Result: the new ID.
type CreateScheduleEntry struct {
	Entry ScheduleFields `json:"entry"`
}

// Kind implements Command.
func (*CreateScheduleEntry) Kind() string { return "content.schedule.create" }

func (cmd *CreateScheduleEntry) apply(s *State, c *Ctx) (any, error) {
	e, err := createContent(c, &s.Content.Schedule, buildSchedule, cmd.Entry)
	if err != nil {
		return nil, err
	}
	c.logf("added schedule entry %s", e.EventName)
	c.changed("content", e.ID)
	return e.ID, nil
}

// UpdateScheduleEntry changes the given fields of a schedule entry.
type UpdateScheduleEntry struct {
	ID    ID             `json:"id"`
	Entry ScheduleFields `json:"entry"`
}

// Kind implements Command.
func (*UpdateScheduleEntry) Kind() string { return "content.schedule.update" }

func (cmd *UpdateScheduleEntry) apply(s *State, c *Ctx) (any, error) {
	e, err := updateContent(c, s.Content.Schedule, cmd.ID, "schedule entry", buildSchedule, cmd.Entry)
	if err != nil {
		return nil, err
	}
	c.logf("updated schedule entry %s", e.EventName)
	c.changed("content", e.ID)
	return nil, nil
}

// CreateSponsor adds a sponsor. Result: the new ID.
type CreateSponsor struct {
	Sponsor SponsorFields `json:"sponsor"`
}

// Kind implements Command.
func (*CreateSponsor) Kind() string { return "content.sponsor.create" }

func (cmd *CreateSponsor) apply(s *State, c *Ctx) (any, error) {
	e, err := createContent(c, &s.Content.Sponsors, buildSponsor, cmd.Sponsor)
	if err != nil {
		return nil, err
	}
	c.logf("added sponsor %s", e.Name)
	c.changed("content", e.ID)
	return e.ID, nil
}

// UpdateSponsor changes the given fields of a sponsor.
type UpdateSponsor struct {
	ID      ID            `json:"id"`
	Sponsor SponsorFields `json:"sponsor"`
}

// Kind implements Command.
func (*UpdateSponsor) Kind() string { return "content.sponsor.update" }

func (cmd *UpdateSponsor) apply(s *State, c *Ctx) (any, error) {
	e, err := updateContent(c, s.Content.Sponsors, cmd.ID, "sponsor", buildSponsor, cmd.Sponsor)
	if err != nil {
		return nil, err
	}
	c.logf("updated sponsor %s", e.Name)
	c.changed("content", e.ID)
	return nil, nil
}

// CreateFAQEntry adds a FAQ entry. Result: the new ID.
type CreateFAQEntry struct {
	Entry FAQFields `json:"entry"`
}

// Kind implements Command.
func (*CreateFAQEntry) Kind() string { return "content.faq.create" }

func (cmd *CreateFAQEntry) apply(s *State, c *Ctx) (any, error) {
	e, err := createContent(c, &s.Content.FAQ, buildFAQ, cmd.Entry)
	if err != nil {
		return nil, err
	}
	c.logf("added FAQ entry %s", e.ID)
	c.changed("content", e.ID)
	return e.ID, nil
}

// UpdateFAQEntry changes the given fields of a FAQ entry.
type UpdateFAQEntry struct {
	ID    ID        `json:"id"`
	Entry FAQFields `json:"entry"`
}

// Kind implements Command.
func (*UpdateFAQEntry) Kind() string { return "content.faq.update" }

func (cmd *UpdateFAQEntry) apply(s *State, c *Ctx) (any, error) {
	e, err := updateContent(c, s.Content.FAQ, cmd.ID, "FAQ entry", buildFAQ, cmd.Entry)
	if err != nil {
		return nil, err
	}
	c.logf("updated FAQ entry %s", e.ID)
	c.changed("content", e.ID)
	return nil, nil
}

// DeleteContent removes one entry of a content kind (ContentSchedule, ContentSponsors
// or ContentFAQ).
type DeleteContent struct {
	Content string `json:"content"`
	ID      ID     `json:"id"`
}

// Kind implements Command.
func (*DeleteContent) Kind() string { return "content.delete" }

func (cmd *DeleteContent) apply(s *State, c *Ctx) (any, error) {
	switch cmd.Content {
	case ContentSchedule:
		e, err := deleteContent(&s.Content.Schedule, cmd.ID, "schedule entry")
		if err != nil {
			return nil, err
		}
		c.logf("deleted schedule entry %s", e.EventName)
	case ContentSponsors:
		e, err := deleteContent(&s.Content.Sponsors, cmd.ID, "sponsor")
		if err != nil {
			return nil, err
		}
		c.logf("deleted sponsor %s", e.Name)
	case ContentFAQ:
		if _, err := deleteContent(&s.Content.FAQ, cmd.ID, "FAQ entry"); err != nil {
			return nil, err
		}
		c.logf("deleted FAQ entry %s", cmd.ID)
	default:
		return nil, invalidf("unknown content kind %q", cmd.Content)
	}
	c.changed("content", cmd.ID)
	return nil, nil
}

// ReplaceContent replaces the schedule, sponsors and FAQ all at once (the bulk
// document). Every entry gets a new id; an empty list empties that kind. Atomic: one
// invalid entry refuses the whole document.
type ReplaceContent struct {
	Schedule []ScheduleFields `json:"schedule"`
	Sponsors []SponsorFields  `json:"sponsors"`
	FAQ      []FAQFields      `json:"faq"`
}

// Kind implements Command.
func (*ReplaceContent) Kind() string { return "content.replace" }

func (cmd *ReplaceContent) apply(s *State, c *Ctx) (any, error) {
	schedule, err := buildAllContent("schedule", cmd.Schedule, buildSchedule)
	if err != nil {
		return nil, err
	}
	sponsors, err := buildAllContent("sponsors", cmd.Sponsors, buildSponsor)
	if err != nil {
		return nil, err
	}
	faq, err := buildAllContent("faq", cmd.FAQ, buildFAQ)
	if err != nil {
		return nil, err
	}
	// Valid: assign ids (unused by the old content too, so stale links never resolve to
	// a different entry) and swap the lists in.
	taken := map[ID]bool{}
	ids := make([]ID, 0, len(schedule)+len(sponsors)+len(faq))
	ids = stampNewContent(c, schedule, taken, ids)
	ids = stampNewContent(c, sponsors, taken, ids)
	ids = stampNewContent(c, faq, taken, ids)
	s.Content = Content{Schedule: schedule, Sponsors: sponsors, FAQ: faq}
	c.logf("replaced public content: %d schedule entries, %d sponsors, %d FAQ entries", len(schedule), len(sponsors), len(faq))
	c.changed("content", ids...)
	return nil, nil
}

func itemErr(kind string, i int, err *Error) *Error {
	return &Error{Kind: err.Kind, Msg: kind + "[" + itoa(i) + "]: " + err.Msg}
}

// ---- Code shared by the content kinds ----

// contentEntry is a pointer to an entry of one content kind (*ScheduleEntry, *Sponsor,
// *FAQEntry): what the code shared by the kinds needs of it.
type contentEntry[T any] interface {
	*T
	entryID() ID
	created(id ID, now int64) // a new entry: its id, both times now
	updated(now int64)
}

func (e *ScheduleEntry) entryID() ID { return e.ID }
func (e *Sponsor) entryID() ID       { return e.ID }
func (e *FAQEntry) entryID() ID      { return e.ID }

func (e *ScheduleEntry) created(id ID, now int64) { e.ID, e.CreatedAt, e.UpdatedAt = id, now, now }
func (e *Sponsor) created(id ID, now int64)       { e.ID, e.CreatedAt, e.UpdatedAt = id, now, now }
func (e *FAQEntry) created(id ID, now int64)      { e.ID, e.CreatedAt, e.UpdatedAt = id, now, now }

func (e *ScheduleEntry) updated(now int64) { e.UpdatedAt = now }
func (e *Sponsor) updated(now int64)       { e.UpdatedAt = now }
func (e *FAQEntry) updated(now int64)      { e.UpdatedAt = now }

// createContent builds a new entry from f and appends it to *list with a fresh id.
func createContent[T, F any, P contentEntry[T]](c *Ctx, list *[]T, build func(F, T, bool) (T, *Error), f F) (T, *Error) {
	var zero T
	e, err := build(f, zero, true)
	if err != nil {
		return zero, err
	}
	P(&e).created(c.newContentID(nil), c.Time)
	*list = append(*list, e)
	return e, nil
}

// updateContent applies f to the entry id of list and returns the stored result; what
// names the kind when there is no such entry.
func updateContent[T, F any, P contentEntry[T]](c *Ctx, list []T, id ID, what string, build func(F, T, bool) (T, *Error), f F) (T, *Error) {
	var zero T
	i := indexContent[T, P](list, id)
	if i < 0 {
		return zero, notFoundf("no %s with id %s", what, id)
	}
	e, err := build(f, list[i], false)
	if err != nil {
		return zero, err
	}
	P(&e).updated(c.Time)
	list[i] = e
	return e, nil
}

// deleteContent removes the entry id from *list and returns it; what names the kind
// when there is no such entry.
func deleteContent[T any, P contentEntry[T]](list *[]T, id ID, what string) (T, *Error) {
	var zero T
	i := indexContent[T, P](*list, id)
	if i < 0 {
		return zero, notFoundf("no %s with id %s", what, id)
	}
	e := (*list)[i]
	*list = append((*list)[:i:i], (*list)[i+1:]...)
	return e, nil
}

// buildAllContent builds the new entries of one kind of a bulk document; an error names
// the entry as kind[i].
func buildAllContent[T, F any](kind string, fs []F, build func(F, T, bool) (T, *Error)) ([]T, *Error) {
	out := make([]T, 0, len(fs))
	var zero T
	for i, f := range fs {
		e, err := build(f, zero, true)
		if err != nil {
			return nil, itemErr(kind, i, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// stampNewContent gives every entry of list a fresh id (not in taken, then added to it)
// and both times now, and returns ids with the new ids appended.
func stampNewContent[T any, P contentEntry[T]](c *Ctx, list []T, taken map[ID]bool, ids []ID) []ID {
	for i := range list {
		id := c.newContentID(taken)
		P(&list[i]).created(id, c.Time)
		ids = append(ids, id)
	}
	return ids
}

// indexContent returns the position of the entry id in list, or -1.
func indexContent[T any, P contentEntry[T]](list []T, id ID) int {
	for i := range list {
		if P(&list[i]).entryID() == id {
			return i
		}
	}
	return -1
}

// ---- Views (the wire form of docs/behaviour.md#public-content-api) ----

// ContentTime formats ms as an RFC 3339 UTC time (fractional seconds only when non-zero).
func ContentTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}

// ScheduleView is a schedule entry on the wire.
type ScheduleView struct {
	ID          ID       `json:"id"`
	EventName   string   `json:"event_name"`
	Description string   `json:"description"`
	StartTime   string   `json:"start_time"`
	EndTime     string   `json:"end_time"`
	Location    string   `json:"location"`
	Tags        []string `json:"tags"`
	CreatedAt   string   `json:"created_at"`
	UpdatedAt   string   `json:"updated_at"`
}

// SponsorView is a sponsor on the wire.
type SponsorView struct {
	ID              ID     `json:"id"`
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

// FAQView is a FAQ entry on the wire.
type FAQView struct {
	ID           ID     `json:"id"`
	Question     string `json:"question"`
	Answer       string `json:"answer"`
	DisplayOrder int    `json:"display_order"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
}

// ScheduleView returns the schedule sorted by start time (ties: creation order). The
// result shares no mutable memory with the state.
func (s *State) ScheduleView() []ScheduleView {
	list := s.Content.Schedule
	out := make([]ScheduleView, len(list))
	for i, e := range list {
		out[i] = ScheduleView{
			ID: e.ID, EventName: e.EventName, Description: e.Description,
			StartTime: ContentTime(e.StartTime), EndTime: ContentTime(e.EndTime),
			Location: e.Location, Tags: append(make([]string, 0, len(e.Tags)), e.Tags...),
			CreatedAt: ContentTime(e.CreatedAt), UpdatedAt: ContentTime(e.UpdatedAt),
		}
	}
	idx := sortedIndex(len(list), func(a, b int) bool { return list[a].StartTime < list[b].StartTime })
	return permute(out, idx)
}

// SponsorsView returns the sponsors sorted by display_order, then name (case-insensitive,
// then byte order), then creation order.
func (s *State) SponsorsView() []SponsorView {
	list := s.Content.Sponsors
	out := make([]SponsorView, len(list))
	lower := make([]string, len(list))
	for i, e := range list {
		lower[i] = strings.ToLower(e.Name)
		out[i] = SponsorView{
			ID: e.ID, Name: e.Name, Tier: e.Tier, WebsiteURL: e.WebsiteURL,
			Description: e.Description, DisplayOrder: e.DisplayOrder, LogoData: e.LogoData,
			LogoContentType: e.LogoContentType,
			CreatedAt:       ContentTime(e.CreatedAt), UpdatedAt: ContentTime(e.UpdatedAt),
		}
	}
	idx := sortedIndex(len(list), func(a, b int) bool {
		if list[a].DisplayOrder != list[b].DisplayOrder {
			return list[a].DisplayOrder < list[b].DisplayOrder
		}
		if lower[a] != lower[b] {
			return lower[a] < lower[b]
		}
		return list[a].Name < list[b].Name
	})
	return permute(out, idx)
}

// FAQView returns the FAQ sorted by display_order (ties: creation order).
func (s *State) FAQView() []FAQView {
	list := s.Content.FAQ
	out := make([]FAQView, len(list))
	for i, e := range list {
		out[i] = FAQView{
			ID: e.ID, Question: e.Question, Answer: e.Answer, DisplayOrder: e.DisplayOrder,
			CreatedAt: ContentTime(e.CreatedAt), UpdatedAt: ContentTime(e.UpdatedAt),
		}
	}
	idx := sortedIndex(len(list), func(a, b int) bool { return list[a].DisplayOrder < list[b].DisplayOrder })
	return permute(out, idx)
}

// sortedIndex returns 0..n-1 stably sorted by less.
func sortedIndex(n int, less func(a, b int) bool) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return less(idx[a], idx[b]) })
	return idx
}

func permute[T any](in []T, idx []int) []T {
	out := make([]T, len(in))
	for i, j := range idx {
		out[i] = in[j]
	}
	return out
}

// clone deep-copies the content lists (strings, logos included, are shared).
func (c Content) clone() Content {
	out := Content{
		Schedule: cloneSlice(c.Schedule),
		Sponsors: cloneSlice(c.Sponsors),
		FAQ:      cloneSlice(c.FAQ),
	}
	for i := range out.Schedule {
		out.Schedule[i].Tags = cloneSlice(out.Schedule[i].Tags)
	}
	return out
}
