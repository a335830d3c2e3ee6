package engine

// Content is the public content of SPEC §9 (schedule, sponsors, FAQ). It lives in the
// same state and journal as judging data but no judging reset touches it.
type Content struct {
	Schedule []ScheduleEntry `json:"schedule"`
	Sponsors []Sponsor       `json:"sponsors"`
	FAQ      []FAQEntry      `json:"faq"`
}

// ScheduleEntry is one item of the event schedule.
type ScheduleEntry struct {
	ID ID `json:"id"`
}

// Sponsor is one sponsor with its inlined logo.
type Sponsor struct {
	ID ID `json:"id"`
}

// FAQEntry is one question and answer.
type FAQEntry struct {
	ID ID `json:"id"`
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
}

// clone copies the content lists (entries are replaced, never changed in place).
func (c Content) clone() Content {
	return Content{
		Schedule: cloneSlice(c.Schedule),
		Sponsors: cloneSlice(c.Sponsors),
		FAQ:      cloneSlice(c.FAQ),
	}
}
