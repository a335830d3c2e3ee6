package engine

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

func init() {
	register(func() Command { return &SetOptions{} })
}

// Option limits of docs/behaviour.md#admin-operations.
const (
	MaxJudgingTimer = 86400
	MaxMinViews     = 1000
	MaxNumGroups    = 64
	MaxReqPerMin    = 100000
	MaxFocusTop     = 1000
	// DefaultFocusTop is focus_top of a new event.
	DefaultFocusTop = 10
	// DefaultTrackViews is the track_views value of a new track.
	DefaultTrackViews = 3
	// DefaultGroupSize is the size given to groups added by a num_groups change.
	DefaultGroupSize = 30
	// maxListLen bounds the option lists (tracks, ignore_tracks) so one request cannot
	// blow the state up.
	maxListLen = 1000
	// DefaultEventName is the event_name of a new event.
	DefaultEventName = "Podium"
	// MaxEventNameLen bounds event_name (it has to fit a page title and a TV header).
	MaxEventNameLen = 80
)

// SetOptions changes any subset of the settable options (POST /api/admin/options and
// the single-setting routes: tracks, track-views, num-groups, group-sizes, block-reqs,
// max-reqs). A nil field is left as it is. Everything is validated against the options
// as they would be after the change; any invalid field refuses the whole command.
type SetOptions struct {
	JudgingTimer   *int      `json:"judging_timer,omitempty"`
	MinViews       *int      `json:"min_views,omitempty"`
	ClockSync      *bool     `json:"clock_sync,omitempty"`
	JudgeTracks    *bool     `json:"judge_tracks,omitempty"`
	Tracks         *[]string `json:"tracks,omitempty"`
	TrackViews     *[]int    `json:"track_views,omitempty"`
	MultiGroup     *bool     `json:"multi_group,omitempty"`
	NumGroups      *int      `json:"num_groups,omitempty"`
	GroupSizes     *[]int    `json:"group_sizes,omitempty"`
	SwitchingMode  *string   `json:"switching_mode,omitempty"`
	AutoSwitchProp *float64  `json:"auto_switch_prop,omitempty"`
	GroupNames     *[]string `json:"group_names,omitempty"`
	IgnoreTracks   *[]string `json:"ignore_tracks,omitempty"`
	MaxReqPerMin   *int      `json:"max_req_per_min,omitempty"`
	BlockReqs      *bool     `json:"block_reqs,omitempty"`
	EventName      *string   `json:"event_name,omitempty"`
	AssignmentMode *string   `json:"assignment_mode,omitempty"`
	FocusTop       *int      `json:"focus_top,omitempty"`
	AssignmentGoal *string   `json:"assignment_goal,omitempty"`
}

// Kind implements Command.
func (*SetOptions) Kind() string { return "options.set" }

// Empty reports whether the command changes no field.
func (cmd *SetOptions) Empty() bool { return len(cmd.fields()) == 0 }

// fields names the fields the command sets, in the order of the options' JSON.
func (cmd *SetOptions) fields() []string {
	var out []string
	add := func(name string, set bool) {
		if set {
			out = append(out, name)
		}
	}
	add("judging_timer", cmd.JudgingTimer != nil)
	add("min_views", cmd.MinViews != nil)
	add("clock_sync", cmd.ClockSync != nil)
	add("judge_tracks", cmd.JudgeTracks != nil)
	add("tracks", cmd.Tracks != nil)
	add("track_views", cmd.TrackViews != nil)
	add("multi_group", cmd.MultiGroup != nil)
	add("num_groups", cmd.NumGroups != nil)
	add("group_sizes", cmd.GroupSizes != nil)
	add("switching_mode", cmd.SwitchingMode != nil)
	add("auto_switch_prop", cmd.AutoSwitchProp != nil)
	add("group_names", cmd.GroupNames != nil)
	add("ignore_tracks", cmd.IgnoreTracks != nil)
	add("max_req_per_min", cmd.MaxReqPerMin != nil)
	add("block_reqs", cmd.BlockReqs != nil)
	add("event_name", cmd.EventName != nil)
	add("assignment_mode", cmd.AssignmentMode != nil)
	add("focus_top", cmd.FocusTop != nil)
	add("assignment_goal", cmd.AssignmentGoal != nil)
	return out
}

// next returns the options as they would be after the command, or the first invalid
// field. It does not touch s.
func (cmd *SetOptions) next(cur *Options) (Options, error) {
	o := cur.copy()
	if err := cmd.nextSettings(&o); err != nil {
		return o, err
	}
	if err := cmd.nextTracks(&o, cur); err != nil {
		return o, err
	}
	if err := cmd.nextGroups(&o); err != nil {
		return o, err
	}
	return o, nil
}

