package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"podium/persist/worker"
)

// ratingsConfig reads the ratings fit's cadence (docs/operations.md#configuration,
// docs/behaviour.md#ratings): RATINGS_MIN_GAP (least time between the starts of two
// fits, a Go duration, default 2s, 0 = none), RATINGS_EVERY (changes that start a fit,
// default 5, at least 1) and RATINGS_QUIET (quiet time after a change that starts a fit
// anyway, default 1s, 0 = at once). A bad value stops the start with the variable named.
func ratingsConfig() (worker.RatingsOptions, error) {
	var o worker.RatingsOptions
	var err error
	if o.MinGap, err = envDuration("RATINGS_MIN_GAP", 2*time.Second); err != nil {
		return o, err
	}
	if o.Quiet, err = envDuration("RATINGS_QUIET", time.Second); err != nil {
		return o, err
	}
	o.Every = 5
	if v := os.Getenv("RATINGS_EVERY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return o, fmt.Errorf("RATINGS_EVERY=%q: want a whole number of changes, at least 1", v)
		}
		o.Every = n
	}
	// worker.RatingsOptions reads 0 as "the default" and a negative duration as "none".
	if o.MinGap == 0 {
		o.MinGap = -1
	}
	if o.Quiet == 0 {
		o.Quiet = -1
	}
	return o, nil
}

// envDuration reads a Go duration (2s, 500ms, 0) of at least zero.
func envDuration(key string, def time.Duration) (time.Duration, error) {
	v := os.Getenv(key)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a Go duration of at least 0 (such as 2s, 500ms or 0)", key, v)
	}
	return d, nil
}
