package transport

import "github.com/gofiber/fiber/v2"

// routesContent registers the public content API and its management routes (SPEC §9).
func (s *Server) routesContent(r fiber.Router) {}
