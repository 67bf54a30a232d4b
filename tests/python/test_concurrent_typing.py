"""Randomised trials: a person types into a pad (the typist CLI, with the browser's OT client
algorithm, random unicode including astral characters and ZWJ sequences) while the server
appends, replaces or sets the language on the same pad.

Oracle, per trial:
- the typist's final text equals the server's (both converged);
- no character is lost or duplicated: the multiset of code points of the final text is the
  initial text plus everything typed plus what the server inserted, minus what it deleted;
- append: the marker (characters the typist never types) occurs exactly once and contiguous,
  and the initial text is a subsequence of what precedes it;
- replace (one match; the typist never types strictly inside the match or the replacement):
  the match is gone, the replacement is there once, and everything typed survives;
- set_language: the pad's language is the one set, and the text is untouched by it.

CONCURRENCY_TRIALS (default 200) sets the number of trials, CONCURRENCY_SEED the master seed
(each trial derives its own, printed on failure), CONCURRENCY_PARALLEL how many run at once.
One MCP session per era is shared by all trials.
"""

from __future__ import annotations

import json
import os
import random
import uuid
from collections import Counter
from dataclasses import dataclass, field

import anyio
import pytest

from conftest import HANG_GUARD_SECONDS, call, client_info_named, ok

pytestmark = pytest.mark.anyio

TRIALS = int(os.environ.get("CONCURRENCY_TRIALS", "200"))
MASTER_SEED = int(os.environ.get("CONCURRENCY_SEED", "20261130"))
PARALLEL = max(1, int(os.environ.get("CONCURRENCY_PARALLEL", "4")))

# What initial texts are made of: like what the typist types, and disjoint from the special
# strings below.
FILLER = [
    *"abcdefghijklmnopqrstuvwxyz ABCQXZ\n",
    "é",
    "ü",
    "e\u0301",
    "漢",
    "字",
    "🎉",
    "🦀",
    "𝄞",
    "👨\u200d👩\u200d👧",
    "👩\u200d💻",
]
# Characters the typist never types and the filler never holds.
SEARCH = "<%>"
REPLACEMENTS = ["[≡𐍈]", "", "[🜁]"]
LANGUAGES = ["markdown", "rust", "python", "javascript", "c++", "plaintext", "objective-c"]
KINDS = ["append", "replace", "language"]


def is_subsequence(needle: str, haystack: str) -> bool:
    remaining = iter(haystack)
    return all(c in remaining for c in needle)


@dataclass
class Trial:
    index: int
    era: str
    kind: str
    pad: str
    initial: str
    typist_seed: int
    count: int
    delay_us: int
    pause: float
    marker: str = ""
    replacement: str = ""
    replace_all: bool | None = None
    language: str = ""
    avoid: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return (
            f"trial {self.index} (CONCURRENCY_SEED={MASTER_SEED}): {self.kind} in {self.era} era "
            f"on {self.pad}, typist --seed {self.typist_seed} --count {self.count} "
            f"--delay-us {self.delay_us}, initial {self.initial!r}"
        )


def make_trial(index: int, eras: list[str]) -> Trial:
    rng = random.Random(MASTER_SEED * 1_000_003 + index)
    kind = KINDS[index % len(KINDS)] if index < len(KINDS) else rng.choice(KINDS)
    pieces = [rng.choice(FILLER) for _ in range(rng.randint(0, 30))]
    trial = Trial(
        index=index,
        era=eras[index % len(eras)],
        kind=kind,
        pad=f"concurrent-{index}-{uuid.uuid4().hex[:8]}",
        initial="",
        typist_seed=rng.randrange(1, 2**40),
        count=rng.randint(5, 40),
        delay_us=rng.choice([0, 300, 1000, 2000, 3000]),
        pause=rng.uniform(0, 0.03),
    )
    if kind == "append":
        trial.marker = f"⟪{index}⟫"
        trial.avoid = [trial.marker]
    elif kind == "replace":
        pieces.insert(rng.randint(0, len(pieces)), SEARCH)
        trial.replacement = rng.choice(REPLACEMENTS)
        trial.replace_all = rng.choice([None, True, False])
        trial.avoid = [SEARCH] + ([trial.replacement] if trial.replacement else [])
    else:
        trial.language = rng.choice(LANGUAGES)
    trial.initial = "".join(pieces)
    return trial


