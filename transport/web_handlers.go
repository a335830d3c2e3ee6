package transport

import "github.com/gofiber/fiber/v2"

// routesWeb registers the embedded web app.
func (s *Server) routesWeb(r fiber.Router) {}
