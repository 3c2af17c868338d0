# The README's commands. `make test` (the tests) and `make check` (linters, cross builds) are
# what CI runs (.ci/run), with e2e-ollama and release-check after them.
GO      ?= go
BIN     := bin/runner
# The shared copy is canonical; tests/testdata holds the same file for machines without ../shared.
XSD     ?= $(firstword $(wildcard ../shared/junit/junit-10.xsd) tests/testdata/junit-10.xsd)
PKGS    := ./...
# urfave_cli_no_docs leaves out urfave/cli's man-page and Markdown generators, which runner
# never calls: their package init (blackfriday's tables and regexps) cost ~0.3 ms of every
# start. Every go command of this Makefile builds with it, as .goreleaser.yaml, the
# Dockerfile and tests/main_test.go (buildTags) do; a plain `go build` works without it.
BUILDTAGS := urfave_cli_no_docs
export GOFLAGS := -tags=$(BUILDTAGS) $(GOFLAGS)

.PHONY: all build test agents check unit lint fmt scenarios junit-check e2e-ollama bench-ollama bench bench-build bench-search bench-loop bench-startup bench-many bench-bench bench-sandbox clean cover lint-actions cross release-check

all: build

# Static, as the releases are (CGO_ENABLED=0 in .goreleaser.yaml): no dynamic loader at
# start (~0.8 ms of every start here) and the same binary the users get.
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) .

## test: the tests and nothing else: the race-enabled unit and end-to-end tests, the oracle suite,
## and its JUnit report checked against the Jenkins xunit schema. No linter build, no cross build.
test: unit scenarios junit-check

## check: what CI runs beside the tests: gofmt, go vet and golangci-lint (its first build is
## long: see lint), actionlint, and the cross builds.
check: lint lint-actions cross

# Pinned tools (actionlint, goreleaser) live in .tools/go.mod, out of runner's own go.mod.
TOOL    := $(GO) tool -modfile=.tools/go.mod

