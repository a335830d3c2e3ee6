package engine

import "testing"

func TestNormalizeURL(t *testing.T) {
	const gh = "github.com" // repository links as organisers paste them
	cases := map[string]string{
		gh + "/x/y":                  "https://" + gh + "/x/y",
		gh + "/team/app?tab=1#a":     "https://" + gh + "/team/app?tab=1#a",
		"www.example.com":            "https://www.example.com",
		"demo.example.org:8080/try":  "https://demo.example.org:8080/try",
		"https://a.example.com":      "https://a.example.com",
		"http://a.example.com":       "http://a.example.com",
		"javascript:alert(1)":        "javascript:alert(1)",
		"JavaScript:alert(1)//a.com": "JavaScript:alert(1)//a.com",
		"data:text/html,x":           "data:text/html,x",
		"mailto:a@b.example.com":     "mailto:a@b.example.com",
		"a@b.example.com":            "a@b.example.com",
		"localhost/x":                "localhost/x",
		"10.0.0.1/x":                 "10.0.0.1/x",
		"//github.com/x":             "//github.com/x",
		"-bad.example.com":           "-bad.example.com",
		"":                           "",
		"not a url":                  "not a url",
		"example.com:":               "example.com:",
	}
	for in, want := range cases {
		if got := NormalizeURL(in); got != want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"javascript:alert(1)", "data:text/html,x", "//github.com/x", "localhost/x"} {
		if ValidURL(NormalizeURL(bad)) {
			t.Errorf("%q is accepted after normalising", bad)
		}
	}
}
