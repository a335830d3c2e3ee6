package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"
)

// "podium healthcheck [-url URL]" asks a running server's GET /healthz and exits 0 when
// it answers 200. It exists for the container image's HEALTHCHECK: the distroless image
// has no shell and no curl. Without -url it asks 127.0.0.1 on PORT (default 8080).
func init() {
	extraCommands = append(extraCommands, struct {
		name, help string
		run        func(args []string) error
	}{
		name: "healthcheck",
		help: "podium healthcheck [-url URL]                 exit 0 when the server's /healthz answers 200 (for container health checks)",
		run:  healthcheck,
	})
}

func healthcheck(args []string) error {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:"+port+"/healthz", "health URL to ask")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New("usage: podium healthcheck [-url URL] [-timeout 3s]")
	}
	client := &http.Client{Timeout: *timeout}
	resp, err := client.Get(*url)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d", *url, resp.StatusCode)
	}
	return nil
}
