"""What the suites expect tools/list to show, read from the two places the catalogue is written
down for people and checked against the tools themselves (by guest/tests/docs.rs and
guest/tests/shipped_schemas.rs): docs/tools.md's summary table and sections (names in order,
titles, annotations) and the schemas as shipped (guest/tests/input-schemas.json and
output-schemas.json). A new tool then needs no edit here, and the suites still compare what the
server lists with what is documented, not with itself."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs/tools.md"
SHIPPED = ROOT / "guest/tests"

ROW = re.compile(r"^\| `([a-z_]+)`( 👤)? \| [^|]+ \| ([TF])/([TF])/([TF])/([TF]) \| (yes|no) \|$")
TITLE = re.compile(r"^\*\*Title:\*\* (.+?) · \*\*Annotations:\*\*")


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    # (readOnlyHint, destructiveHint, idempotentHint, openWorldHint)
    hints: tuple[bool, bool, bool, bool]
    essential: bool
    asks_first: bool
    input_required: list[str]
    output_required: list[str]


def _titles(lines: list[str]) -> dict[str, str]:
    titles: dict[str, str] = {}
    section = None
    for line in lines:
        heading = re.match(r"^## `([a-z_]+)`", line)
        if heading:
            section = heading.group(1)
        title = TITLE.match(line)
        if section and title and section not in titles:
            titles[section] = title.group(1)
    return titles


def _read() -> list[Tool]:
    lines = DOCS.read_text(encoding="utf-8").splitlines()
    titles = _titles(lines)
    inputs = json.loads((SHIPPED / "input-schemas.json").read_text(encoding="utf-8"))
    outputs = json.loads((SHIPPED / "output-schemas.json").read_text(encoding="utf-8"))
    tools = []
    for line in lines:
        row = ROW.match(line)
        if not row:
            continue
        name = row.group(1)
        tools.append(
            Tool(
                name=name,
                title=titles[name],
                hints=tuple(flag == "T" for flag in row.group(3, 4, 5, 6)),
                essential=row.group(7) == "yes",
                asks_first=row.group(2) is not None,
                input_required=inputs[name]["required"],
                output_required=outputs[name]["required"],
            )
        )
    assert tools, f"no tool rows found in {DOCS}"
    return tools


TOOLS: list[Tool] = _read()
# Every tool, in the order tools/list shows them.
ALL_TOOLS: list[str] = [tool.name for tool in TOOLS]
ESSENTIAL: list[str] = [tool.name for tool in TOOLS if tool.essential]
BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TOOLS}