async def run_trial(trial: Trial, client, rustpad) -> None:
    what = trial.describe()
    rustpad.seed(trial.pad, trial.initial)
    command = rustpad.typist_command(
        trial.pad,
        seed=trial.typist_seed,
        count=trial.count,
        delay_us=trial.delay_us,
        settle_ms=250,
        name="typist",
        avoid=trial.avoid,
    )
    report: dict = {}

    async def type_() -> None:
        with anyio.fail_after(HANG_GUARD_SECONDS):
            done = await anyio.run_process(command, check=False)
        assert done.returncode == 0, (
            f"{what}: typist failed: {done.stderr.decode(errors='replace')}"
        )
        report.update(json.loads(done.stdout))

    async with anyio.create_task_group() as group:
        group.start_soon(type_)
        # Start the server's call once the typist is in the pad (it types right after).
        await rustpad.wait_for_frame(trial.pad, client_info_named("typist"))
        await anyio.sleep(trial.pause)
        if trial.kind == "append":
            arguments = {"id": trial.pad, "text": trial.marker}
            result = await call(client, "append_to_document", arguments)
        elif trial.kind == "replace":
            arguments = {"id": trial.pad, "search": SEARCH, "replace": trial.replacement}
            if trial.replace_all is not None:
                arguments["replace_all"] = trial.replace_all
            result = await call(client, "replace_in_document", arguments)
        else:
            arguments = {"id": trial.pad, "language": trial.language}
            result = await call(client, "set_language", arguments)
    assert not result.is_error, f"{what}: {result.content}"
    structured = ok(result)

    final = report["final_text"]
    typed = "".join(report["typed"])
    assert report["skipped"] == 0, what
    assert len(report["typed"]) == trial.count, what
    server_text = rustpad.text(trial.pad)
    assert final == server_text, f"{what}: the typist and the server disagree"

    inserted, deleted = "", ""
    if trial.kind == "append":
        inserted = trial.marker
        assert structured["appended_characters"] == len(trial.marker), what
        assert final.count(trial.marker) == 1, f"{what}: marker not exactly once in {final!r}"
        before_marker = final[: final.index(trial.marker)]
        assert is_subsequence(trial.initial, before_marker), f"{what}: {final!r}"
    elif trial.kind == "replace":
        inserted, deleted = trial.replacement, SEARCH
        assert structured["replacements"] == 1, what
        assert SEARCH not in final, f"{what}: {final!r}"
        if trial.replacement:
            assert final.count(trial.replacement) == 1, f"{what}: {final!r}"
    else:
        assert structured["language"] == trial.language, what

    expected = Counter(trial.initial) + Counter(typed) + Counter(inserted)
    expected.subtract(Counter(deleted))
    assert Counter(final) == +expected, f"{what}: characters lost or duplicated in {final!r}"

    info = ok(await call(client, "get_document_info", {"id": trial.pad}))
    assert info["length_characters"] == len(final), what
    assert info["revision"] == report["revision"], what
    if trial.kind == "language":
        assert info["language"] == trial.language, what


async def test_concurrent_typing_and_server_edits(open_client, rustpad):
    trials = [make_trial(index, ["legacy", "auto"]) for index in range(TRIALS)]
    limiter = anyio.CapacityLimiter(PARALLEL)
    async with open_client("legacy") as legacy, open_client("auto") as modern:
        clients = {"legacy": legacy, "auto": modern}

        async def guarded(trial: Trial) -> None:
            async with limiter:
                await run_trial(trial, clients[trial.era], rustpad)

        async with anyio.create_task_group() as group:
            for trial in trials:
                group.start_soon(guarded, trial)
    kinds = Counter(trial.kind for trial in trials)
    assert TRIALS < 3 or all(kinds[kind] > 0 for kind in KINDS)
