package transport

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

// openAPIDoc is the OpenAPI 3.1 description of every route, served at
// GET /api/openapi.json. The file is the single source of truth: a new route is one
// entry under "paths" (path parameters as {name}, security "admin"/"judge" schemes,
// a 200 response naming a schema under components/schemas, "default" the Error
// response). openapi_test.go checks it against the routes Fiber has and validates real
// requests and responses against it.
//
//go:embed openapi.json
var openAPIDoc []byte

// routesOpenAPI serves the API description (no auth: it holds no secrets).
func (s *Server) routesOpenAPI(api fiber.Router) {
	api.Get("/openapi.json", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		c.Set(fiber.HeaderCacheControl, "no-cache")
		return c.Send(openAPIDoc)
	})
}
