#!/usr/bin/env bash
# make package-test: installs what `make package` made, each into an empty place, the way a user
# would, then has the Python SDK drive every installed server (tests/python/test_packages.py).
#
# 1. The component in the crate is the one this commit's sources give: the guest is built again
#    from `git archive HEAD` in another directory and must be byte-identical.
# 2. The crate installs with `cargo install --path` from the unpacked package, with a toolchain
#    that lacks wasm32-wasip2: a hard-linked copy of the installed one without that target (the
#    installed toolchain itself is never touched). The copy must fail to build for wasm32-wasip2,
#    or the check would prove nothing.
# 3. The wheel installs into a new virtual environment, offline.
# 4. The npm packages install from their tarballs into an empty prefix, offline; `npx` runs it.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
packages=target/packages
build=${CARGO_TARGET_DIR:-$root/target}
say() { echo "package-test: $*" >&2; }
: "${CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS:?run this through make package-test, which sets the flags of the guest build}"
# Outside the repository, so nothing installed from here can see its workspace. Always the same
# place: cargo names the install's build after its path, and reuses it next time.
work=${TMPDIR:-/tmp}/rustpad-mcp-package-test
rm -rf "$work" && mkdir -p "$work"

shipped=host/component/guest.wasm
[[ -f $shipped ]] || { say "no $shipped: run make package first"; exit 1; }

# 1. ----------------------------------------------------------------------------------------
say "building the guest from this commit's sources elsewhere"
mkdir -p "$work/source"
git archive HEAD | tar -x -C "$work/source"
# In the build's own target directory, so the dependencies compiled for the component are reused:
# what must come out the same is the guest's own build from these sources. The archive dates its
# files to the commit, before the build, so cargo would take the guest built from the checkout as
# fresh and this would compare that file with itself: the sources are dated now, and the
# component must really have been written again.
find "$work/source" -type f -exec touch {} +
rebuilt=$build/guest/wasm32-wasip2/wasm/guest.wasm
built_at=$(stat -c %y "$rebuilt")
# Cargo names the component without a hash, so this build writes the checkout's file: kept, to be
# put back if the bytes differ (cargo would otherwise count the checkout's build as fresh with
# these bytes in it).
cp -p "$rebuilt" "$work/checkout-guest.wasm"
(cd "$work/source" && cargo build --quiet --locked -p guest --profile wasm --target wasm32-wasip2 \
	--target-dir "$build/guest")
[[ $(stat -c %y "$rebuilt") != "$built_at" ]] ||
	{ say "cargo did not build the guest again from $work/source, so nothing would be compared"; exit 1; }
if ! cmp -s "$rebuilt" "$shipped"; then
	say "the packaged component differs from the one built from HEAD's sources"
	say "  packaged: $(sha256sum "$shipped")"
	say "  rebuilt:  $(sha256sum "$rebuilt")"
	say "(uncommitted changes to the guest? commit them, or the build is not reproducible)"
	cp -p "$work/checkout-guest.wasm" "$rebuilt"
	exit 1
fi
say "component reproduced: $(sha256sum "$shipped" | cut -d' ' -f1)"
# The same bytes: dated back, so the binary that embeds them is not built again for this.
touch -d "$built_at" "$rebuilt"

# 2. ----------------------------------------------------------------------------------------
sysroot=$(rustc --print sysroot)
toolchain=$root/target/package-test-toolchain
rm -rf "$toolchain"
cp -al "$sysroot" "$toolchain" 2>/dev/null || { rm -rf "$toolchain"; cp -a "$sysroot" "$toolchain"; }
rm -rf "$toolchain/lib/rustlib/wasm32-wasip2"
[[ $("$toolchain/bin/rustc" --print sysroot) -ef $toolchain ]] ||
	{ say "the copied rustc does not use the copied sysroot"; exit 1; }
echo 'fn main() {}' >"$work/probe.rs"
if "$toolchain/bin/rustc" --target wasm32-wasip2 -o "$work/probe.wasm" "$work/probe.rs" 2>/dev/null; then
	say "the toolchain copy still builds for wasm32-wasip2"; exit 1
fi
if rustup toolchain list 2>/dev/null | grep -q '^nightly' &&
	! rustup +nightly target list --installed 2>/dev/null | grep -q wasm32-wasip2; then
	say "(nightly lacks wasm32-wasip2 too, but installing with it would compile wasmtime again; the copy has the same compiler)"
fi

mkdir -p "$work/crate"
for crate in "$packages"/crates/*.crate; do tar -xzf "$crate" -C "$work/crate"; done
# Unpacked at the same path every run, with the archive's dates: in a build directory that outlives
# the run (.ci/build-cache) cargo would count the last run's install as fresh and install a binary
# with the last run's component in it. Dated now, the crate is built as a user's new install is.
find "$work/crate" -type f -exec touch {} +
package=$(ls -d "$work"/crate/rustpad-mcp-[0-9]*)
rules=$(ls -d "$work"/crate/rustpad-mcp-rules-[0-9]*)
say "cargo install --path $package with a toolchain without wasm32-wasip2"
# The workspace's release settings (Cargo.toml's [profile.release] and its build-override, every
# one of them, read from Cargo.toml: cargo compiles a crate again for any that differs), so the
# install reuses the compiled dependencies in the build directory (a user's `cargo install`
# compiles them once, the same way).
mapfile -t release_settings < <(python3 - "$root/Cargo.toml" <<'PY'
import sys, tomllib
release = tomllib.load(open(sys.argv[1], "rb"))["profile"]["release"]
for prefix, table in (("", release), ("BUILD_OVERRIDE_", release.get("build-override", {}))):
    for key, value in table.items():
        if not isinstance(value, dict):
            name = f"CARGO_PROFILE_RELEASE_{prefix}{key.upper().replace('-', '_')}"
            print(f"{name}={str(value).lower() if isinstance(value, bool) else value}")
PY
)
(cd "$work/crate" && env RUSTC="$toolchain/bin/rustc" "${release_settings[@]}" \
	cargo install --quiet --locked --path "$package" --root "$work/cargo" --target-dir "$build" \
	--config "patch.crates-io.rustpad-mcp-rules.path='$rules'")

# 3. ----------------------------------------------------------------------------------------
say "wheel into a new virtual environment"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$packages"/wheels/*.whl

# 4. ----------------------------------------------------------------------------------------
say "npm packages into an empty prefix"
mkdir -p "$work/npm"
(cd "$work/npm" && npm install --offline --no-audit --no-fund --loglevel=error \
	"$root/$packages"/npm/*.tgz)

# And the main package alone, as with --omit=optional: the launcher must say what is missing.
mkdir -p "$work/npm-without-binary"
(cd "$work/npm-without-binary" && npm install --offline --no-audit --no-fund --loglevel=error \
	"$root/$packages"/npm/rustpad-mcp-sandboxed-[0-9]*.tgz)
export RUSTPAD_MCP_NPM_WITHOUT_BINARY=$work/npm-without-binary

RUSTPAD_MCP_INSTALLED=$(printf '{"cargo": {"command": ["%s"]}, "wheel": {"command": ["%s"]}, "npm": {"command": ["npx", "--no-install", "rustpad-mcp"], "cwd": "%s"}}' \
	"$work/cargo/bin/rustpad-mcp" "$work/venv/bin/rustpad-mcp" "$work/npm")
export RUSTPAD_MCP_INSTALLED
target/pyenv/bin/python -m pytest -q tests/python/test_packages.py
