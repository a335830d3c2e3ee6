package transport

import "github.com/gofiber/fiber/v2"

// routesRealtime registers the websocket endpoint (SPEC §7) and metrics.
func (s *Server) routesRealtime(r fiber.Router) {}
