"""The stdio server's state directory trusts nothing it finds there. The server runs as a second
user (nobody) while this test, as root, plays the other user who can write in that user's
directory: a directory others may change, a link or a FIFO where the key should be, a record
planted to be overwritten. Each is refused with a notice naming the path, and the server signs
with a key of its own; nothing it finds can make it wait, overwrite a file or accept an approval.

Needs root (to become the second user); skipped elsewhere, and fails under CI=true without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import HANG_GUARD_SECONDS, MCP_BIN, RustpadServer, legacy_session, request

NOBODY = 65534
TOKEN = re.compile(r'confirm_token="([0-9a-f]{64})"')
CANNOT_KEEP = "rustpad-mcp: the seal key cannot be kept for this user"

if os.geteuid() != 0:
    if os.environ.get("CI") == "true":
        pytest.fail("the state-directory tests need root (CI runs as root)", pytrace=False)
    pytest.skip("the state-directory tests need root to run the server as a second user", allow_module_level=True)


@pytest.fixture(scope="module")
def binary() -> Iterator[Path]:
    """The server binary where the second user may run it."""
    place = Path(tempfile.mkdtemp(prefix="rustpad-mcp-second-user-"))
    try:
        place.chmod(0o755)
        copy = place / "rustpad-mcp"
        shutil.copy2(MCP_BIN, copy)
        copy.chmod(0o755)
        yield copy
    finally:
        shutil.rmtree(place, ignore_errors=True)


@pytest.fixture
def home() -> Iterator[Path]:
    """A state root the second user owns; `home / "rustpad-mcp"` is the state directory."""
    root = Path(tempfile.mkdtemp(prefix="rustpad-mcp-state-"))
    try:
        root.chmod(0o755)
        os.chown(root, NOBODY, NOBODY)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def as_second_user(binary: Path, rustpad: RustpadServer, home: Path, messages: list[Any], timeout: float = HANG_GUARD_SECONDS):
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "XDG_STATE_HOME": str(home),
        "RUSTPAD_URL": rustpad.url,
        "ELICITATION": "false",
    }
    payload = "".join(json.dumps(message) + "\n" for message in messages)
    command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", str(binary)]
    done = subprocess.run(command, input=payload, env=env, capture_output=True, text=True, timeout=timeout)
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return done, {reply.get("id"): reply for reply in replies}


def one_call(binary, rustpad, home, arguments: dict, timeout: float = HANG_GUARD_SECONDS):
    message = request(1, "tools/call", {"name": "set_document", "arguments": arguments})
    done, replies = as_second_user(binary, rustpad, home, legacy_session(message), timeout)
    assert done.returncode == 0, done.stderr
    return replies[1]["result"], done.stderr


def owned_by_second_user(path: Path, mode: int) -> None:
    os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    if not path.is_symlink():
        path.chmod(mode)


def test_the_second_user_gets_a_private_key(binary, rustpad, pad, home):
    rustpad.seed(pad, "old content")
    offer, stderr = one_call(binary, rustpad, home, {"id": pad, "text": "new"})
    assert CANNOT_KEEP not in stderr, stderr
    key = home / "rustpad-mcp" / "seal-key"
    assert key.stat().st_uid == NOBODY and (key.stat().st_mode & 0o777) == 0o600
    assert TOKEN.findall(offer["content"][0]["text"])


def test_a_directory_others_can_write_in_is_not_trusted(binary, rustpad, pad, home):
    state = home / "rustpad-mcp"
    state.mkdir()
    owned_by_second_user(state, 0o777)
    rustpad.seed(pad, "old content")
    _, stderr = one_call(binary, rustpad, home, {"id": pad, "text": "new"})
    assert stderr.count(CANNOT_KEEP) == 1, stderr
    assert str(state) in stderr and "chmod 700" in stderr, stderr
    assert not (state / "seal-key").exists()


def test_a_key_that_is_a_link_or_another_users_is_refused(binary, rustpad, pad, home):
    state = home / "rustpad-mcp"
    state.mkdir()
    owned_by_second_user(state, 0o700)
    planted = home / "planted"
    planted.write_text("ab" * 32 + "\n")
    owned_by_second_user(planted, 0o600)
    (state / "seal-key").symlink_to(planted)
    rustpad.seed(pad, "old content")
    _, stderr = one_call(binary, rustpad, home, {"id": pad, "text": "new"})
    assert "symbolic link" in stderr and CANNOT_KEEP in stderr, stderr
    (state / "seal-key").unlink()
    # A key file the other user (here root) owns.
    shutil.copy(planted, state / "seal-key")
    (state / "seal-key").chmod(0o644)
    _, stderr = one_call(binary, rustpad, home, {"id": pad, "text": "new"})
    assert "belongs to another user" in stderr or "cannot read" in stderr, stderr


def test_a_fifo_for_a_key_is_refused_at_once(binary, rustpad, pad, home):
    state = home / "rustpad-mcp"
    state.mkdir()
    owned_by_second_user(state, 0o700)
    os.mkfifo(state / "seal-key")
    owned_by_second_user(state / "seal-key", 0o600)
    rustpad.seed(pad, "old content")
    started = time.monotonic()
    _, stderr = one_call(binary, rustpad, home, {"id": pad, "text": "new"}, timeout=15)
    assert "not a regular file" in stderr and CANNOT_KEEP in stderr, stderr
    assert time.monotonic() - started < 10


def test_a_planted_record_is_never_written_and_never_waited_on(binary, rustpad, pad, home):
    """Earlier servers kept spent ids in `spent-ids` beside the key: a link there made an
    approval overwrite the file it pointed at, and a FIFO made approvals (and everything queued
    behind them) wait. Nothing is written there now; the pad's history holds what was used."""
    state = home / "rustpad-mcp"
    one_call(binary, rustpad, home, {"id": pad, "text": "x"})
    victim = home / "victim"
    victim.write_text("".join(f"line {n}\n" for n in range(50)))
    owned_by_second_user(victim, 0o600)
    (state / "spent-ids").symlink_to(victim)
    rustpad.seed(pad, "old content")
    arguments = {"id": pad, "text": "new content"}
    offer, _ = one_call(binary, rustpad, home, arguments)
    [token] = TOKEN.findall(offer["content"][0]["text"])
    done, _ = one_call(binary, rustpad, home, {**arguments, "confirm_token": token})
    assert done.get("isError") is not True, done
    assert victim.read_text().count("\n") == 50
    (state / "spent-ids").unlink()
    # A FIFO: four approvals and the requests behind them are all answered promptly.
    os.mkfifo(state / "spent-ids")
    owned_by_second_user(state / "spent-ids", 0o600)
    pads = [f"{pad}-{n}" for n in range(4)]
    tokens = []
    for name in pads:
        rustpad.seed(name, "old content")
        offer, _ = one_call(binary, rustpad, home, {"id": name, "text": "new content"})
        [issued] = TOKEN.findall(offer["content"][0]["text"])
        tokens.append(issued)
    calls = [
        request(10 + n, "tools/call", {"name": "set_document", "arguments": {"id": name, "text": "new content", "confirm_token": token}})
        for n, (name, token) in enumerate(zip(pads, tokens))
    ]
    started = time.monotonic()
    done, replies = as_second_user(binary, rustpad, home, legacy_session(*calls, request(20, "ping"), request(21, "tools/list")), timeout=20)
    assert time.monotonic() - started < 15
    assert replies[20]["result"] == {} and replies[21]["result"]["tools"]
    for n, name in enumerate(pads):
        assert replies[10 + n]["result"].get("isError") is not True, replies[10 + n]
        assert rustpad.text(name) == "new content"


def test_a_read_only_state_directory_still_lets_a_token_work_once(binary, rustpad, pad, home):
    state = home / "rustpad-mcp"
    one_call(binary, rustpad, home, {"id": pad, "text": "x"})
    state.chmod(0o500)
    rustpad.seed(pad, "old content")
    arguments = {"id": pad, "text": "new content"}
    offer, stderr = one_call(binary, rustpad, home, arguments)
    assert CANNOT_KEEP not in stderr, stderr
    [token] = TOKEN.findall(offer["content"][0]["text"])
    done, _ = one_call(binary, rustpad, home, {**arguments, "confirm_token": token})
    assert done.get("isError") is not True, done
    assert rustpad.text(pad) == "new content"
    rustpad.set_by_person(pad, "old content")
    again, _ = one_call(binary, rustpad, home, {**arguments, "confirm_token": token})
    assert "already used" in again["content"][0]["text"], again
    assert rustpad.text(pad) == "old content"
