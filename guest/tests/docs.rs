//! The documentation agrees with the tool catalogue.
//!
//! - docs/tools.md: the summary table has one row per tool, in catalogue
//!   order, with the tool's summary, its 👤 mark (exactly on guarded tools),
//!   its four annotations and its `essential` flag; and every tool has a
//!   section naming its title, annotations, arguments and result fields.
//! - README.md: its tools table (`| `name` [👤] | summary |`) lists every tool
//!   once, with its summary and its 👤 mark, and no tool that does not exist.
//!
//! Run natively: `cargo test -p guest --test docs`.

use std::fs;
use std::path::PathBuf;

use guest::tools::catalogue::{ALL, ESSENTIAL, ToolName};

/// The mark docs put after a tool that may ask a person.
const GUARDED: &str = "👤";

/// The header of docs/tools.md's summary table.
const SUMMARY_HEADER: [&str; 4] = [
    "Tool",
    "What it does",
    "Annotations (ro/destr/idem/open)",
    "Essential",
];

const HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

fn repo_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
}

fn read(name: &str) -> String {
    fs::read_to_string(repo_path(name)).unwrap_or_else(|e| panic!("cannot read {name}: {e}"))
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
fn tool_cell(tool: ToolName) -> String {
    if tool.is_guarded() {
        format!("`{}` {GUARDED}", tool.name())
    } else {
        format!("`{}`", tool.name())
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

/// `T/F/T/F`: readOnly, destructive, idempotent, openWorld, from `tools/list`.
fn annotations(tool: ToolName) -> String {
    let definition = tool.definition();
    HINTS
        .iter()
        .map(|hint| match definition["annotations"][*hint].as_bool() {
            Some(true) => "T",
            Some(false) => "F",
            None => panic!("{} declares no boolean {hint}", tool.name()),
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn essential(tool: ToolName) -> &'static str {
    if ESSENTIAL.contains(&tool) {
        "yes"
    } else {
        "no"
    }
}

fn expected_summary_row(tool: ToolName) -> Vec<String> {
    vec![
        tool_cell(tool),
        tool.summary().to_string(),
        annotations(tool),
        essential(tool).to_string(),
    ]
}

fn render(row: &[String]) -> String {
    format!("| {} |", row.join(" | "))
}

/// The table as it should read, for the failure message.
fn expected_summary_table() -> String {
    let mut lines = vec![
        render(&SUMMARY_HEADER.map(String::from)),
        "|---|---|---|---|".into(),
    ];
    lines.extend(ALL.iter().map(|tool| render(&expected_summary_row(*tool))));
    lines.join("\n")
}

#[test]
fn tools_md_summary_table_matches_the_catalogue() {
    let doc = read("docs/tools.md");
    let lines: Vec<&str> = doc.lines().collect();
    let headers: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| cells(line).is_some_and(|row| row == SUMMARY_HEADER))
        .map(|(index, _)| index)
        .collect();
    assert_eq!(
        headers.len(),
        1,
        "docs/tools.md must have exactly one summary table with the header {}; it should read:\n{}",
        render(&SUMMARY_HEADER.map(String::from)),
        expected_summary_table()
    );
    let start = headers[0] + 1;
    assert!(
        lines
            .get(start)
            .and_then(|line| cells(line))
            .is_some_and(|row| row.len() == SUMMARY_HEADER.len() && is_separator(&row)),
        "docs/tools.md: the summary table's header must be followed by a separator row"
    );
    let rows: Vec<Vec<String>> = lines[start + 1..]
        .iter()
        .map_while(|line| cells(line))
        .collect();

    let mut problems = Vec::new();
    if rows.len() != ALL.len() {
        problems.push(format!(
            "the table has {} rows, the catalogue {} tools",
            rows.len(),
            ALL.len()
        ));
    }
    for (index, tool) in ALL.iter().enumerate() {
        let expected = expected_summary_row(*tool);
        match rows.get(index) {
            Some(row) if *row == expected => {}
            Some(row) => problems.push(format!(
                "row {} is\n    {}\n  but should be\n    {}",
                index + 1,
                render(row),
                render(&expected)
            )),
            None => problems.push(format!("no row for {}", tool.name())),
        }
    }
    for (index, row) in rows.iter().enumerate().skip(ALL.len()) {
        problems.push(format!("row {} is not a tool: {}", index + 1, render(row)));
    }
    assert!(
        problems.is_empty(),
        "docs/tools.md's summary table disagrees with the catalogue:\n- {}\n\nIt should read:\n{}",
        problems.join("\n- "),
        expected_summary_table()
    );
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

fn property_names(schema: &serde_json::Value) -> Vec<String> {
    schema["properties"]
        .as_object()
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn tools_md_has_a_section_per_tool_with_its_fields() {
    let doc = read("docs/tools.md");
    let sections = tool_sections(&doc);
    let mut problems = Vec::new();
    for (name, _, _) in &sections {
        if ToolName::from_name(name).is_none() {
            problems.push(format!("a section for `{name}`, which is not a tool"));
        }
    }
    for tool in ALL {
        let found: Vec<&(String, bool, String)> = sections
            .iter()
            .filter(|(name, _, _)| name == tool.name())
            .collect();
        let [(_, marked, body)] = found.as_slice() else {
            problems.push(format!(
                "{} sections headed `## {}` (expected exactly one)",
                found.len(),
                tool_cell(tool)
            ));
            continue;
        };
        if *marked != tool.is_guarded() {
            problems.push(format!(
                "the section of {} should be headed `## {}`",
                tool.name(),
                tool_cell(tool)
            ));
        }
        for needed in [
            format!("**Title:** {}", tool.title()),
            format!("**Annotations:** {}", annotations(tool)),
            format!("**Essential:** {}", essential(tool)),
        ] {
            if !body.contains(&needed) {
                problems.push(format!("the section of {} lacks \"{needed}\"", tool.name()));
            }
        }
        let definition = tool.definition();
        for (what, schema) in [
            ("argument", &definition["inputSchema"]),
            ("result field", &definition["outputSchema"]),
        ] {
            for property in property_names(schema) {
                if !body.contains(&format!("`{property}`")) {
                    problems.push(format!(
                        "the section of {} does not mention its {what} `{property}`",
                        tool.name()
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "docs/tools.md disagrees with the catalogue:\n- {}",
        problems.join("\n- ")
    );
}

#[test]
fn readme_tools_table_matches_the_catalogue() {
    let readme = read("README.md");

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
            .is_some_and(|(name, _)| ToolName::from_name(&name).is_some())
    };
    let tool_tables: Vec<&Vec<Vec<String>>> = tables
        .iter()
        .filter(|table| table.iter().any(names_a_tool))
        .collect();
    assert_eq!(
        tool_tables.len(),
        1,
        "README.md must have exactly one table listing the tools"
    );

    let mut problems = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for row in tool_tables[0]
        .iter()
        .skip(1)
        .filter(|row| !is_separator(row))
    {
        let Some((name, marked)) = row.first().and_then(|cell| parse_tool_cell(cell)) else {
            problems.push(format!("a row that names no tool: {}", render(row)));
            continue;
        };
        let Some(tool) = ToolName::from_name(&name) else {
            problems.push(format!("a row for `{name}`, which is not a tool"));
            continue;
        };
        if seen.contains(&name) {
            problems.push(format!("`{name}` is listed twice"));
        }
        seen.push(name);
        let expected = [tool_cell(tool), tool.summary().to_string()];
        if row.len() != 2 || row[1] != expected[1] || marked != tool.is_guarded() {
            problems.push(format!(
                "the row is\n    {}\n  but should be\n    {}",
                render(row),
                render(&expected)
            ));
        }
    }
    for tool in ALL {
        if !seen.iter().any(|name| name == tool.name()) {
            problems.push(format!(
                "no row for {}; add {}",
                tool.name(),
                render(&[tool_cell(tool), tool.summary().to_string()])
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "README.md's tools table disagrees with the catalogue:\n- {}",
        problems.join("\n- ")
    );
}
