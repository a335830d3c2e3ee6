package transport

import "github.com/gofiber/fiber/v2"

// routesJudging registers the judging flow (SPEC §5): next, skip, finish, rank, star, notes, judged projects.
func (s *Server) routesJudging(r fiber.Router) {}
