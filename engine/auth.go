package engine

// AdminSessionTTL is how long an admin session lasts (ms).
const AdminSessionTTL = 24 * 60 * 60 * 1000

func init() {
	register(
		func() Command { return &JudgeLogin{} },
		func() Command { return &JudgeLogout{} },
		func() Command { return &AdminLogin{} },
		func() Command { return &AdminLogout{} },
	)
}

// JudgeLogin starts a judge session. The caller has already checked the code; the
// command stores only the hash of the new token, replacing the previous one.
type JudgeLogin struct {
	Judge     ID     `json:"judge"`
	TokenHash string `json:"token_hash"`
}

// Kind implements Command.
func (*JudgeLogin) Kind() string { return "judge.login" }

func (cmd *JudgeLogin) apply(s *State, c *Ctx) (any, error) {
	j, ok := s.Judges[cmd.Judge]
	if !ok {
		return nil, unauthorizedf("invalid login code")
	}
	if len(cmd.TokenHash) != 64 {
		return nil, invalidf("bad token hash")
	}
	if j.TokenHash != "" {
		s.delToken(j.TokenHash)
	}
	j.TokenHash = cmd.TokenHash
	s.setToken(cmd.TokenHash, j.ID)
	j.LastActivity = c.Time
	c.Actor = JudgeActor(j.ID)
	c.logf("logged in")
	return nil, nil
}

// JudgeLogout ends the judge's session.
type JudgeLogout struct {
	Judge ID `json:"judge"`
}

// Kind implements Command.
func (*JudgeLogout) Kind() string { return "judge.logout" }

func (cmd *JudgeLogout) apply(s *State, c *Ctx) (any, error) {
	j, ok := s.Judges[cmd.Judge]
	if !ok {
		return nil, notFoundf("judge not found")
	}
	if j.TokenHash != "" {
		s.delToken(j.TokenHash)
		j.TokenHash = ""
	}
	c.logf("logged out")
	return nil, nil
}

// AdminLogin records a new admin session (by the hash of its token). Expired sessions
// are dropped at the same time.
type AdminLogin struct {
	SessionHash string `json:"session_hash"`
}

// Kind implements Command.
func (*AdminLogin) Kind() string { return "admin.login" }

func (cmd *AdminLogin) apply(s *State, c *Ctx) (any, error) {
	if len(cmd.SessionHash) != 64 {
		return nil, invalidf("bad session hash")
	}
	for h, exp := range s.AdminSessions {
		if exp <= c.Time {
			delete(s.AdminSessions, h)
		}
	}
	s.AdminSessions[cmd.SessionHash] = c.Time + AdminSessionTTL
	c.logf("admin logged in")
	return nil, nil
}

// AdminLogout ends an admin session.
type AdminLogout struct {
	SessionHash string `json:"session_hash"`
}

// Kind implements Command.
func (*AdminLogout) Kind() string { return "admin.logout" }

func (cmd *AdminLogout) apply(s *State, c *Ctx) (any, error) {
	delete(s.AdminSessions, cmd.SessionHash)
	c.logf("admin logged out")
	return nil, nil
}

// AdminSessionValid reports whether the session hash is known and unexpired at now.
func (s *State) AdminSessionValid(hash string, now int64) bool {
	exp, ok := s.AdminSessions[hash]
	return ok && exp > now
}
