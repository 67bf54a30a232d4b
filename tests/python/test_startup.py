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


def _open_files_limit_of(soft: int, hard: int, env: dict[str, str]) -> tuple[int, str]:
    """Starts the server under an open-file limit of `soft`/`hard`; returns the soft limit it then
    runs with (from /proc) and what it said on stderr."""
    import resource
    import time

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    server = subprocess.Popen(
        [str(MCP_BIN)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=limited,
    )
    try:
        limits = Path(f"/proc/{server.pid}/limits")
        for _ in range(100):
            # Raised before the server announces itself, so the first line on stderr comes after it.
            line = next(line for line in limits.read_text().splitlines() if line.startswith("Max open files"))
            running_with = int(line.split()[3])
            if running_with != soft:
                break
            time.sleep(0.05)
    finally:
        server.stdin.close()
        server.wait(timeout=HANG_GUARD_SECONDS)
    return running_with, server.stderr.read().decode()


def test_the_open_file_limit_is_raised_to_the_hard_one_and_a_short_one_is_told(rustpad: RustpadServer):
    env = minimal_env(RUSTPAD_URL=rustpad.url)
    running_with, said = _open_files_limit_of(256, 4096, env)
    assert running_with == 4096
    assert "may open" not in said, said
    # A hard limit below what the settings may need: the operator hears of it, and it still starts.
    running_with, said = _open_files_limit_of(64, 512, minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_MCP_WATCHED_PADS="1000"))
    assert running_with == 512
    assert "this process may open 512 files, and its settings may need 1144" in said, said
