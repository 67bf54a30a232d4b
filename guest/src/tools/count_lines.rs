//! `count_lines`, a read tool that exists only in tests: it shows what
//! adding a tool takes (this file and one line in the list in `tools`), and
//! lets the catalogue and docs tests say what a real one would still need.

use schemars::JsonSchema;
use serde::Serialize;

use super::args::{PadId, PadOnly};
use super::outcome::{self, ToolResult};
use super::tool::{Call, Description, Kind, Schemas, Tool};
use crate::rustpad::http;

pub static TOOL: Tool = Tool {
    name: "count_lines",
    title: "Count a pad's lines",
    summary: "How many lines a pad has",
    description: Description::Fixed("Counts the lines of a pad as an editor shows them."),
    kind: Kind::Read,
    essential: false,
    schemas: Schemas::of::<PadOnly, Lines>(),
    run,
};

/// How many lines pad `id` has.
#[derive(Serialize, JsonSchema)]
struct Lines<'a> {
    id: &'a str,
    #[schemars(range(min = 1))]
    lines: usize,
}

fn run(call: &Call) -> ToolResult {
    let PadOnly { id: PadId(id) } = call.arguments()?;
    let text = http::pad_text(call.url, id)?;
    let lines = text.split('\n').count();
    outcome::data(&Lines { id, lines })
}

#[cfg(test)]
mod tests {
    use super::super::catalogue_docs::{self, ToolFacts, repository};
    use super::super::{ALL, selection};
    use super::TOOL;

    #[test]
    fn it_is_listed_and_offered_read_only_because_its_annotations_say_it_reads() {
        assert!(ALL.contains(&&TOOL));
        let offered = selection::select(None, None, true, &mut Vec::new()).unwrap();
        assert!(offered.contains(&&TOOL));
        assert_eq!(TOOL.definition()["annotations"]["readOnlyHint"], true);
    }

    /// What the one file and the one line leave to do: the docs (and its
    /// schemas blessed into the shipped ones, which only integration tests
    /// see); the client suites read their lists from those.
    #[test]
    fn a_real_new_tool_would_still_need_its_docs() {
        let facts: Vec<ToolFacts> = ALL
            .iter()
            .map(|tool| {
                ToolFacts::of(
                    &tool.definition(),
                    tool.summary,
                    tool.asks_first(),
                    tool.essential,
                )
            })
            .collect();
        let problems = catalogue_docs::problems(&repository(), &facts);
        let places: Vec<&str> = problems
            .iter()
            .map(|problem| problem.split(':').next().unwrap_or_default())
            .collect();
        assert_eq!(
            places,
            [
                "docs/tools.md",
                "docs/tools.md",
                "README.md",
            ],
            "{problems:#?}"
        );
        assert!(
            problems.iter().all(|problem| problem.contains("count_lines")),
            "{problems:#?}"
        );
    }
}
