package client

import (
	"context"
	"fmt"
	"time"
)

// The wire shapes (docs/behaviour.md#resources) hold only the fields the tools read.

// Seen is one entry of a judge's seen_projects.
type Seen struct {
	ProjectID string `json:"project_id"`
	Starred   bool   `json:"starred"`
	Notes     string `json:"notes"`
}

// Judge is a judge as GET /api/judge/list shows it.
type Judge struct {
	ID           string   `json:"id"`
	Code         string   `json:"code"`
	Name         string   `json:"name"`
	Email        string   `json:"email"`
	Active       bool     `json:"active"`
	Track        string   `json:"track"`
	Current      *string  `json:"current"`
	Seen         int      `json:"seen"`
	SeenProjects []Seen   `json:"seen_projects"`
	Rankings     []string `json:"rankings"`
	LastActivity int64    `json:"last_activity"`
}

// Project is a project as GET /api/project/list shows it.
type Project struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Location     int    `json:"location"`
	Seen         int    `json:"seen"`
	Active       bool   `json:"active"`
	LastActivity int64  `json:"last_activity"`
}

// Flag is a flag a skip (or the admin) raised.
type Flag struct {
	ID        string `json:"id"`
	ProjectID string `json:"project_id"`
	JudgeID   string `json:"judge_id"`
	Reason    string `json:"reason"`
}

// Clock is the judging clock.
type Clock struct {
	StartTime int64 `json:"start_time"`
	PauseTime int64 `json:"pause_time"`
	Running   bool  `json:"running"`
}

// JudgeList is GET /api/judge/list.
func (c *Client) JudgeList(ctx context.Context) ([]Judge, error) {
	var out []Judge
	err := c.Do(ctx, "GET", "/api/judge/list", "/api/judge/list", AsAdmin, nil, &out)
	return out, err
}

// ProjectList is GET /api/project/list.
func (c *Client) ProjectList(ctx context.Context) ([]Project, error) {
	var out []Project
	err := c.Do(ctx, "GET", "/api/project/list", "/api/project/list", AsAdmin, nil, &out)
	return out, err
}

// Flags is GET /api/admin/flags.
func (c *Client) Flags(ctx context.Context) ([]Flag, error) {
	var out []Flag
	err := c.Do(ctx, "GET", "/api/admin/flags", "/api/admin/flags", AsAdmin, nil, &out)
	return out, err
}

// SetClock sends a clock command (pause|unpause) and returns the clock it answered with.
func (c *Client) SetClock(ctx context.Context, action string) (Clock, error) {
	var out struct {
		Clock *Clock `json:"clock"`
	}
	err := c.Do(ctx, "POST", "/api/admin/clock/"+action, "/api/admin/clock/"+action, AsAdmin, nil, &out)
	if err != nil {
		return Clock{}, err
	}
	if out.Clock == nil {
		return Clock{}, fmt.Errorf("clock/%s: answer has no clock", action)
	}
	return *out.Clock, nil
}

// WaitReady polls /readyz until it answers 200 or ctx ends.
func (c *Client) WaitReady(ctx context.Context) error {
	for {
		err := c.Do(ctx, "GET", "/readyz", "/readyz", AsAnon, nil, nil)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server not ready: %w (last: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
