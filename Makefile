# Podium — the two commands a newcomer needs are `make run` and `make test`.
GO ?= go
DATA_DIR ?= ./data

.PHONY: run build test vet bench loadtest

build:
	$(GO) build -o ./podium ./cmd/podium

run: build
	DATA_DIR=$(DATA_DIR) ./podium

vet:
	$(GO) vet ./...

test: vet
	$(GO) test -race -timeout 9m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