// copy returns a copy of o that shares no list or map with it.
func (o *Options) copy() Options {
	c := *o
	c.Tracks = append([]string{}, o.Tracks...)
	c.TrackViews = append([]int{}, o.TrackViews...)
	c.GroupSizes = append([]int{}, o.GroupSizes...)
	c.GroupNames = append([]string{}, o.GroupNames...)
	c.IgnoreTracks = append([]string{}, o.IgnoreTracks...)
	c.TrackQRCodes = make(map[string]string, len(o.TrackQRCodes))
	for k, v := range o.TrackQRCodes {
		c.TrackQRCodes[k] = v
	}
	return c
}

// nextSettings applies the command's single-valued options to o (the first invalid
// one is the error).
func (cmd *SetOptions) nextSettings(o *Options) error {
	if v := cmd.JudgingTimer; v != nil {
		if *v < 0 || *v > MaxJudgingTimer {
			return invalidf("judging_timer must be between 0 and %d seconds", MaxJudgingTimer)
		}
		o.JudgingTimer = *v
	}
	if v := cmd.MinViews; v != nil {
		if *v < 0 || *v > MaxMinViews {
			return invalidf("min_views must be between 0 and %d", MaxMinViews)
		}
		o.MinViews = *v
	}
	if v := cmd.ClockSync; v != nil {
		o.ClockSync = *v
	}
	if v := cmd.JudgeTracks; v != nil {
		o.JudgeTracks = *v
	}
	if v := cmd.MultiGroup; v != nil {
		o.MultiGroup = *v
	}
	if v := cmd.BlockReqs; v != nil {
		o.BlockReqs = *v
	}
	if v := cmd.AssignmentMode; v != nil {
		if *v != ModeFocus && *v != ModeSpread {
			return invalidf(`assignment_mode must be "focus" or "spread"`)
		}
		o.AssignmentMode = *v
	}
	if v := cmd.FocusTop; v != nil {
		if *v < 1 || *v > MaxFocusTop {
			return invalidf("focus_top must be between 1 and %d", MaxFocusTop)
		}
		o.FocusTop = *v
	}
	if v := cmd.AssignmentGoal; v != nil {
		if *v != GoalPodium && *v != GoalField {
			return invalidf(`assignment_goal must be "podium" or "field"`)
		}
		o.AssignmentGoal = *v
	}
	if v := cmd.SwitchingMode; v != nil {
		if *v != "auto" && *v != "manual" {
			return invalidf(`switching_mode must be "auto" or "manual"`)
		}
		o.SwitchingMode = *v
	}
	if v := cmd.AutoSwitchProp; v != nil {
		if math.IsNaN(*v) || *v <= 0 || *v > 1 {
			return invalidf("auto_switch_prop must be greater than 0 and at most 1")
		}
		o.AutoSwitchProp = *v
	}
	if v := cmd.MaxReqPerMin; v != nil {
		if *v < 1 || *v > MaxReqPerMin {
			return invalidf("max_req_per_min must be between 1 and %d", MaxReqPerMin)
		}
		o.MaxReqPerMin = *v
	}
	if v := cmd.EventName; v != nil {
		name, err := checkEventName(*v)
		if err != nil {
			return err
		}
		o.EventName = name
	}
	if v := cmd.IgnoreTracks; v != nil {
		if err := checkNameList("ignore_tracks", *v, false); err != nil {
			return err
		}
		o.IgnoreTracks = append([]string{}, (*v)...)
	}
	return nil
}

// nextTracks applies tracks, then their views (kept by name; new tracks get the
// default), to o; cur is the options before the command.
func (cmd *SetOptions) nextTracks(o, cur *Options) error {
	if v := cmd.Tracks; v != nil {
		if err := checkNameList("tracks", *v, true); err != nil {
			return err
		}
		views := make(map[string]int, len(cur.Tracks))
		for i, t := range cur.Tracks {
			if i < len(cur.TrackViews) {
				views[t] = cur.TrackViews[i]
			}
		}
		o.Tracks = append([]string{}, (*v)...)
		o.TrackViews = make([]int, len(o.Tracks))
		for i, t := range o.Tracks {
			if n, ok := views[t]; ok {
				o.TrackViews[i] = n
			} else {
				o.TrackViews[i] = DefaultTrackViews
			}
		}
		for t := range o.TrackQRCodes {
			if !containsString(o.Tracks, t) {
				delete(o.TrackQRCodes, t)
			}
		}
	}
	if v := cmd.TrackViews; v != nil {
		if len(*v) != len(o.Tracks) {
			return invalidf("track_views must have one value per track (%d tracks, %d values)", len(o.Tracks), len(*v))
		}
		for i, n := range *v {
			if n < 1 {
				return invalidf("track_views[%d] must be at least 1", i)
			}
		}
		o.TrackViews = append([]int{}, (*v)...)
	}
	return nil
}

