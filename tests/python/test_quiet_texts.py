"""Every tool's text block in its quiet cases (an empty pad, nothing changed, a wait that ran
out, a count of one): it reads as a sentence, never ends in an empty data section, and says
"1 character", not "1 characters"."""

from __future__ import annotations

import re

import pytest

from catalogue import TOOLS
from conftest import call, failed, ok, text_of

pytestmark = pytest.mark.anyio

# Where pad text begins in a text block (the rest of the preamble is the guest's to word).
UNTRUSTED_PREAMBLE = "Untrusted content from Rustpad follows."

# A count of one with a plural noun, or a noun that will not commit to either.
SINGULAR_AS_PLURAL = re.compile(
    r"(?<![\d.,])1 (characters|lines|edits|revisions|operations|authors|changes|occurrences|"
    r"people|problems|more problems|writes|seconds|times)\b"
)
HEDGED_PLURAL = re.compile(r"\w\(s\)")


def assert_reads_well(tool: str, text: str) -> None:
    assert text.strip(), f"{tool}: the text block is empty"
    assert not text.endswith(("\n\n", " ")), f"{tool}: the text ends in blank space: {text!r}"
    if UNTRUSTED_PREAMBLE in text:
        after = text.split(UNTRUSTED_PREAMBLE, 1)[1]
        assert after.strip(), f"{tool}: the untrusted preamble introduces nothing: {text!r}"
    assert not SINGULAR_AS_PLURAL.search(text), f"{tool}: {SINGULAR_AS_PLURAL.search(text)[0]!r} in {text!r}"
    assert not HEDGED_PLURAL.search(text), f"{tool}: {text!r}"


async def test_every_tool_reads_well_in_its_quiet_cases(open_client, rustpad, new_pad):
    empty, one, created, blank = new_pad("empty"), new_pad("one"), new_pad("created"), new_pad("blank")
    rustpad.seed(one, "x")
    rendered: dict[str, list[str]] = {}

    async def render(tool: str, arguments: dict, succeeds: bool = True) -> dict | None:
        result = await call(client, tool, arguments)
        text = text_of(result)
        rendered.setdefault(tool, []).append(text)
        assert_reads_well(tool, text)
        return ok(result) if succeeds else (failed(result) and None)

    async with open_client("legacy") as client:
        whole = await render("get_document", {"id": empty})
        assert whole["text"] == ""
        window = await render("get_document", {"id": one, "start_line": 1})
        await render("get_document", {"id": empty, "start_line": 2}, succeeds=False)
        await render("get_document_info", {"id": empty})
        await render("get_stats", {})
        changes = await render("get_changes", {"id": one, "base": window["base"]})
        assert changes["diff"] == ""
        waited = await render("wait_for_changes", {"id": one, "base": window["base"], "timeout_seconds": 1})
        assert waited["timed_out"] is True
        await render("create_document", {"id": created})
        await render("create_document", {"id": new_pad("created-one"), "text": "y"})
        await render("set_document", {"id": blank, "text": "z"})
        await render("append_to_document", {"id": blank, "text": "!"})
        await render("append_to_document", {"id": empty, "text": "a"})
        await render("replace_in_document", {"id": one, "search": "absent", "replace": "b"}, succeeds=False)
        await render(
            "edit_document",
            {"id": one, "edits": [{"old_text": "", "new_text": "w", "line": 1}], "dry_run": True},
        )
        await render("edit_document", {"id": one, "edits": [{"old_text": "", "new_text": "w", "line": 1}]})
        await render("edit_document", {"id": one, "edits": [{"old_text": "", "new_text": "v", "line": 9}]}, succeeds=False)
        await render("set_language", {"id": one, "language": "rust"})
        # One change of one character taken back, a preview of it, and nothing left the second time.
        single = await render("append_to_document", {"id": one, "text": "q"})
        preview = {"id": one, "change": single["change"], "dry_run": True}
        await render("revert_changes", preview)
        taken = await render("revert_changes", {"id": one, "change": single["change"]})
        assert taken["taken_back"] == 1 and taken["removed_characters"] == 1
        nothing = await render("revert_changes", {"id": one, "change": single["change"]})
        assert nothing["taken_back"] == 0
        await render("revert_changes", {"id": one}, succeeds=False)

    every_tool = {tool.name for tool in TOOLS}
    assert set(rendered) == every_tool, f"tools not rendered: {every_tool - set(rendered)}"
    # The quiet cases say so in words.
    assert rendered["wait_for_changes"][0].startswith("Nobody else changed pad")
    assert "1 character" in rendered["append_to_document"][1]
    assert rendered["revert_changes"][1].startswith("Took back 1 change (0 characters put back, 1 character removed)")
    assert rendered["revert_changes"][2].startswith("Nothing to take back in pad")
    assert ", line 1 of 1, at revision 1" in rendered["get_document"][1]
