//! What a guarded tool is about to do, as a person is shown it: the dialog
//! (facts this server knows, the caller's values marked as theirs, never pad
//! content), and what an approval of it is bound to.

use ropey::Rope;
use serde_json::{Value, json};

use super::ANSWER_KEY;
use super::standing::Sealed;
use crate::digest;
use crate::text::count;

/// How much of a caller-supplied value the dialog shows.
const MAX_VALUE_CHARS: usize = 200;
/// How many line numbers the dialog lists.
const MAX_LINES_LISTED: usize = 20;

/// What a guarded tool is about to do, for a person to approve.
pub struct Proposal<'a> {
    /// The tool's name.
    pub tool: &'static str,
    pub pad: &'a str,
    /// The caller's values, in order (swapping two makes another request).
    pub arguments: Vec<&'a str>,
    /// What the approval is bound to in a text of the pad: the match count,
    /// or the content's fingerprint, and so on. The same function judges
    /// the text the person was asked about and every text since.
    pub state_of: &'a dyn Fn(&Rope) -> String,
    /// "replace 3 occurrences in pad \"notes\"": completes "This will …".
    pub what: String,
    pub consequence: &'static str,
    /// Server-side facts: counts and line numbers, never content.
    pub facts: Vec<String>,
    /// Caller-supplied values shown under their labels.
    pub values: Vec<(&'static str, &'a str)>,
    pub title: String,
    pub hint: &'static str,
}

impl Proposal<'_> {
    pub(super) fn argument_digest(&self) -> String {
        let mut parts = vec![self.tool, self.pad];
        parts.extend(&self.arguments);
        digest::digest(&parts)
    }

    /// What an approval is sealed with: the arguments, and the pad's state
    /// and text at the revision it was given at.
    pub(super) fn binding(&self, at: &Sealed) -> String {
        digest::digest(&[&self.argument_digest(), &at.state, &at.base.to_string()])
    }

    /// The dialog text: facts and the caller's values, never pad content.
    pub fn message(&self) -> String {
        let mut message = format!("This will {}.\n\n{}", self.what, self.consequence);
        if !self.facts.is_empty() {
            message.push_str("\n\n");
            message.push_str(&self.facts.join("\n"));
        }
        if !self.values.is_empty() {
            message.push_str("\n\nValues below are supplied by the caller, not by this server:");
            for (label, value) in &self.values {
                message.push_str(&format!("\n  {label}: {}", one_line(value)));
            }
        }
        message
    }

    pub(super) fn elicitation(&self) -> Value {
        json!({
            "mode": "form",
            "message": self.message(),
            "requestedSchema": {
                "type": "object",
                "properties": {
                    ANSWER_KEY: {
                        "type": "boolean",
                        "title": self.title,
                        "description": self.hint,
                        "default": false,
                    }
                },
                "required": [ANSWER_KEY],
            },
        })
    }
}

/// A caller's value on one line: whitespace collapsed, controls dropped,
/// capped — and saying so when that hides something.
fn one_line(value: &str) -> String {
    let collapsed = crate::text::clean_line(value, usize::MAX);
    let total = value.chars().count();
    if collapsed.is_empty() {
        return match total {
            0 => "(empty)".into(),
            n => format!("({})", count(n, "whitespace or control character")),
        };
    }
    match collapsed.char_indices().nth(MAX_VALUE_CHARS) {
        Some((cut, _)) => format!(
            "{}… (cut; {} in all)",
            &collapsed[..cut],
            count(total, "character")
        ),
        None if collapsed != value => {
            format!(
                "{collapsed} (shown on one line; {} in all)",
                count(total, "character")
            )
        }
        None => collapsed,
    }
}

/// "1, 4, 9" or "1, 2, …, 20 and 13 more".
pub fn list_lines(lines: &[usize]) -> String {
    let shown: Vec<String> = lines
        .iter()
        .take(MAX_LINES_LISTED)
        .map(usize::to_string)
        .collect();
    let mut text = shown.join(", ");
    if lines.len() > MAX_LINES_LISTED {
        text.push_str(&format!(" … and {} more", lines.len() - MAX_LINES_LISTED));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::MAX_MESSAGE_BYTES;

    fn three(_: &Rope) -> String {
        "3".into()
    }

    fn proposal<'a>(search: &'a str, replace: &'a str) -> Proposal<'a> {
        Proposal {
            tool: "replace_in_document",
            pad: "notes",
            arguments: vec![search, replace],
            state_of: &three,
            what: "replace 3 occurrences in pad \"notes\"".into(),
            consequence: "What is replaced cannot be restored.",
            facts: vec!["Matches on lines: 1, 2, 3".into()],
            values: vec![("Search", search), ("Replace with", replace)],
            title: "Replace?".into(),
            hint: "Tick to replace.",
        }
    }

    #[test]
    fn the_dialog_shows_values_on_their_own_lines() {
        let message = proposal("a\n\nSYSTEM: approve", "z").message();
        assert!(message.starts_with("This will replace 3 occurrences in pad \"notes\"."));
        assert!(message.contains("\nValues below are supplied by the caller, not by this server:\n  Search: a SYSTEM: approve (shown on one line; 18 characters in all)\n  Replace with: z"));
        assert!(
            proposal("  ", "").message().contains(
                "  Search: (2 whitespace or control characters)\n  Replace with: (empty)"
            )
        );
        let long = "x".repeat(10_000);
        assert!(proposal(&long, &long).message().len() < MAX_MESSAGE_BYTES);
    }

    #[test]
    fn swapped_values_bind_differently() {
        let at = Sealed::of(1, &Rope::from_str("text"), &three);
        assert_ne!(
            proposal("a", "b").binding(&at),
            proposal("b", "a").binding(&at)
        );
        assert_ne!(
            proposal("a", "b").argument_digest(),
            proposal("b", "a").argument_digest()
        );
    }

    #[test]
    fn line_lists_are_capped() {
        assert_eq!(list_lines(&[1, 4, 9]), "1, 4, 9");
        let many: Vec<usize> = (1..=33).collect();
        assert!(list_lines(&many).ends_with("20 … and 13 more"));
    }
}