## lint-actions: actionlint over every workflow and the README's example workflows (it also
## checks that `uses: ./` passes only inputs action.yml declares; shellcheck, when
## installed, lints their scripts). action.yml itself is checked by tests/action_test.go.
lint-actions:
	$(TOOL) actionlint .github/workflows/*.yml examples/github-*.yml

## cross: the release platforms build (Windows has no SIGXCPU, macOS no waitid WNOWAIT).
cross:
	GOOS=windows GOARCH=amd64 $(GO) build -o /dev/null ./...
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./...

## release-check: the GoReleaser config is valid. A separate target: the first `go tool
## goreleaser` downloads ~500 MB of modules and builds them (886 s on a shared, loaded 2-core
## machine; 3.3 s warm), so .ci/run calls it after make test rather than make test doing it.
release-check:
	$(TOOL) goreleaser check

unit:
	$(GO) test -race -count=1 $(PKGS)

## agents: install the external agents the e2e tests drive (Claude Code, Codex CLI) at the
## versions tests/agents/package-lock.json pins, into tests/agents/node_modules (~810 MB; npm's
## cache makes a repeat fast). Without it those tests skip; with RUNNER_REQUIRE_AGENTS=1 they fail.
agents:
	cd tests/agents && npm ci --no-audit --no-fund --loglevel=error

## lint: gofmt, go vet, and golangci-lint with .golangci.yml (errcheck, govet, ineffassign,
## staticcheck, unused; gocyclo at most 25 and funlen at most 80 lines outside tests;
## forbidigo: agent-controlled files are read only through runner/workspace/door).
## golangci-lint is pinned in .tools/lint/go.mod, a module of its own: resolved together with
## goreleaser in .tools/go.mod it moved ~60 of goreleaser's dependencies. Its first build
## (what CI's clean clone pays, modules from the Go proxy) took 5m25s user CPU, 19 min of wall
## time nice'd on this 2-core machine at load 15-17; a warm `make lint` takes 10 s unchanged,
## 38 s after an edit (same machine, load 16).
LINT    := $(GO) tool -modfile=.tools/lint/go.mod golangci-lint
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(LINT) run $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

## scenarios: the main job on the default model (each task's reference solution).
scenarios: build
	$(BIN) run --model oracle --out runner-out --junit runner-out/junit.xml --json runner-out/report.json scenarios/

junit-check:
	@if command -v xmllint >/dev/null && [ -f $(XSD) ]; then \
	  xmllint --noout --schema $(XSD) runner-out/junit.xml; \
	else echo "junit-check: xmllint or $(XSD) missing, skipped"; [ -z "$$CI" ]; fi

## e2e-ollama: runner against the real Ollama server: built from the module go.mod requires
## (once per version, into ~/.cache/runner/ollama-server; 10-20 min cold on 2 cores, needs
## g++, nlohmann-json3-dev and libstb-dev) or OLLAMA_BIN=/path/to/ollama to use your own,
## serving a deterministic model generated in Go (tests/ollama), tiny and in a real model's
## shape (bigram.Shapes: RUNNER_OLLAMA_SHAPES=llama3.2-1b,llama3-8b adds shapes for a GPU).
e2e-ollama:
	$(GO) test -tags=$(BUILDTAGS),ollama_e2e -count=1 -timeout 45m -v ./tests/ollama/

## bench-ollama: per model shape (tiny, small, and RUNNER_OLLAMA_SHAPES), the loads runner bench
## counts and their time against the server's log, and runner's overhead per step against a bare
## client sending the same requests to the same real Ollama server and model, alternated in one
## run (builds the server as e2e-ollama does).
bench-ollama:
	RUNNER_BENCH_OLLAMA=1 $(GO) test -tags=$(BUILDTAGS),ollama_e2e -count=1 -timeout 45m -run 'TestOverhead' -v ./tests/ollama/

bench: bench-loop bench-sandbox bench-startup bench-search bench-many bench-bench

bench-loop:
	$(GO) test -run '^$$' -bench . -benchmem ./runner/agent/ ./runner/transcript/
	./scripts/bench-loop.sh

## bench-build: a cold build, packages linked and start-up against BASE (default f9bf473), side by side.
bench-build:
	./scripts/bench-build.sh $(BASE)

bench-startup:
	./scripts/bench-startup.sh

bench-many:
	./scripts/bench-many.sh

bench-search:
	./scripts/bench-search.sh

## bench-sandbox: a sandboxed step against the same bwrap argv (or Landlock helper) started
## bare, alternated in one run: gap and ratio, medians, with the load average
bench-sandbox:
	./scripts/bench-sandbox.sh

## bench-bench: runner bench's own overhead, 3 models x 20 scenarios x 5 repeats against an instant fake
bench-bench:
	./scripts/bench-bench.sh

clean:
	rm -rf bin runner-out runner-out.prev bench-out bench-out.prev cover-out cover-out.runner

## cover: statement coverage of every tools/ package, counting the code each package's
## tests reach in the others and the sandbox helper the tests re-execute (its counters
## reach COVERDIR through the helper's config, since exec would lose them).
# Not under runner-out: that folder holds one run, and a run moves it aside (docs/running.md).
COVERDIR ?= $(CURDIR)/cover-out
COVERPKG ?= ./tools/...
cover:
	rm -rf $(COVERDIR) && mkdir -p $(COVERDIR)
	$(GO) build -cover -covermode=atomic -coverpkg=$(COVERPKG),. -o $(COVERDIR).runner .
	RUNNER_COVER_HELPER=$(COVERDIR).runner $(GO) test -count=1 -covermode=atomic -coverpkg=$(COVERPKG) $(COVERPKG) \
	  -args -test.gocoverdir=$(COVERDIR) > $(COVERDIR).log 2>&1 || (cat $(COVERDIR).log; exit 1)
	$(GO) tool covdata percent -i $(COVERDIR) -pkg $$($(GO) list $(COVERPKG) | paste -sd, -)
