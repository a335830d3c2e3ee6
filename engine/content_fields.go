package engine

import (
	"strings"
	"unicode/utf8"
)

// The settable fields of content entries and their validation (docs/behaviour.md#public-content-api).

// ---- Fields (what a command sets) ----

// ScheduleFields are the settable fields of a schedule entry. A nil field is "not
// given": required on create (event_name, start_time, end_time), unchanged on update.
// Times are ms since the Unix epoch.
type ScheduleFields struct {
	EventName   *string   `json:"event_name,omitempty"`
	Description *string   `json:"description,omitempty"`
	StartTime   *int64    `json:"start_time,omitempty"`
	EndTime     *int64    `json:"end_time,omitempty"`
	Location    *string   `json:"location,omitempty"`
	Tags        *[]string `json:"tags,omitempty"`
}

// SponsorFields are the settable fields of a sponsor (nil = not given; name is required
// on create).
type SponsorFields struct {
	Name            *string `json:"name,omitempty"`
	Tier            *string `json:"tier,omitempty"`
	WebsiteURL      *string `json:"website_url,omitempty"`
	Description     *string `json:"description,omitempty"`
	DisplayOrder    *int    `json:"display_order,omitempty"`
	LogoData        *string `json:"logo_data,omitempty"`
	LogoContentType *string `json:"logo_content_type,omitempty"`
}

// FAQFields are the settable fields of a FAQ entry (nil = not given; question and
// answer are required on create).
type FAQFields struct {
	Question     *string `json:"question,omitempty"`
	Answer       *string `json:"answer,omitempty"`
	DisplayOrder *int    `json:"display_order,omitempty"`
}

// setStr copies *p into dst when p is given.
func setStr(dst *string, p *string) {
	if p != nil {
		*dst = *p
	}
}

// requireContent reports a missing required field on create.
func requireContent(field string, present bool) *Error {
	if !present {
		return invalidf("%s is required", field)
	}
	return nil
}

func checkRequiredText(field, v string, max int) *Error {
	if strings.TrimSpace(v) == "" {
		return invalidf("%s must not be empty", field)
	}
	return checkLen(field, v, max)
}

func checkLen(field, v string, max int) *Error {
	if utf8.RuneCountInString(v) > max {
		return invalidf("%s is longer than %d characters", field, max)
	}
	return nil
}

// buildSchedule applies f to base (a new entry on create) and validates the result.
func buildSchedule(f ScheduleFields, base ScheduleEntry, create bool) (ScheduleEntry, *Error) {
	if create {
		for _, r := range []struct {
			name string
			ok   bool
		}{{"event_name", f.EventName != nil}, {"start_time", f.StartTime != nil}, {"end_time", f.EndTime != nil}} {
			if err := requireContent(r.name, r.ok); err != nil {
				return base, err
			}
		}
	}
	e := base
	setStr(&e.EventName, f.EventName)
	setStr(&e.Description, f.Description)
	setStr(&e.Location, f.Location)
	if f.StartTime != nil {
		e.StartTime = *f.StartTime
	}
	if f.EndTime != nil {
		e.EndTime = *f.EndTime
	}
	if f.Tags != nil {
		tags := make([]string, 0, len(*f.Tags))
		for _, t := range *f.Tags {
			if t = strings.TrimSpace(t); t != "" {
				tags = append(tags, t)
			}
		}
		e.Tags = tags
	}
	if e.Tags == nil {
		e.Tags = []string{}
	}
	if err := checkRequiredText("event_name", e.EventName, MaxNameLen); err != nil {
		return base, err
	}
	if err := checkLen("description", e.Description, MaxNotesLen); err != nil {
		return base, err
	}
	if err := checkLen("location", e.Location, MaxNameLen); err != nil {
		return base, err
	}
	for _, t := range e.Tags {
		if err := checkLen("tag", t, MaxNameLen); err != nil {
			return base, err
		}
	}
	if e.EndTime < e.StartTime {
		return base, invalidf("end_time must not be before start_time")
	}
	return e, nil
}

// buildSponsor applies f to base and validates the result (logo included).
func buildSponsor(f SponsorFields, base Sponsor, create bool) (Sponsor, *Error) {
	if create {
		if err := requireContent("name", f.Name != nil); err != nil {
			return base, err
		}
	}
	e := base
	setStr(&e.Name, f.Name)
	setStr(&e.Tier, f.Tier)
	setStr(&e.WebsiteURL, f.WebsiteURL)
	setStr(&e.Description, f.Description)
	setStr(&e.LogoData, f.LogoData)
	setStr(&e.LogoContentType, f.LogoContentType)
	if f.DisplayOrder != nil {
		e.DisplayOrder = *f.DisplayOrder
	}
	if err := checkRequiredText("name", e.Name, MaxNameLen); err != nil {
		return base, err
	}
	if err := checkLen("tier", e.Tier, MaxNameLen); err != nil {
		return base, err
	}
	e.WebsiteURL = NormalizeURL(e.WebsiteURL)
	if !ValidURL(e.WebsiteURL) {
		return base, invalidf("website_url must be empty or an absolute http(s) URL")
	}
	if err := checkLen("description", e.Description, MaxNotesLen); err != nil {
		return base, err
	}
	// Only a logo that changed is checked again (an unchanged one passed before).
	if create || f.LogoData != nil || f.LogoContentType != nil {
		data, ctype, err := CheckLogo(e.LogoData, e.LogoContentType)
		if err != nil {
			return base, err
		}
		e.LogoData, e.LogoContentType = data, ctype
	}
	return e, nil
}

// buildFAQ applies f to base and validates the result.
func buildFAQ(f FAQFields, base FAQEntry, create bool) (FAQEntry, *Error) {
	if create {
		if err := requireContent("question", f.Question != nil); err != nil {
			return base, err
		}
		if err := requireContent("answer", f.Answer != nil); err != nil {
			return base, err
		}
	}
	e := base
	setStr(&e.Question, f.Question)
	setStr(&e.Answer, f.Answer)
	if f.DisplayOrder != nil {
		e.DisplayOrder = *f.DisplayOrder
	}
	if err := checkRequiredText("question", e.Question, MaxNotesLen); err != nil {
		return base, err
	}
	if err := checkRequiredText("answer", e.Answer, MaxNotesLen); err != nil {
		return base, err
	}
	return e, nil
}
