# Podium — the two commands a newcomer needs are `make run` and `make test`.
GO ?= go
DATA_DIR ?= ./data

.PHONY: run build test vet bench bench-ratio bench-recovery loadtest cluster bench-cluster

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

# Recovery (docs/performance.md): journal replay of the realistic mix in records/s
# (BenchmarkReplay, also in `make bench`), then through the binary start → /readyz 200
# on an empty directory, after kill -9 (snapshot + 40,000 records) and after a clean
# restart, and the sponsors route against net/http serving the same bytes.
bench-recovery:
	$(GO) test -run '^$$' -bench 'Replay$$' -benchtime 3x -count 3 ./persist
	@d=$$(mktemp -d); trap 'rm -rf $$d' EXIT; \
	echo "PODIUM_RECOVERY_FIXTURE=$$d/fixture $(GO) test ./persist -run WriteRecoveryFixture"; \
	PODIUM_RECOVERY_FIXTURE=$$d/fixture $(GO) test -count=1 ./persist -run WriteRecoveryFixture && \
	echo "PODIUM_RECOVERY_FIXTURE=$$d/fixture $(GO) test ./cmd/podium -run RecoveryTimes -v" && \
	PODIUM_RECOVERY_FIXTURE=$$d/fixture $(GO) test -count=1 ./cmd/podium -run RecoveryTimes -v
	PODIUM_SPONSORS_BENCH=1 $(GO) test -count=1 ./cmd/podium -run SponsorsAgainstNetHTTP -v

# Ratio benchmark alone (heartbeat vs judge actions; websocket hub vs a tuned
# gorilla/websocket broadcaster; median of 5 rounds in one run).
BENCH_RATIO_ARGS ?=
bench-ratio: build
	$(GO) build -o ./loadtest-bin ./cmd/loadtest
	./loadtest-bin -server ./podium -ratio -json bench-ratio-report.json $(BENCH_RATIO_ARGS)

# Three cluster nodes on loopback (docs/cluster.md): HTTP 8081-8083, raft 7001-7003,
# data under $(DATA_DIR)/node1..3, a generated secret kept in $(DATA_DIR)/cluster_secret.
# Ctrl-C stops all three.
CLUSTER_PEERS_LOCAL = node1=127.0.0.1:7001=http://127.0.0.1:8081,node2=127.0.0.1:7002=http://127.0.0.1:8082,node3=127.0.0.1:7003=http://127.0.0.1:8083
cluster: build
	@mkdir -p $(DATA_DIR)/node1 $(DATA_DIR)/node2 $(DATA_DIR)/node3
	@[ -s $(DATA_DIR)/cluster_secret ] || (umask 077; head -c 36 /dev/urandom | base64 | tr -d '\n/+=' > $(DATA_DIR)/cluster_secret)
	@[ -s $(DATA_DIR)/admin_password ] || (umask 077; head -c 18 /dev/urandom | base64 | tr -d '\n/+=' > $(DATA_DIR)/admin_password)
	@secret=$$(cat $(DATA_DIR)/cluster_secret); pw=$$(cat $(DATA_DIR)/admin_password); pids=""; \
	for i in 1 2 3; do \
		NODE_ID=node$$i RAFT_ADDR=127.0.0.1:700$$i PORT=808$$i DATA_DIR=$(DATA_DIR)/node$$i \
		CLUSTER_PEERS="$(CLUSTER_PEERS_LOCAL)" CLUSTER_SECRET="$$secret" ADMIN_PASSWORD="$$pw" \
		./podium & pids="$$pids $$!"; \
	done; \
	trap 'kill $$pids 2>/dev/null; wait; exit 0' INT TERM; \
	echo "cluster: http://127.0.0.1:8081 http://127.0.0.1:8082 http://127.0.0.1:8083 (admin password in $(DATA_DIR)/admin_password); Ctrl-C stops all"; \
	wait

# Journaled judge actions on one node, then on a 3-node loopback cluster (judges spread
# over the three nodes; raft ports 17001-17003, HTTP 18081-18083).
BENCH_CLUSTER_ARGS ?= -judges 100 -projects 300 -watchers 0 -readers 0 -duration 15s -think 0 -clock-every -1s -sample-every -1s
bench-cluster: build
	$(GO) build -o ./loadtest-bin ./cmd/loadtest
	./loadtest-bin -server ./podium -json bench-single.json $(BENCH_CLUSTER_ARGS)
	@d=$$(mktemp -d); pids=""; secret=bench-cluster-secret-$$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n'); \
	peers="node1=127.0.0.1:17001=http://127.0.0.1:18081,node2=127.0.0.1:17002=http://127.0.0.1:18082,node3=127.0.0.1:17003=http://127.0.0.1:18083"; \
	for i in 1 2 3; do \
		NODE_ID=node$$i RAFT_ADDR=127.0.0.1:1700$$i PORT=1808$$i DATA_DIR=$$d/node$$i CLUSTER_PEERS=$$peers \
		CLUSTER_SECRET=$$secret ADMIN_PASSWORD=bench LOG_LEVEL=warn ./podium > $$d/node$$i.log 2>&1 & pids="$$pids $$!"; \
	done; \
	trap 'kill $$pids 2>/dev/null; wait; rm -rf $$d' EXIT INT TERM; \
	for t in $$(seq 1 100); do n=0; for i in 1 2 3; do \
		[ "$$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:1808$$i/readyz)" = 200 ] && n=$$((n+1)); done; \
		[ $$n = 3 ] && break; sleep 0.2; done; \
	echo "./loadtest-bin -url http://127.0.0.1:18081,http://127.0.0.1:18082,http://127.0.0.1:18083 -admin-password bench -json bench-cluster.json $(BENCH_CLUSTER_ARGS)"; \
	./loadtest-bin -url http://127.0.0.1:18081,http://127.0.0.1:18082,http://127.0.0.1:18083 -admin-password bench -json bench-cluster.json $(BENCH_CLUSTER_ARGS)
