package main

import (
	"strings"
	"testing"
	"time"
)

// TestRatingsConfig: the ratings cadence comes from RATINGS_MIN_GAP, RATINGS_EVERY and
// RATINGS_QUIET with today's defaults; 0 means none; a bad value stops the start with
// the variable named.
func TestRatingsConfig(t *testing.T) {
	c, err := loadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.ratings.MinGap != 2*time.Second || c.ratings.Every != 5 || c.ratings.Quiet != time.Second {
		t.Fatalf("defaults: %+v", c.ratings)
	}
	t.Setenv("RATINGS_MIN_GAP", "0")
	t.Setenv("RATINGS_EVERY", "1")
	t.Setenv("RATINGS_QUIET", "250ms")
	if c, err = loadConfig(nil); err != nil {
		t.Fatal(err)
	}
	if c.ratings.MinGap >= 0 || c.ratings.Every != 1 || c.ratings.Quiet != 250*time.Millisecond {
		t.Fatalf("fast cadence: %+v", c.ratings)
	}
	for _, bad := range [][2]string{
		{"RATINGS_MIN_GAP", "2"}, {"RATINGS_MIN_GAP", "-1s"}, {"RATINGS_QUIET", "soon"},
		{"RATINGS_EVERY", "0"}, {"RATINGS_EVERY", "five"},
	} {
		t.Run(bad[0]+"="+bad[1], func(t *testing.T) {
			t.Setenv(bad[0], bad[1])
			_, err := loadConfig(nil)
			if err == nil || !strings.Contains(err.Error(), bad[0]) {
				t.Fatalf("error %v, want one naming %s", err, bad[0])
			}
		})
	}
}
