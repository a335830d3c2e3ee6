package transport

import "podium/engine"

// sendLoginCodes hands the new judges' login-code emails to the outbox (SPEC §10). It
// never blocks the request. (The imports/email issue fills this in.)
func (s *Server) sendLoginCodes(judges []engine.CreatedJudge) {}
