# Podium — the two commands a newcomer needs are `make run` and `make test`.
GO ?= go
DATA_DIR ?= ./data

.PHONY: run build test vet bench bench-ratio loadtest

build:
	$(GO) build -o ./podium ./cmd/podium

run: build
	DATA_DIR=$(DATA_DIR) ./podium

vet:
	$(GO) vet ./...

test: vet
	$(GO) test -race -timeout 9m ./...

# Load generator (loadtest/, cmd/loadtest): the standard scenario against a server it
# starts on a temp data dir. Override e.g. `make loadtest LOADTEST_ARGS="-judges 50"`.
LOADTEST_ARGS ?= -judges 500 -projects 1000 -watchers 2000 -readers 4 -duration 60s -think 0
BENCH_LOAD_ARGS ?= -judges 100 -projects 300 -watchers 200 -readers 2 -duration 10s -think 0

loadtest: build
	$(GO) build -o ./loadtest-bin ./cmd/loadtest
	./loadtest-bin -server ./podium -json loadtest-report.json $(LOADTEST_ARGS)

# make prints each command line before running it, so the numbers can be reproduced.
bench: build
	$(GO) build -o ./loadtest-bin ./cmd/loadtest
	$(GO) test -run '^$$' -bench . -benchmem ./...
	./loadtest-bin -server ./podium -json bench-load-report.json $(BENCH_LOAD_ARGS)
	./loadtest-bin -server ./podium -ratio -json bench-ratio-report.json $(BENCH_RATIO_ARGS)

# Ratio benchmark alone (heartbeat vs judge actions; websocket hub vs a tuned
# gorilla/websocket broadcaster; median of 5 rounds in one run).
BENCH_RATIO_ARGS ?=
bench-ratio: build
	$(GO) build -o ./loadtest-bin ./cmd/loadtest
	./loadtest-bin -server ./podium -ratio -json bench-ratio-report.json $(BENCH_RATIO_ARGS)
