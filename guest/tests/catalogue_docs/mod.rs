//! What the documentation must say of every tool,
//! checked against the catalogue as plain facts ([`ToolFacts`]), so the same
//! checks run over the real catalogue (`tests/docs.rs`) and over one with a
//! test-only tool added (the unit tests of `tools::count_lines`), where they
//! list what a real new tool would still need.
//!
//! - docs/tools.md: the summary table has one row per tool, in catalogue
//!   order, with the tool's summary, its 👤 mark (exactly on tools that ask
//!   first), its four annotations and its `essential` flag; and every tool
//!   has a section naming its title, annotations, arguments and result fields.
//! - README.md: its tools table (`| `name` [👤] | summary |`) lists every
//!   tool once, with its summary and its 👤 mark, and no tool that does not
//!   exist.
//!
//! The Python and TypeScript suites read the tools they expect from
//! docs/tools.md and the shipped schemas (`tests/python/catalogue.py`,
//! `tests/typescript/catalogue.mjs`), so they need no list of their own.

use std::fs;
use std::path::{Path, PathBuf};

/// What the docs need to know of one tool.
pub struct ToolFacts {
    pub name: String,
    pub title: String,
    pub summary: String,
    pub asks_first: bool,
    /// readOnly, destructive, idempotent, openWorld.
    pub annotations: [bool; 4],
    pub essential: bool,
    pub arguments: Vec<String>,
    pub results: Vec<String>,
}

impl ToolFacts {
    /// The facts of a tool from its `tools/list` entry and what the entry
    /// does not show.
    pub fn of(
        definition: &serde_json::Value,
        summary: &str,
        asks_first: bool,
        essential: bool,
    ) -> ToolFacts {
        let text = |value: &serde_json::Value| value.as_str().unwrap_or_default().to_string();
        let hint = |name: &str| definition["annotations"][name] == true;
        let properties = |schema: &serde_json::Value| -> Vec<String> {
            schema["properties"]
                .as_object()
                .map(|properties| properties.keys().cloned().collect())
                .unwrap_or_default()
        };
        ToolFacts {
            name: text(&definition["name"]),
            title: text(&definition["title"]),
            summary: summary.to_string(),
            asks_first,
            annotations: [
                hint("readOnlyHint"),
                hint("destructiveHint"),
                hint("idempotentHint"),
                hint("openWorldHint"),
            ],
            essential,
            arguments: properties(&definition["inputSchema"]),
            results: properties(&definition["outputSchema"]),
        }
    }
}

/// The mark docs put after a tool that may ask a person.
const GUARDED: &str = "👤";

/// The header of docs/tools.md's summary table.
const SUMMARY_HEADER: [&str; 4] = [
    "Tool",
    "What it does",
    "Annotations (ro/destr/idem/open)",
    "Essential",
];

pub fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(root: &Path, name: &str) -> String {
    fs::read_to_string(root.join(name)).unwrap_or_else(|e| panic!("cannot read {name}: {e}"))
}

/// The trimmed cells of a Markdown table row; None for any other line.
fn cells(line: &str) -> Option<Vec<String>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    Some(inner.split('|').map(|c| c.trim().to_string()).collect())
}

fn is_separator(row: &[String]) -> bool {
    row.iter()
        .all(|c| !c.is_empty() && c.chars().all(|ch| ch == '-' || ch == ':'))
}

/// The tool cell as the docs write it: the name in backticks, then ` 👤`
/// for a tool that may ask a person.
fn tool_cell(tool: &ToolFacts) -> String {
    if tool.asks_first {
        format!("`{}` {GUARDED}", tool.name)
    } else {
        format!("`{}`", tool.name)
    }
}

/// Reads a tool cell back as (name, marked 👤), if it looks like one.
fn parse_tool_cell(cell: &str) -> Option<(String, bool)> {
    let (rest, marked) = match cell.strip_suffix(GUARDED) {
        Some(rest) => (rest.trim_end(), true),
        None => (cell, false),
    };
    let name = rest.strip_prefix('`')?.strip_suffix('`')?;
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    plain.then(|| (name.to_string(), marked))
}

