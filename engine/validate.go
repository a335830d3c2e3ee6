package engine

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// Field limits of SPEC §1.
const (
	MaxNameLen  = 200
	MaxNotesLen = 20000
	MaxEmailLen = 254
)

func checkName(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return invalidf("%s is required", field)
	}
	if utf8.RuneCountInString(v) > MaxNameLen {
		return invalidf("%s is longer than %d characters", field, MaxNameLen)
	}
	return nil
}

func checkText(field, v string) error {
	if utf8.RuneCountInString(v) > MaxNotesLen {
		return invalidf("%s is longer than %d characters", field, MaxNotesLen)
	}
	return nil
}

// ValidEmail reports whether v looks like a@b.c and fits the length limit.
func ValidEmail(v string) bool {
	if len(v) > MaxEmailLen || strings.ContainsAny(v, " \t\r\n<>,;\"") {
		return false
	}
	at := strings.LastIndexByte(v, '@')
	if at <= 0 || at == len(v)-1 {
		return false
	}
	domain := v[at+1:]
	dot := strings.LastIndexByte(domain, '.')
	return dot > 0 && dot < len(domain)-1
}

func checkEmail(v string) error {
	if !ValidEmail(v) {
		return invalidf("email %q is not a valid address", v)
	}
	return nil
}

// ValidURL reports whether v is empty or an absolute http(s) URL with a host.
func ValidURL(v string) bool {
	if v == "" {
		return true
	}
	if len(v) > 2048 {
		return false
	}
	u, err := url.Parse(v)
	if err != nil {
		return false
	}
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func checkURL(field, v string) error {
	if !ValidURL(v) {
		return invalidf("%s must be empty or an absolute http(s) URL", field)
	}
	return nil
}

// SplitChallenges turns "a, b,,c" into ["a","b","c"].
func SplitChallenges(v string) []string {
	out := []string{}
	for _, part := range strings.Split(v, ",") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func containsString(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
