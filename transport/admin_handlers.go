package transport

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"podium/engine"
)

func (s *Server) routesAdmin(api fiber.Router) {
	api.Get("/admin/clock", s.adminAuth, s.getClock)
	api.Post("/admin/clock/pause", s.adminAuth, s.clockCmd(&engine.ClockPause{}))
	api.Post("/admin/clock/unpause", s.adminAuth, s.clockCmd(&engine.ClockUnpause{}))
	api.Post("/admin/clock/reset", s.adminAuth, s.clockCmd(&engine.ClockReset{}))
	api.Post("/admin/clock/backup", s.adminAuth, s.clockBackup)
	api.Get("/admin/started", s.started)
	api.Get("/admin/options", s.adminAuth, s.getOptions)
	api.Get("/admin/timer", s.judgeOrAdmin, s.getTimer)
	api.Post("/admin/backup", s.adminAuth, s.backup)
	api.Get("/admin/backup/:name", s.adminAuth, s.downloadBackup)
}

func (s *Server) getClock(c *fiber.Ctx) error {
	var clk engine.Clock
	s.node.Read(func(st *engine.State) { clk = st.Options.Clock })
	return c.JSON(fiber.Map{"running": clk.Running, "time": clk.Elapsed(time.Now().UnixMilli())})
}

// clockCmd answers a clock command with {"ok":1, "clock": {...}}. Commands carry no
// fields, so sharing one value between requests is safe.
func (s *Server) clockCmd(cmd engine.Command) fiber.Handler {
	return func(c *fiber.Ctx) error {
		res, err := s.submit(c, cmd)
		if err != nil {
			return err
		}
		return c.JSON(fiber.Map{"ok": 1, "clock": res.(engine.Clock)})
	}
}

func (s *Server) clockBackup(c *fiber.Ctx) error {
	if err := s.node.Snapshot(); err != nil {
		return err
	}
	return ok(c)
}

func (s *Server) started(c *fiber.Ctx) error {
	var running bool
	s.node.Read(func(st *engine.State) { running = st.Options.Clock.Running })
	return okFlag(c, running)
}

func (s *Server) getOptions(c *fiber.Ctx) error {
	var o engine.Options
	s.node.Read(func(st *engine.State) { o = st.OptionsView() })
	return c.JSON(o)
}

func (s *Server) getTimer(c *fiber.Ctx) error {
	var t int
	s.node.Read(func(st *engine.State) { t = st.Options.JudgingTimer })
	return c.JSON(fiber.Map{"judging_timer": t})
}

func (s *Server) backup(c *fiber.Ctx) error {
	name, err := s.node.Backup()
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": 1, "backup": name})
}

func (s *Server) downloadBackup(c *fiber.Ctx) error {
	name := c.Params("name")
	p, err := s.node.BackupPath(name)
	if err != nil {
		return notFound("no backup named %q", name)
	}
	c.Set(fiber.HeaderContentType, "application/gzip")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	return c.SendFile(p, false)
}
