package engine_test

import (
	"podium/engine"
	"podium/engine/fit"
)

// The ratings fit lives in engine/fit, which imports engine: engine's own tests reach it
// through engine.FitRatings, set here (an external test package may import both).
func init() { engine.FitRatings = fit.Ratings }
