# Persimmon: a durable Redis-protocol server.
GO       ?= go
BIN      := bin
PKGS     := ./...
RACEPKGS := ./wal/... ./keyspace/... ./recovery/... ./resp/...

.PHONY: all build run test testrace test-long fuzz fuzz-commands bench bench-seeds fmt vet clean

all: build

build:
	$(GO) build -o $(BIN)/persimmon-server ./cmd/persimmon-server
	$(GO) build -o $(BIN)/persimmon-check ./cmd/persimmon-check
	$(GO) build -o $(BIN)/persimmon-bench ./cmd/persimmon-bench

# Start the server on ./data with the default settings (pmem durability,
# 127.0.0.1:6379); `make run PORT=6380` picks another port.
PORT ?= 6379
run: build
	./$(BIN)/persimmon-server --dir ./data --port $(PORT)

# Unit, integration, crash, torn-write, differential tests, fuzz seed corpora,
# and the race detector on the concurrent packages.
test: build
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 20m $(PKGS)
	$(GO) test -count=1 -race -timeout 20m $(RACEPKGS)
	PERSIMMON_TEST_IO=loop $(GO) test -count=1 -race -timeout 20m ./resp/

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecodeRecord -fuzztime 30s ./wal/
	$(GO) test -run '^$$' -fuzz FuzzDecodeOp -fuzztime 30s ./keyspace/

# The command fuzzer against redis-server for FUZZ_SECONDS (default 600)
# from a random, logged seed (`make test` runs a fixed seed budget).
FUZZ_SECONDS ?= 600
fuzz-commands:
	PERSIMMON_FUZZ_SECONDS=$(FUZZ_SECONDS) $(GO) test -v -count=1 -timeout 0 -run TestCommandFuzz ./e2e/

# Long runs of the randomized tests (each helper adds its own line).
test-long:
	PERSIMMON_FUZZ_SECONDS=600 $(GO) test -count=1 -timeout 0 -run TestCommandFuzz ./e2e/

# Benchmarks (not tests): Go micro-benchmarks, then redis-benchmark and the
# collection workloads side by side with redis-server (see README).
bench: build
	$(GO) test -run '^$$' -bench . -benchtime 2000x ./pmem/
	./scripts/bench.sh
	./scripts/bench-collections.sh
	./scripts/bench-io.sh

# The published tables (../shared/spec/benchmarks.md) reproduced side by side
# with redis-server, scaled down for a 2-core machine; writes BENCHMARKS.md.
bench-seeds: build
	./scripts/bench-seeds.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)
