"""Starting: the built-in component comes compiled inside the binary, so a start needs no cache
and writes none, and the default build runs no other component."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import ALL_TOOLS, HANG_GUARD_SECONDS, MCP_BIN, RustpadServer, legacy_session, minimal_env, request, run_server


def test_a_start_with_an_empty_cache_directory_writes_nothing_there(
    rustpad: RustpadServer, tmp_path: Path
):
    cache = tmp_path / "cache"
    cache.mkdir()
    run = run_server(
        minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_MCP_CACHE_DIR=str(cache)),
        legacy_session(request(1, "tools/list")),
    )
    assert run.returncode == 0, run.stderr
    assert len(run.response(1)["result"]["tools"]) == len(ALL_TOOLS)
    assert list(cache.iterdir()) == []
    assert "cache" not in run.stderr.lower(), run.stderr


def test_a_start_with_an_unwritable_cache_directory_says_nothing_about_it(
    rustpad: RustpadServer, tmp_path: Path
):
    # A path under a regular file: nothing can be written there, root included.
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    run = run_server(
        minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_MCP_CACHE_DIR=str(blocker / "cache")),
        legacy_session(request(1, "tools/list")),
    )
    assert run.returncode == 0, run.stderr
    assert len(run.response(1)["result"]["tools"]) == len(ALL_TOOLS)
    assert "cache" not in run.stderr.lower(), run.stderr


def test_the_default_build_names_what_component_needs(tmp_path: Path):
    """The binary `make build` makes carries no compiler (the Rust suite tests `--component` on a
    build with the `compiler` feature)."""
    component = tmp_path / "other.wasm"
    component.write_bytes(b"\0asm\x0d\0\x01\0")
    done = subprocess.run(
        [str(MCP_BIN), "--component", str(component)],
        env=minimal_env(),
        input="",
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
    )
    assert done.returncode == 1, done.stderr
    assert "needs a build that can compile components" in done.stderr, done.stderr
    assert "--features compiler" in done.stderr