/// `T/F/T/F`: readOnly, destructive, idempotent, openWorld.
fn annotations(tool: &ToolFacts) -> String {
    tool.annotations
        .map(|hint| if hint { "T" } else { "F" })
        .join("/")
}

fn essential(tool: &ToolFacts) -> &'static str {
    if tool.essential { "yes" } else { "no" }
}

fn render(row: &[String]) -> String {
    format!("| {} |", row.join(" | "))
}

fn summary_row(tool: &ToolFacts) -> Vec<String> {
    vec![
        tool_cell(tool),
        tool.summary.clone(),
        annotations(tool),
        essential(tool).to_string(),
    ]
}

fn knows(tools: &[ToolFacts], name: &str) -> bool {
    tools.iter().any(|tool| tool.name == name)
}

/// docs/tools.md's summary table.
pub fn tools_md_table(root: &Path, tools: &[ToolFacts]) -> Vec<String> {
    let doc = read(root, "docs/tools.md");
    let lines: Vec<&str> = doc.lines().collect();
    let expected_table = || {
        let mut table = vec![
            render(&SUMMARY_HEADER.map(String::from)),
            "|---|---|---|---|".into(),
        ];
        table.extend(tools.iter().map(|tool| render(&summary_row(tool))));
        table.join("\n")
    };
    let headers: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| cells(line).is_some_and(|row| row == SUMMARY_HEADER))
        .map(|(index, _)| index)
        .collect();
    let [header] = headers.as_slice() else {
        return vec![format!(
            "docs/tools.md must have exactly one summary table; it should read:\n{}",
            expected_table()
        )];
    };
    let start = header + 1;
    if !lines
        .get(start)
        .and_then(|line| cells(line))
        .is_some_and(|row| row.len() == SUMMARY_HEADER.len() && is_separator(&row))
    {
        return vec![
            "docs/tools.md: the summary table's header must be followed by a separator row".into(),
        ];
    }
    let rows: Vec<Vec<String>> = lines[start + 1..]
        .iter()
        .map_while(|line| cells(line))
        .collect();
    let mut problems = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        let expected = summary_row(tool);
        match rows.get(index) {
            Some(row) if *row == expected => {}
            Some(row) => problems.push(format!(
                "docs/tools.md: summary row {} is\n    {}\n  but should be\n    {}",
                index + 1,
                render(row),
                render(&expected)
            )),
            None => problems.push(format!(
                "docs/tools.md: the summary table has no row for {}; add\n    {}",
                tool.name,
                render(&expected)
            )),
        }
    }
    for (index, row) in rows.iter().enumerate().skip(tools.len()) {
        problems.push(format!(
            "docs/tools.md: summary row {} is not a tool: {}",
            index + 1,
            render(row)
        ));
    }
    problems
}

