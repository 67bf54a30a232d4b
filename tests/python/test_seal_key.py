"""The seal key on stdio: kept once per user, so the two-call token works with clients that
start a server for every call (LangChain's MCP adapters and the Inspector CLI do), and still
works once; where it cannot be kept, the server says so once and its refusal names the cause."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from conftest import RustpadServer, legacy_session, minimal_env, request, run_server

TOKEN = re.compile(r'confirm_token="([0-9a-f]{64})"')
CANNOT_KEEP = "rustpad-mcp: the seal key cannot be kept for this user"


def one_call(env: dict[str, str], arguments: dict) -> tuple[dict, str]:
    """A fresh server process for a single tools/call, as per-call clients do it."""
    run = run_server(
        env,
        legacy_session(request(1, "tools/call", {"name": "set_document", "arguments": arguments})),
    )
    assert run.returncode == 0, run.stderr
    return run.response(1)["result"], run.stderr


def test_a_token_from_one_process_works_in_the_next_and_only_once(
    rustpad: RustpadServer, pad: str, tmp_path: Path
):
    rustpad.seed(pad, "old content")
    env = minimal_env(RUSTPAD_URL=rustpad.url, ELICITATION="false", XDG_STATE_HOME=str(tmp_path))
    arguments = {"id": pad, "text": "new content"}
    offer, stderr = one_call(env, arguments)
    assert offer["isError"] is True
    assert CANNOT_KEEP not in stderr, stderr
    [token] = TOKEN.findall(offer["content"][0]["text"])
    assert rustpad.text(pad) == "old content"

    done, _ = one_call(env, {**arguments, "confirm_token": token})
    assert done.get("isError") is not True, done
    assert rustpad.text(pad) == "new content"

    # A third process, the pad set back by a person: the token is spent, whichever process
    # spent it (the pad's history shows its use).
    rustpad.set_by_person(pad, "old content")
    again, _ = one_call(env, {**arguments, "confirm_token": token})
    assert again["isError"] is True
    assert "already used" in again["content"][0]["text"], again
    assert rustpad.text(pad) == "old content"


def test_the_key_file_is_the_owners_alone(rustpad: RustpadServer, tmp_path: Path):
    run = run_server(minimal_env(RUSTPAD_URL=rustpad.url, XDG_STATE_HOME=str(tmp_path)), [])
    assert run.returncode == 0, run.stderr
    key = tmp_path / "rustpad-mcp" / "seal-key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert re.fullmatch(r"[0-9a-f]{64}\n", key.read_text())
    # A key others could read is not used; the server says so and keeps its own.
    os.chmod(key, 0o644)
    run = run_server(minimal_env(RUSTPAD_URL=rustpad.url, XDG_STATE_HOME=str(tmp_path)), [])
    assert run.returncode == 0, run.stderr
    assert CANNOT_KEEP in run.stderr and "chmod 600" in run.stderr, run.stderr


def test_without_a_writable_state_directory_the_refusal_names_the_cause(
    rustpad: RustpadServer, pad: str, tmp_path: Path
):
    rustpad.seed(pad, "old content")
    # A path under a regular file: no process, root included, can make a directory there.
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = minimal_env(
        RUSTPAD_URL=rustpad.url, ELICITATION="false", XDG_STATE_HOME=str(blocker / "state")
    )
    arguments = {"id": pad, "text": "new content"}
    offer, stderr = one_call(env, arguments)
    assert stderr.count(CANNOT_KEEP) == 1, stderr
    assert "RUSTPAD_SEAL_KEY" in stderr
    [token] = TOKEN.findall(offer["content"][0]["text"])
    refused, _ = one_call(env, {**arguments, "confirm_token": token})
    message = refused["content"][0]["text"]
    assert refused["isError"] is True
    assert "started anew" in message and "RUSTPAD_SEAL_KEY" in message, message
    assert rustpad.text(pad) == "old content"
