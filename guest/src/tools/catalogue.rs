//! What the catalogue says across tools: lookup by name, and the sentences
//! and figures several descriptions share (formatted from the guard's
//! constants, so no description retypes them).

use super::ALL;
use super::tool::Tool;
use crate::guard::removal::{
    self, MAX_REMOVED_CHARS, TALLY_WINDOW_SECONDS, WINDOW_CHARS, WINDOW_EDITS,
};
use crate::text::thousands;

/// The tool called `name`, if there is one.
pub fn from_name(name: &str) -> Option<&'static Tool> {
    ALL.iter().copied().find(|tool| tool.name == name)
}

pub const EPHEMERAL: &str = "Pads are ephemeral: Rustpad forgets a pad when it restarts (unless it persists to a database) and after a day in which nobody opened it.";

/// When the removal rule asks, in the words of the tool descriptions.
pub fn removal_threshold() -> String {
    format!(
        "more than {} of the pad's characters or more than {} of them",
        removal::share_in_words(),
        thousands(MAX_REMOVED_CHARS)
    )
}

/// What the removal rule adds up, in the words of the tool descriptions.
pub fn removals_counted() -> String {
    let this_process = if crate::grants::STATELESS {
        String::new()
    } else {
        format!(
            ", and what this server process removed in the last {} minutes",
            TALLY_WINDOW_SECONDS / 60
        )
    };
    format!(
        "counting what the pad's history shows was removed from it lately without a person's approval by this server (any process or replica, calls made at the same moment included) or by anyone who has since left the pad (over the last {} edits and {} characters people changed){this_process}",
        thousands(WINDOW_EDITS),
        thousands(WINDOW_CHARS)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_an_object_with_all_four_hints() {
        for tool in ALL {
            let definition = tool.definition();
            assert_eq!(definition["inputSchema"]["type"], "object");
            assert_eq!(definition["outputSchema"]["type"], "object");
            for hint in [
                "readOnlyHint",
                "destructiveHint",
                "idempotentHint",
                "openWorldHint",
            ] {
                assert!(
                    definition["annotations"][hint].is_boolean(),
                    "{} {hint}",
                    tool.name
                );
            }
        }
    }

    #[test]
    fn names_are_unique_and_the_preset_names_tools() {
        for (index, tool) in ALL.iter().enumerate() {
            assert!(
                ALL[..index].iter().all(|other| other.name != tool.name),
                "{} is listed twice",
                tool.name
            );
            assert_eq!(from_name(tool.name), Some(*tool));
        }
        let essential: Vec<&str> = ALL
            .iter()
            .filter(|tool| tool.essential)
            .map(|tool| tool.name)
            .collect();
        assert_eq!(
            essential,
            [
                "get_document",
                "get_document_info",
                "create_document",
                "set_document",
                "append_to_document"
            ]
        );
    }

    /// A destructive tool takes back what it cannot restore, so it asks a
    /// person first; a read never does.
    #[test]
    fn exactly_the_destructive_tools_ask_first() {
        for tool in ALL {
            assert_eq!(
                tool.asks_first(),
                tool.annotations().destructive,
                "{}",
                tool.name
            );
            assert!(!(tool.is_read() && tool.asks_first()), "{}", tool.name);
            let takes_token = tool.input_schema()["properties"]
                .get("confirm_token")
                .is_some();
            assert_eq!(takes_token, tool.asks_first(), "{}", tool.name);
        }
    }

    #[test]
    fn the_removal_figures_come_from_the_guard() {
        assert_eq!(
            removal_threshold(),
            "more than half of the pad's characters or more than 10,000 of them"
        );
        assert!(
            removals_counted()
                .contains("over the last 1,000 edits and 3,000 characters people changed")
        );
    }
}