/// The `## `name`` sections of docs/tools.md: (name, marked 👤, body).
fn tool_sections(doc: &str) -> Vec<(String, bool, String)> {
    let mut sections: Vec<(String, bool, String)> = Vec::new();
    let mut current: Option<(String, bool, String)> = None;
    for line in doc.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            sections.extend(current.take());
            current =
                parse_tool_cell(heading.trim()).map(|(name, marked)| (name, marked, String::new()));
            continue;
        }
        if let Some((_, _, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    sections.extend(current);
    sections
}

/// docs/tools.md's section of each tool.
pub fn tools_md_sections(root: &Path, tools: &[ToolFacts]) -> Vec<String> {
    let doc = read(root, "docs/tools.md");
    let sections = tool_sections(&doc);
    let mut problems = Vec::new();
    for (name, _, _) in &sections {
        if !knows(tools, name) {
            problems.push(format!(
                "docs/tools.md: a section for `{name}`, which is not a tool"
            ));
        }
    }
    for tool in tools {
        let found: Vec<&(String, bool, String)> = sections
            .iter()
            .filter(|(name, _, _)| *name == tool.name)
            .collect();
        let [(_, marked, body)] = found.as_slice() else {
            problems.push(format!(
                "docs/tools.md: {} sections headed `## {}` (expected exactly one)",
                found.len(),
                tool_cell(tool)
            ));
            continue;
        };
        if *marked != tool.asks_first {
            problems.push(format!(
                "docs/tools.md: the section of {} should be headed `## {}`",
                tool.name,
                tool_cell(tool)
            ));
        }
        for needed in [
            format!("**Title:** {}", tool.title),
            format!("**Annotations:** {}", annotations(tool)),
            format!("**Essential:** {}", essential(tool)),
        ] {
            if !body.contains(&needed) {
                problems.push(format!(
                    "docs/tools.md: the section of {} lacks \"{needed}\"",
                    tool.name
                ));
            }
        }
        for (what, names) in [
            ("argument", &tool.arguments),
            ("result field", &tool.results),
        ] {
            for name in names {
                if !body.contains(&format!("`{name}`")) {
                    problems.push(format!(
                        "docs/tools.md: the section of {} does not mention its {what} `{name}`",
                        tool.name
                    ));
                }
            }
        }
    }
    problems
}

/// README.md's tools table.
pub fn readme_table(root: &Path, tools: &[ToolFacts]) -> Vec<String> {
    let readme = read(root, "README.md");
    // Tables are runs of consecutive row lines; the tools table is the one
    // whose first column names tools.
    let mut tables: Vec<Vec<Vec<String>>> = Vec::new();
    let mut current: Vec<Vec<String>> = Vec::new();
    for line in readme.lines() {
        match cells(line) {
            Some(row) => current.push(row),
            None if !current.is_empty() => tables.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        tables.push(current);
    }
    let names_a_tool = |row: &Vec<String>| {
        row.first()
            .and_then(|cell| parse_tool_cell(cell))
            .is_some_and(|(name, _)| knows(tools, &name))
    };
    let tool_tables: Vec<&Vec<Vec<String>>> = tables
        .iter()
        .filter(|table| table.iter().any(names_a_tool))
        .collect();
    let [table] = tool_tables.as_slice() else {
        return vec!["README.md must have exactly one table listing the tools".into()];
    };
    let mut problems = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for row in table.iter().skip(1).filter(|row| !is_separator(row)) {
        let Some((name, marked)) = row.first().and_then(|cell| parse_tool_cell(cell)) else {
            problems.push(format!(
                "README.md: a row that names no tool: {}",
                render(row)
            ));
            continue;
        };
        let Some(tool) = tools.iter().find(|tool| tool.name == name) else {
            problems.push(format!(
                "README.md: a row for `{name}`, which is not a tool"
            ));
            continue;
        };
        if seen.contains(&name) {
            problems.push(format!("README.md: `{name}` is listed twice"));
        }
        seen.push(name);
        let expected = [tool_cell(tool), tool.summary.clone()];
        if row.len() != 2 || row[1] != expected[1] || marked != tool.asks_first {
            problems.push(format!(
                "README.md: the row is\n    {}\n  but should be\n    {}",
                render(row),
                render(&expected)
            ));
        }
    }
    for tool in tools {
        if !seen.contains(&tool.name) {
            problems.push(format!(
                "README.md: the tools table has no row for {}; add\n    {}",
                tool.name,
                render(&[tool_cell(tool), tool.summary.clone()])
            ));
        }
    }
    problems
}

/// Everything above, over `tools`.
pub fn problems(root: &Path, tools: &[ToolFacts]) -> Vec<String> {
    let mut problems = tools_md_table(root, tools);
    problems.extend(tools_md_sections(root, tools));
    problems.extend(readme_table(root, tools));
    problems
}
