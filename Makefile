# sagasu — build, demo, test. Everything a newcomer needs is `make demo` and `make test`.
GO        ?= go
BIN       := bin/sagasu
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS   := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
SCIFACT   ?= ../shared/data/scifact
DEMO_DB   := .sagasu/demo.db

.PHONY: all build demo test unit crossbuild lint fmt-check vet staticcheck eval bench peers clean release-snapshot

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/sagasu

# The main job on the embedded default: index this repository's docs, then ask.
demo: build
	@rm -f $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm
	$(BIN) --db $(DEMO_DB) index README.md 'docs/**/*.md'
	$(BIN) --db $(DEMO_DB) query -k 3 "how do I search Japanese text"
	$(BIN) --db $(DEMO_DB) query -k 3 "設定ファイルを作成"
	$(BIN) --db $(DEMO_DB) ask "how do I ask a question about my documents?"

test: lint crossbuild unit

# sagasu must build where its users are: a platform-only call (such as
# getrusage) breaks one of these, not a user's build.
CROSS := linux/arm64 darwin/arm64 windows/amd64
crossbuild:
	@for t in $(CROSS); do \
		echo "cross-build $$t"; \
		GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) build -trimpath -o /dev/null ./cmd/sagasu || exit 1; \
	done

# Every test against the real parts it drives (installed and started by the
# scripts it calls, cached under .tools/), then a report of what ran, failed
# and was skipped and why. See scripts/test.sh.
unit:
	GO=$(GO) bash scripts/test.sh

lint: fmt-check vet staticcheck

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) run $(STATICCHECK) ./...

# Retrieval quality on BEIR SciFact (needs ../shared/data/scifact).
eval: build
	$(BIN) eval beir --dataset $(SCIFACT)

# Indexing throughput and query latency at 100,000 chunks.
bench: build
	$(BIN) bench --chunks 100000 --corpus $(SCIFACT)/corpus.jsonl

# sagasu beside tantivy, Lucene and PISA on the same chunks and queries
# (installs them under .tools/peers; slow; not part of make test).
peers: build
	SAGASU=$(BIN) DATA=$(SCIFACT) bash scripts/peers.sh

# Release archives for linux/darwin/windows x amd64/arm64, a CycloneDX SBOM
# per binary and checksums.txt, into dist/ (slow: six builds; not part of
# make test). VERSION=v1.2.3 names a release.
release-snapshot:
	GO=$(GO) VERSION=$(VERSION) COMMIT=$(COMMIT) bash scripts/release.sh

clean:
	rm -rf bin dist .sagasu/demo.db*