// nextGroups applies the groups to o: num_groups first; sizes and names not given are
// resized to match.
func (cmd *SetOptions) nextGroups(o *Options) error {
	if v := cmd.NumGroups; v != nil {
		if *v < 1 || *v > MaxNumGroups {
			return invalidf("num_groups must be between 1 and %d", MaxNumGroups)
		}
		o.NumGroups = *v
		if cmd.GroupSizes == nil {
			o.GroupSizes = resized(o.GroupSizes, *v, func(int) int { return DefaultGroupSize })
		}
		if cmd.GroupNames == nil {
			o.GroupNames = resized(o.GroupNames, *v, func(i int) string { return "Group " + itoa(i+1) })
		}
	}
	if v := cmd.GroupSizes; v != nil {
		if len(*v) != o.NumGroups {
			return invalidf("group_sizes must have one size per group (%d groups, %d sizes)", o.NumGroups, len(*v))
		}
		for i, n := range *v {
			if n < 1 || n > MaxLocation {
				return invalidf("group_sizes[%d] must be between 1 and %d", i, MaxLocation)
			}
		}
		o.GroupSizes = append([]int{}, (*v)...)
	}
	if v := cmd.GroupNames; v != nil {
		if len(*v) != o.NumGroups {
			return invalidf("group_names must have one name per group (%d groups, %d names)", o.NumGroups, len(*v))
		}
		for i, n := range *v {
			if err := checkName("group_names["+itoa(i)+"]", n); err != nil {
				return err
			}
		}
		o.GroupNames = append([]string{}, (*v)...)
	}
	return nil
}

// checkEventName trims an event_name and checks it: 1..MaxEventNameLen characters, no
// control characters (it goes into an email header and page titles).
func checkEventName(v string) (string, error) {
	name := strings.TrimSpace(v)
	if name == "" {
		return "", invalidf("event_name is required (it cannot be empty)")
	}
	if utf8.RuneCountInString(name) > MaxEventNameLen {
		return "", invalidf("event_name is longer than %d characters", MaxEventNameLen)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return "", invalidf("event_name must not contain control characters or line breaks")
		}
	}
	return name, nil
}

// checkNameList checks a list of names: each non-empty and at most MaxNameLen
// characters, at most maxListLen of them, and unique when unique is set.
func checkNameList(field string, list []string, unique bool) error {
	if len(list) > maxListLen {
		return invalidf("%s has more than %d entries", field, maxListLen)
	}
	seen := make(map[string]bool, len(list))
	for i, t := range list {
		if err := checkName(field+"["+itoa(i)+"]", t); err != nil {
			return err
		}
		if unique && seen[t] {
			return invalidf("%s has %q twice", field, t)
		}
		seen[t] = true
	}
	return nil
}

// resized returns list cut or grown to n entries; a new entry i is fill(i).
func resized[T any](list []T, n int, fill func(i int) T) []T {
	out := make([]T, n)
	for i := range out {
		if i < len(list) {
			out[i] = list[i]
		} else {
			out[i] = fill(i)
		}
	}
	return out
}

func (cmd *SetOptions) apply(s *State, c *Ctx) (any, error) {
	fields := cmd.fields()
	if len(fields) == 0 {
		return nil, nil // nothing to change: not an options change
	}
	o, err := cmd.next(&s.Options)
	if err != nil {
		return nil, err
	}
	old := s.Options
	s.Options = o
	if cmd.AssignmentGoal != nil && s.FocusNeed < FocusNeedCoverage {
		// The goal chosen in an event begun before focus_need: the need of the build
		// that brought the goal (what its journal replays to), never a later rule.
		s.FocusNeed = FocusNeedCoverage
	}
	c.logf("options changed: %s", strings.Join(fields, ", "))

	if !slices.Equal(old.GroupNames, o.GroupNames) || old.MultiGroup != o.MultiGroup || old.EventName != o.EventName {
		c.emit(Event{Type: EvGroupInfo, To: ToEveryone, Data: s.GroupInfoView()})
	}
	if old.NumGroups != o.NumGroups || !slices.Equal(old.GroupSizes, o.GroupSizes) {
		s.regroup(c)
	}
	if old.JudgeTracks != o.JudgeTracks || !slices.Equal(old.Tracks, o.Tracks) {
		s.scoresChanged()
	}
	if old.FocusTop != o.FocusTop {
		s.ratingInputsChanged() // p_top is about the top focus_top
	}
	s.bumpOptionsRef(c)
	return nil, nil
}

// regroup recomputes every project's group from its table and moves judges whose group
// no longer exists into the group with the fewest judges.
func (s *State) regroup(c *Ctx) {
	if moved := s.regroupProjects(c); len(moved) > 0 {
		c.changed("project", moved...)
	}
	var judges []ID
	for _, j := range s.JudgesInOrder() {
		if j.Group >= 0 && j.Group < s.Options.NumGroups {
			continue
		}
		// Out of range: count it nowhere while choosing its new group.
		j.Group = -1
		j.Group = s.smallestGroup()
		j.GroupSeen = 0
		judges = append(judges, j.ID)
		c.emit(Event{Type: EvJudge, To: ToJudge, Judge: j.ID, Data: s.judgeEvent(j, "groups resized")})
	}
	if len(judges) > 0 {
		c.logf("moved %d judges out of removed groups", len(judges))
		c.changed("judge", judges...)
	}
}
