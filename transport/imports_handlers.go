package transport

import "github.com/gofiber/fiber/v2"

// routesImportExport registers CSV and submission imports, exports, QR and email (SPEC §4, §10).
func (s *Server) routesImportExport(r fiber.Router) {}
