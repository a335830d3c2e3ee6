package engine

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// Field limits of docs/behaviour.md#conventions.
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
	// A string of at most MaxNotesLen bytes has at most as many characters: most notes
	// are not counted.
	if len(v) > MaxNotesLen && utf8.RuneCountInString(v) > MaxNotesLen {
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

// NormalizeURL returns v with "https://" in front when v has no scheme and is a host
// name with an optional port and path (a repository path such as github.com/team/app,
// as organisers type and submission exports carry); anything else comes back unchanged
// for ValidURL to judge, so "javascript:..." and other schemes are still refused (docs/behaviour.md#conventions).
func NormalizeURL(v string) string {
	if v == "" || strings.Contains(v, "://") || strings.ContainsAny(v, " \t\r\n") {
		return v
	}
	end := strings.IndexAny(v, "/?#")
	if end < 0 {
		end = len(v)
	}
	if !hostPort(v[:end]) {
		return v
	}
	return "https://" + v
}

// hostPort reports whether v is a dotted DNS host name (letters, digits, hyphens; at
// least two labels; a last label that is not all digits), optionally with ":port".
func hostPort(v string) bool {
	host, port, hasPort := strings.Cut(v, ":")
	if hasPort && (port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "") {
		return false
	}
	if len(host) > 253 || !strings.Contains(host, ".") {
		return false
	}
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			ch := l[i]
			if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-') {
				return false
			}
		}
	}
	return strings.Trim(labels[len(labels)-1], "0123456789") != ""
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
