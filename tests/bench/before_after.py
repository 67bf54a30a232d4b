"""Two builds of rustpad-mcp on one Rustpad, alternated in one run: what a change costs the calls
it touches (docs/performance.md reports such runs). Not part of `make bench`:

    python3 tests/bench/before_after.py BEFORE_BINARY [AFTER_BINARY]

AFTER_BINARY defaults to RUSTPAD_MCP_BIN. Each round starts each build fresh and times, on a
small pad and on pads with 20k and 100k operations of history: append_to_document,
edit_document, and (where the build has it) revert_changes of one append's change. Medians of
LONG_CALLS calls per round, with the guest's fuel from the trace lines.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

from bench import LONG_CALLS, Rustpad, Server, cost_of, revert_one_change, summary

ROUNDS = 2


def measure(rustpad: Rustpad, binary: str, round_: int) -> dict[str, tuple[float, int]]:
    figures = {}
    server = Server(rustpad.url, trace=True, command=[binary])
    server.initialize()
    tools = {tool["name"] for tool in server.request("tools/list")[0]["tools"]}
    for label, seed in (("small", {"text": "a line\n" * 20}), ("20k", {"ops": 20_000, "char": "x"}), ("100k", {"ops": 100_000, "char": "x"})):
        pad = f"ab-{label}-{round_}-{abs(hash(binary)) % 10_000}"
        rustpad.seed(pad, **seed)
        for tool, arguments in (
            ("append_to_document", {"id": pad, "text": "y"}),
            ("edit_document", {"id": pad, "edits": [{"old_text": "", "new_text": "z", "line": 1}]}),
        ):
            first = len(server.traces)
            times = [server.call(tool, arguments)[1] for _ in range(LONG_CALLS)]
            time.sleep(0.1)  # the trace lines come on stderr, a moment after the answers
            cost = cost_of(server.traces[first : first + LONG_CALLS])
            figures[f"{tool} @ {label}"] = (summary(times)["p50"], cost["fuel"])
        if "revert_changes" in tools:
            timing, cost = revert_one_change(server, pad)
            figures[f"revert_changes @ {label}"] = (timing["p50"], cost["fuel"])
    server.stop()
    return figures


def main() -> None:
    before = sys.argv[1]
    after = sys.argv[2] if len(sys.argv) > 2 else os.environ["RUSTPAD_MCP_BIN"]
    rustpad = Rustpad()
    runs: dict[str, list[dict[str, tuple[float, int]]]] = {"before": [], "after": []}
    try:
        for round_ in range(ROUNDS):
            for name, binary in (("before", before), ("after", after)):
                runs[name].append(measure(rustpad, binary, round_))
    finally:
        rustpad.stop()
    names = list(runs["after"][0])
    print(f"{'call':<36} {'before ms':>10} {'after ms':>10} {'before fuel':>13} {'after fuel':>13}")
    for name in names:
        cells = []
        for build in ("before", "after"):
            values = [run[name] for run in runs[build] if name in run]
            cells.append(values)
        (b, a) = cells
        ms = lambda values: f"{statistics.median(v[0] for v in values):.2f}" if values else "–"
        fuel = lambda values: f"{statistics.median(v[1] for v in values) / 1e6:.1f} M" if values else "–"
        print(f"{name:<36} {ms(b):>10} {ms(a):>10} {fuel(b):>13} {fuel(a):>13}")


if __name__ == "__main__":
    main()
