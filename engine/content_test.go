package engine

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Test images: only the signature matters to the checks.
var (
	pngLogo  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	jpegLogo = []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F'}
	gifLogo  = []byte("GIF89a\x01\x00\x01\x00")
	webpLogo = []byte("RIFF\x24\x00\x00\x00WEBPVP8 ")
	svgLogo  = []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"></svg>`)
	svgXML   = []byte("\xEF\xBB\xBF\n<?xml version=\"1.0\"?>\n<!-- logo -->\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>")
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
func sp(v string) *string { return &v }
func ip(v int) *int       { return &v }
func i64(v int64) *int64  { return &v }

// run applies cmd at time t on e.
func run(t *testing.T, e *Engine, at int64, cmd Command) (any, error) {
	t.Helper()
	return runSeed(e, at, uint64(at), cmd)
}

func runSeed(e *Engine, at int64, seed uint64, cmd Command) (any, error) {
	res, _, err := e.Apply(&Envelope{Time: at, Seed: seed, Actor: Admin, Cmd: cmd})
	return res, err
}

func snapshot(t *testing.T, e *Engine) []byte {
	t.Helper()
	b, _, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCheckLogo(t *testing.T) {
	big := append(append([]byte{}, pngLogo...), make([]byte, MaxLogoBytes)...)
	exact := append(append([]byte{}, pngLogo...), make([]byte, MaxLogoBytes-len(pngLogo))...)
	wrapped := b64(exact)
	var sb strings.Builder
	for i := 0; i < len(wrapped); i += 76 {
		sb.WriteString(wrapped[i:min(i+76, len(wrapped))])
		sb.WriteString("\r\n")
	}
	cases := []struct {
		name, data, ctype string
		wantErr           string // "" = valid
	}{
		{"none", "", "", ""},
		{"png", b64(pngLogo), "image/png", ""},
		{"jpeg", b64(jpegLogo), "image/jpeg", ""},
		{"gif", b64(gifLogo), "image/gif", ""},
		{"webp", b64(webpLogo), "image/webp", ""},
		{"svg", b64(svgLogo), "image/svg+xml", ""},
		{"svg with xml declaration, BOM and comment", b64(svgXML), "image/svg+xml", ""},
		{"type in upper case", b64(pngLogo), " IMAGE/PNG ", ""},
		{"exactly 1 MiB, line-wrapped base64", sb.String(), "image/png", ""},
		{"type without data", "", "image/png", "logo_data is empty"},
		{"data without type", b64(pngLogo), "", "logo_content_type is required"},
		{"type not allowed", b64(pngLogo), "image/bmp", "not allowed"},
		{"jpg is not a media type", b64(jpegLogo), "image/jpg", "not allowed"},
		{"data URI", "data:image/png;base64," + b64(pngLogo), "image/png", "without a data: prefix"},
		{"bad base64", "iVBORw0KGgo!!!", "image/png", "not valid base64"},
		{"bad base64 padding", b64(pngLogo)[:5], "image/png", "not valid base64"},
		{"too large", b64(big), "image/png", "larger than"},
		{"far too large", strings.Repeat("A", 4*MaxLogoBytes), "image/png", "larger than"},
		{"png declared, jpeg bytes", b64(jpegLogo), "image/png", "does not contain a image/png"},
		{"jpeg declared, png bytes", b64(pngLogo), "image/jpeg", "does not contain"},
		{"gif declared, png bytes", b64(pngLogo), "image/gif", "does not contain"},
		{"webp declared, RIFF but not WEBP", b64([]byte("RIFF\x24\x00\x00\x00WAVEfmt ")), "image/webp", "does not contain"},
		{"svg declared, png bytes", b64(pngLogo), "image/svg+xml", "does not contain"},
		{"svg declared, html text", b64([]byte("<html><svg/></html>")), "image/svg+xml", "does not contain"},
		{"svg declared, xml of another root", b64([]byte(`<?xml version="1.0"?><html/>`)), "image/svg+xml", "does not contain"},
		{"svg declared, not utf-8", b64([]byte("<svg>\xff\xfe</svg>")), "image/svg+xml", "does not contain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, ctype, err := CheckLogo(tc.data, tc.ctype)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if strings.ContainsAny(data, "\r\n") || strings.TrimSpace(strings.ToLower(tc.ctype)) != ctype {
					t.Fatalf("not normalised: %q %q", data[:min(20, len(data))], ctype)
				}
				if data != "" {
					raw, derr := base64.StdEncoding.DecodeString(data)
					want, _ := base64.StdEncoding.DecodeString(tc.data)
					if derr != nil || !bytes.Equal(raw, want) {
						t.Fatalf("normalised data decodes differently: %v", derr)
					}
				}
				return
			}
			if err == nil || err.Kind != KindInvalid || !strings.Contains(err.Msg, tc.wantErr) {
				t.Fatalf("error = %v, want 400 containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestContentCreateUpdateDelete(t *testing.T) {
	e := New()
	res, err := run(t, e, 1000, &CreateScheduleEntry{Entry: ScheduleFields{
		EventName: sp("Opening"), StartTime: i64(5000), EndTime: i64(6000), Tags: &[]string{" talk ", "", "main"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	sid := res.(ID)
	res, err = run(t, e, 2000, &CreateSponsor{Sponsor: SponsorFields{Name: sp("Acme"), LogoData: sp(b64(pngLogo)), LogoContentType: sp("image/png")}})
	if err != nil {
		t.Fatal(err)
	}
	spid := res.(ID)
	res, err = run(t, e, 3000, &CreateFAQEntry{Entry: FAQFields{Question: sp("Food?"), Answer: sp("Yes")}})
	if err != nil {
		t.Fatal(err)
	}
	fid := res.(ID)
	if sid == spid || spid == fid || sid == fid {
		t.Fatal("ids collide")
	}
	e.Read(func(s *State) {
		se := s.Content.Schedule[0]
		if se.ID != sid || se.CreatedAt != 1000 || se.UpdatedAt != 1000 || se.StartTime != 5000 || strings.Join(se.Tags, "|") != "talk|main" {
			t.Fatalf("schedule entry = %+v", se)
		}
		if s.Content.Sponsors[0].LogoContentType != "image/png" || s.Content.FAQ[0].CreatedAt != 3000 {
			t.Fatalf("content = %+v", s.Content)
		}
	})

	// Partial updates keep the fields not given and stamp updated_at.
	if _, err := run(t, e, 4000, &UpdateScheduleEntry{ID: sid, Entry: ScheduleFields{Location: sp("Hall A")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, e, 4100, &UpdateSponsor{ID: spid, Sponsor: SponsorFields{Tier: sp("gold"), DisplayOrder: ip(-2)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, e, 4200, &UpdateFAQEntry{ID: fid, Entry: FAQFields{Answer: sp("Pizza")}}); err != nil {
		t.Fatal(err)
	}
	// Removing a logo: both fields empty.
	if _, err := run(t, e, 4300, &UpdateSponsor{ID: spid, Sponsor: SponsorFields{LogoData: sp(""), LogoContentType: sp("")}}); err != nil {
		t.Fatal(err)
	}
	e.Read(func(s *State) {
		se := s.Content.Schedule[0]
		if se.EventName != "Opening" || se.Location != "Hall A" || se.CreatedAt != 1000 || se.UpdatedAt != 4000 {
			t.Fatalf("schedule after update = %+v", se)
		}
		sp := s.Content.Sponsors[0]
		if sp.Name != "Acme" || sp.Tier != "gold" || sp.DisplayOrder != -2 || sp.LogoData != "" || sp.LogoContentType != "" || sp.UpdatedAt != 4300 {
			t.Fatalf("sponsor after update = %+v", sp)
		}
		if f := s.Content.FAQ[0]; f.Question != "Food?" || f.Answer != "Pizza" || f.UpdatedAt != 4200 {
			t.Fatalf("faq after update = %+v", f)
		}
	})

	// Unknown ids are 404 for updates and deletes, and for a delete of the wrong kind.
	unknown := ID{1, 2, 3}
	for _, cmd := range []Command{
		&UpdateScheduleEntry{ID: unknown, Entry: ScheduleFields{}},
		&UpdateSponsor{ID: unknown},
		&UpdateFAQEntry{ID: unknown},
		&DeleteContent{Content: ContentSchedule, ID: unknown},
		&DeleteContent{Content: ContentFAQ, ID: spid},
	} {
		if _, err := run(t, e, 5000, cmd); !isKind(err, KindNotFound) {
			t.Fatalf("%s: error = %v, want 404", cmd.Kind(), err)
		}
	}
	if _, err := run(t, e, 5000, &DeleteContent{Content: "news", ID: sid}); !isKind(err, KindInvalid) {
		t.Fatalf("unknown kind: %v", err)
	}
	for _, d := range []*DeleteContent{{ContentSchedule, sid}, {ContentSponsors, spid}, {ContentFAQ, fid}} {
		if _, err := run(t, e, 6000, d); err != nil {
			t.Fatal(err)
		}
	}
	e.Read(func(s *State) {
		if len(s.Content.Schedule)+len(s.Content.Sponsors)+len(s.Content.FAQ) != 0 {
			t.Fatalf("content left after deletes: %+v", s.Content)
		}
	})
}

func isKind(err error, k ErrorKind) bool {
	ee, ok := err.(*Error)
	return ok && ee.Kind == k
}

// Every refused command leaves the state byte for byte as it was.
func TestContentValidationRefusesAndChangesNothing(t *testing.T) {
	e := New()
	res, err := run(t, e, 1000, &CreateScheduleEntry{Entry: ScheduleFields{EventName: sp("Talk"), StartTime: i64(10), EndTime: i64(20)}})
	if err != nil {
		t.Fatal(err)
	}
	sid := res.(ID)
	res, err = run(t, e, 1000, &CreateSponsor{Sponsor: SponsorFields{Name: sp("Acme"), LogoData: sp(b64(gifLogo)), LogoContentType: sp("image/gif")}})
	if err != nil {
		t.Fatal(err)
	}
	spid := res.(ID)
	res, err = run(t, e, 1000, &CreateFAQEntry{Entry: FAQFields{Question: sp("Q"), Answer: sp("A")}})
	if err != nil {
		t.Fatal(err)
	}
	fid := res.(ID)
	before := snapshot(t, e)
	long := strings.Repeat("x", MaxNameLen+1)
	cases := []struct {
		name string
		cmd  Command
		want string
	}{
		{"schedule without event_name", &CreateScheduleEntry{Entry: ScheduleFields{StartTime: i64(1), EndTime: i64(2)}}, "event_name is required"},
		{"schedule without start_time", &CreateScheduleEntry{Entry: ScheduleFields{EventName: sp("a"), EndTime: i64(2)}}, "start_time is required"},
		{"schedule without end_time", &CreateScheduleEntry{Entry: ScheduleFields{EventName: sp("a"), StartTime: i64(2)}}, "end_time is required"},
		{"schedule blank event_name", &CreateScheduleEntry{Entry: ScheduleFields{EventName: sp("  "), StartTime: i64(1), EndTime: i64(2)}}, "event_name must not be empty"},
		{"schedule long event_name", &CreateScheduleEntry{Entry: ScheduleFields{EventName: sp(long), StartTime: i64(1), EndTime: i64(2)}}, "longer than"},
		{"schedule long tag", &CreateScheduleEntry{Entry: ScheduleFields{EventName: sp("a"), StartTime: i64(1), EndTime: i64(2), Tags: &[]string{long}}}, "tag is longer"},
		{"schedule end before start", &CreateScheduleEntry{Entry: ScheduleFields{EventName: sp("a"), StartTime: i64(2), EndTime: i64(1)}}, "end_time must not be before start_time"},
		{"schedule update end before start", &UpdateScheduleEntry{ID: sid, Entry: ScheduleFields{EndTime: i64(5)}}, "end_time must not be before"},
		{"schedule update blank name", &UpdateScheduleEntry{ID: sid, Entry: ScheduleFields{EventName: sp("")}}, "event_name must not be empty"},
		{"sponsor without name", &CreateSponsor{Sponsor: SponsorFields{Tier: sp("gold")}}, "name is required"},
		{"sponsor blank name", &CreateSponsor{Sponsor: SponsorFields{Name: sp("")}}, "name must not be empty"},
		{"sponsor javascript url", &CreateSponsor{Sponsor: SponsorFields{Name: sp("a"), WebsiteURL: sp("javascript:alert(1)")}}, "website_url"},
		{"sponsor relative url", &CreateSponsor{Sponsor: SponsorFields{Name: sp("a"), WebsiteURL: sp("/about")}}, "website_url"},
		{"sponsor wrong magic", &CreateSponsor{Sponsor: SponsorFields{Name: sp("a"), LogoData: sp(b64(pngLogo)), LogoContentType: sp("image/webp")}}, "does not contain"},
		{"sponsor update logo type only", &UpdateSponsor{ID: spid, Sponsor: SponsorFields{LogoContentType: sp("image/png")}}, "does not contain"},
		{"sponsor update bad base64", &UpdateSponsor{ID: spid, Sponsor: SponsorFields{LogoData: sp("***")}}, "not valid base64"},
		{"faq without question", &CreateFAQEntry{Entry: FAQFields{Answer: sp("a")}}, "question is required"},
		{"faq without answer", &CreateFAQEntry{Entry: FAQFields{Question: sp("q")}}, "answer is required"},
		{"faq blank answer", &CreateFAQEntry{Entry: FAQFields{Question: sp("q"), Answer: sp("\n")}}, "answer must not be empty"},
		{"faq update blank question", &UpdateFAQEntry{ID: fid, Entry: FAQFields{Question: sp(" ")}}, "question must not be empty"},
		{"replace with one bad sponsor", &ReplaceContent{
			Schedule: []ScheduleFields{{EventName: sp("x"), StartTime: i64(1), EndTime: i64(1)}},
			Sponsors: []SponsorFields{{Name: sp("ok")}, {Name: sp("bad"), LogoData: sp("@@"), LogoContentType: sp("image/png")}},
			FAQ:      []FAQFields{},
		}, "sponsors[1]: logo_data is not valid base64"},
		{"replace with a bad faq", &ReplaceContent{FAQ: []FAQFields{{Question: sp("q"), Answer: sp("a")}, {}}}, "faq[1]: question is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, e, 2000, tc.cmd)
			if !isKind(err, KindInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want 400 containing %q", err, tc.want)
			}
			if after := snapshot(t, e); !bytes.Equal(before, after) {
				t.Fatal("state changed by a refused command")
			}
		})
	}
}

func TestContentReplace(t *testing.T) {
	e := New()
	if _, err := run(t, e, 1000, &CreateFAQEntry{Entry: FAQFields{Question: sp("old"), Answer: sp("old")}}); err != nil {
		t.Fatal(err)
	}
	var oldID ID
	e.Read(func(s *State) { oldID = s.Content.FAQ[0].ID })
	_, err := run(t, e, 2000, &ReplaceContent{
		Schedule: []ScheduleFields{{EventName: sp("a"), StartTime: i64(1), EndTime: i64(2)}, {EventName: sp("b"), StartTime: i64(0), EndTime: i64(0)}},
		Sponsors: []SponsorFields{{Name: sp("s"), LogoData: sp(b64(svgLogo)), LogoContentType: sp("image/svg+xml")}},
		FAQ:      []FAQFields{{Question: sp("q"), Answer: sp("a")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Read(func(s *State) {
		c := s.Content
		if len(c.Schedule) != 2 || len(c.Sponsors) != 1 || len(c.FAQ) != 1 || c.FAQ[0].ID == oldID || c.FAQ[0].Question != "q" {
			t.Fatalf("content = %+v", c)
		}
		seen := map[ID]bool{}
		for _, id := range []ID{c.Schedule[0].ID, c.Schedule[1].ID, c.Sponsors[0].ID, c.FAQ[0].ID} {
			if seen[id] || id.IsZero() {
				t.Fatalf("duplicate or zero id %s", id)
			}
			seen[id] = true
		}
		if c.Schedule[1].CreatedAt != 2000 || c.Schedule[1].UpdatedAt != 2000 {
			t.Fatalf("timestamps = %+v", c.Schedule[1])
		}
	})
	// Empty lists empty everything; nil lists (a journal record without them) too.
	if _, err := run(t, e, 3000, &ReplaceContent{}); err != nil {
		t.Fatal(err)
	}
	e.Read(func(s *State) {
		b, _ := json.Marshal(s.Content)
		if string(b) != `{"schedule":[],"sponsors":[],"faq":[]}` {
			t.Fatalf("content = %s", b)
		}
	})
}

func TestContentViewsOrderAndFormat(t *testing.T) {
	e := New()
	cmds := []Command{
		&CreateScheduleEntry{Entry: ScheduleFields{EventName: sp("late"), StartTime: i64(3_600_000), EndTime: i64(7_200_000)}},
		&CreateScheduleEntry{Entry: ScheduleFields{EventName: sp("early"), StartTime: i64(1_500), EndTime: i64(1_500)}},
		&CreateScheduleEntry{Entry: ScheduleFields{EventName: sp("early twin"), StartTime: i64(1_500), EndTime: i64(9_000)}},
		&CreateSponsor{Sponsor: SponsorFields{Name: sp("zeta"), DisplayOrder: ip(1)}},
		&CreateSponsor{Sponsor: SponsorFields{Name: sp("Beta"), DisplayOrder: ip(2)}},
		&CreateSponsor{Sponsor: SponsorFields{Name: sp("alpha"), DisplayOrder: ip(2)}},
		&CreateSponsor{Sponsor: SponsorFields{Name: sp("Omega"), DisplayOrder: ip(-1)}},
		&CreateFAQEntry{Entry: FAQFields{Question: sp("third"), Answer: sp("a"), DisplayOrder: ip(5)}},
		&CreateFAQEntry{Entry: FAQFields{Question: sp("first"), Answer: sp("a"), DisplayOrder: ip(0)}},
		&CreateFAQEntry{Entry: FAQFields{Question: sp("second"), Answer: sp("a"), DisplayOrder: ip(0)}},
	}
	for i, cmd := range cmds {
		if _, err := run(t, e, int64(1_700_000_000_000+i), cmd); err != nil {
			t.Fatal(err)
		}
	}
	e.Read(func(s *State) {
		var names []string
		for _, v := range s.ScheduleView() {
			names = append(names, v.EventName)
		}
		if got := strings.Join(names, ","); got != "early,early twin,late" {
			t.Fatalf("schedule order %s", got)
		}
		v := s.ScheduleView()[0]
		if v.StartTime != "1970-01-01T00:00:01.5Z" || v.CreatedAt != "2023-11-14T22:13:20.001Z" || v.Tags == nil {
			t.Fatalf("schedule view = %+v", v)
		}
		if s.ScheduleView()[2].EndTime != "1970-01-01T02:00:00Z" {
			t.Fatalf("whole-second time = %s", s.ScheduleView()[2].EndTime)
		}
		names = nil
		for _, v := range s.SponsorsView() {
			names = append(names, v.Name)
		}
		if got := strings.Join(names, ","); got != "Omega,zeta,alpha,Beta" {
			t.Fatalf("sponsor order %s", got)
		}
		names = nil
		for _, v := range s.FAQView() {
			names = append(names, v.Question)
		}
		if got := strings.Join(names, ","); got != "first,second,third" {
			t.Fatalf("faq order %s", got)
		}
	})
}

// Replaying the same envelopes gives the same state, and a snapshot restores content.
func TestContentReplayAndRestore(t *testing.T) {
	envs := []*Envelope{
		{Time: 10, Seed: 1, Actor: Admin, Cmd: &CreateSponsor{Sponsor: SponsorFields{Name: sp("a"), LogoData: sp(b64(webpLogo)), LogoContentType: sp("image/webp")}}},
		{Time: 20, Seed: 2, Actor: Admin, Cmd: &ReplaceContent{
			Schedule: []ScheduleFields{{EventName: sp("x"), StartTime: i64(1), EndTime: i64(2)}},
			Sponsors: []SponsorFields{{Name: sp("b")}},
			FAQ:      []FAQFields{{Question: sp("q"), Answer: sp("a")}},
		}},
		{Time: 30, Seed: 3, Actor: Admin, Cmd: &CreateScheduleEntry{Entry: ScheduleFields{EventName: sp("y"), StartTime: i64(3), EndTime: i64(4), Tags: &[]string{"t"}}}},
	}
	play := func() *Engine {
		e := New()
		for _, env := range envs {
			// Through the journal encoding, as recovery does.
			b, err := json.Marshal(env)
			if err != nil {
				t.Fatal(err)
			}
			var back Envelope
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if _, _, err := e.Apply(&back); err != nil {
				t.Fatal(err)
			}
		}
		return e
	}
	a, b := play(), play()
	sa, sb := snapshot(t, a), snapshot(t, b)
	if !bytes.Equal(sa, sb) {
		t.Fatal("replay is not deterministic")
	}
	r := New()
	if err := r.Restore(sa); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snapshot(t, r), sa) {
		t.Fatal("restore changed the state")
	}
	r.Read(func(s *State) {
		if len(s.Content.Schedule) != 2 || s.Content.Sponsors[0].Name != "b" {
			t.Fatalf("restored content = %+v", s.Content)
		}
	})
	// An old snapshot without content (or with null lists) restores to empty lists.
	old := New()
	if err := old.Restore([]byte(`{"applied":0,"content":{"schedule":null,"sponsors":null,"faq":[{"id":"000000000000000000000001","question":"q","answer":"a"}]}}`)); err != nil {
		t.Fatal(err)
	}
	old.Read(func(s *State) {
		if s.Content.Schedule == nil || s.Content.Sponsors == nil || len(s.Content.FAQ) != 1 {
			t.Fatalf("restored = %+v", s.Content)
		}
	})
}

// The snapshot copy (Capture) shares no slice of content with the live state.
func TestContentCloneSharesNothingMutable(t *testing.T) {
	e := New()
	if _, err := run(t, e, 1000, &ReplaceContent{
		Schedule: []ScheduleFields{{EventName: sp("a"), StartTime: i64(1), EndTime: i64(2), Tags: &[]string{"x", "y"}}},
		Sponsors: []SponsorFields{{Name: sp("s")}},
		FAQ:      []FAQFields{{Question: sp("q"), Answer: sp("a")}},
	}); err != nil {
		t.Fatal(err)
	}
	e.Read(func(s *State) {
		c := s.Content.clone()
		checkNoAlias(t, "Content", reflect.ValueOf(s.Content), reflect.ValueOf(c))
	})
}
