package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"podium/engine"
	"podium/persist"
	"podium/transport"
)

// "podium content import <file.json> [data-dir]" loads the bulk content document of
// docs/behaviour.md#public-content-api ({schedule, sponsors, faq}) into a data directory while the server is
// stopped. It goes through the same parsing, validation and journal as
// PUT /api/admin/content, so the import is atomic and durable. A running server holds
// the directory's lock; to change its content use PUT /api/admin/content instead.
func init() {
	extraCommands = append(extraCommands, struct {
		name, help string
		run        func(args []string) error
	}{
		name: "content",
		help: "podium content import <file.json> [data-dir] replace schedule, sponsors and FAQ in a stopped server's data directory",
		run:  contentCommand,
	})
}

const contentUsage = "usage: podium content import <file.json> [data-dir] (data-dir defaults to DATA_DIR or ./data)"

func contentCommand(args []string) error {
	if len(args) < 2 || len(args) > 3 || args[0] != "import" {
		return errors.New(contentUsage)
	}
	file := args[1]
	dir := env("DATA_DIR")
	if len(args) == 3 {
		dir = args[2]
	}
	if dir == "" {
		dir = "./data"
	}
	n, err := importContent(file, dir)
	if err != nil {
		return err
	}
	fmt.Printf("imported %d schedule entries, %d sponsors and %d FAQ entries into %s\n", n[0], n[1], n[2], dir)
	return nil
}

// importContent replaces the content stored in dir with the document in file and
// returns how many entries of each kind it holds.
func importContent(file, dir string) ([3]int, error) {
	var n [3]int
	body, err := os.ReadFile(file)
	if err != nil {
		return n, fmt.Errorf("read content document: %w", err)
	}
	cmd, err := transport.ParseContentDocument(body)
	if err != nil {
		return n, fmt.Errorf("%s: %w", file, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return n, fmt.Errorf("create data dir: %w", err)
	}
	node, err := persist.Open(dir, persist.Options{Log: zerolog.New(os.Stderr).Level(zerolog.WarnLevel)})
	if err != nil {
		return n, fmt.Errorf("open data directory %s (if the server is running, stop it or use PUT /api/admin/content): %w", dir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err = node.Submit(ctx, engine.Admin, cmd)
	if cerr := node.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close data directory: %w", cerr)
	}
	if err != nil {
		return n, fmt.Errorf("%s: %w", file, err)
	}
	return [3]int{len(cmd.Schedule), len(cmd.Sponsors), len(cmd.FAQ)}, nil
}
