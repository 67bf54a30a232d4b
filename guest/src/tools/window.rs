//! `get_document` with a line window: part of a pad, numbered, with the base
//! that names the text it came from.
//!
//! A window is read through the collaboration socket's invisible look (so
//! nobody sees a visitor come and go) rather than over HTTP, because only the
//! socket says which revision the text is: the base an edit can later be
//! stated against. Lines end at `\n` (a `\r\n` pair is one break), and a pad
//! that ends with a line break has an empty last line, as an editor shows it.

use ropey::Rope;
use schemars::JsonSchema;
use serde::Serialize;

use super::outcome::ToolError;
use super::people::{self, People};
use crate::rustpad::base::Base;
use crate::rustpad::socket::{PadSocket, Track};
use crate::rustpad::url::RustpadUrl;
use crate::text::{self, MAX_RESULT_CHARS};

/// Room left in the result for everything but the window's text.
const RESULT_OVERHEAD: usize = 2_000;

/// Which lines a call asked for (1-based, inclusive).
pub struct LineWindow {
    pub start: Option<usize>,
    pub end: Option<usize>,
}

/// What a `get_document` result holds of a window and a whole read does not.
#[derive(Serialize, JsonSchema)]
pub struct Window {
    /// Window only: the pad's revision the text is from
    revision: u64,
    /// Window only: names this revision and its text, for edit_document
    base: String,
    /// Window only: the first line shown
    #[schemars(range(min = 1))]
    start_line: usize,
    /// Window only: the last line shown (partly, if that line alone was too long)
    #[schemars(range(min = 1))]
    end_line: usize,
    /// Window only: lines in the pad
    #[schemars(range(min = 1))]
    total_lines: usize,
    /// Window only: present when the window was cut; the line to start the next window at
    #[schemars(range(min = 1))]
    #[serde(skip_serializing_if = "Option::is_none")]
    continue_from: Option<usize>,
}

/// A window as read: its fields, the text shown, and what the text block says.
pub struct WindowRead {
    pub window: Window,
    pub text: String,
    /// Whether the window was cut to fit the result.
    pub truncated: bool,
    pub people: People,
    pub note: Option<String>,
    /// This server's sentence about the window.
    pub summary: String,
    /// Pad content: the numbered lines, and where people are.
    pub body: String,
}

/// Lines `first..=last` as shown: their text, and whether the last one was cut.
struct Shown {
    text: String,
    last: usize,
    /// Some((shown, total)) in characters when the first line alone was too long.
    cut_line: Option<(usize, usize)>,
    removed_controls: usize,
}

pub fn get_window(
    url: &RustpadUrl,
    id: &str,
    window: &LineWindow,
) -> Result<WindowRead, ToolError> {
    let socket = PadSocket::look(url, id, Track::TEXT)?;
    let read = socket.text().cloned();
    let revision = socket.revision();
    let people = read
        .as_ref()
        .map(|rope| people::in_text(&socket, rope))
        .unwrap_or_default();
    socket.close();
    let rope = read?;
    let total = rope.len_lines();
    let first = window.start.unwrap_or(1);
    if first > total {
        return Err(ToolError::new(format!(
            "start_line {first} is past the end: pad \"{id}\" has {} at revision {revision}. Ask for a window that starts at line {total} or before.",
            text::count(total, "line")
        )));
    }
    let asked_last = window.end.unwrap_or(total);
    if asked_last < first {
        return Err(ToolError::new(format!(
            "end_line {asked_last} is before start_line {first}; ask for start_line ≤ end_line"
        )));
    }
    let last = asked_last.min(total);
    let base = Base::of(revision, &rope.to_string());
    let budget = MAX_RESULT_CHARS - RESULT_OVERHEAD - people.cost();
    let shown = show_lines(&rope, first, last, budget);
    let truncated = shown.last < last || shown.cut_line.is_some();
    let continue_from = (truncated && shown.last < total).then_some(shown.last + 1);

    let mut notes = Vec::new();
    if rope.len_chars() == 0 {
        notes.push(format!(
            "Pad \"{id}\" is empty, or it never existed, or it has expired: Rustpad answers all three the same way."
        ));
    }
    if let Some((part, whole)) = shown.cut_line {
        notes.push(format!(
            "Line {} is longer than one result can hold: only its first {part} of {whole} characters are shown.",
            shown.last
        ));
    } else if let Some(next) = continue_from {
        notes.push(format!(
            "The window was cut to fit one result: ask again with start_line {next} for the rest."
        ));
    }
    if shown.removed_controls > 0 {
        notes.push(format!(
            "{} from the text shown; an old_text copied across them will not match the pad.",
            text::controls_removed(shown.removed_controls)
        ));
    }

    let lines = if shown.last == first {
        format!("line {first}")
    } else {
        format!("lines {first}–{}", shown.last)
    };
    let summary = format!(
        "Pad \"{id}\", {lines} of {total}, at revision {revision} (base {base}). The numbers before each tab are line numbers, not part of the text.{}",
        notes.iter().map(|n| format!(" {n}")).collect::<String>()
    );
    let mut body = numbered(&shown.text, first, shown.last);
    if let Some(listing) = people.listing() {
        body.push_str("\n\n");
        body.push_str(&listing);
    }
    Ok(WindowRead {
        window: Window {
            revision,
            base: base.to_string(),
            start_line: first,
            end_line: shown.last,
            total_lines: total,
            continue_from,
        },
        text: shown.text,
        truncated,
        people,
        note: (!notes.is_empty()).then(|| notes.join(" ")),
        summary,
        body,
    })
}

/// Lines `first..=last` of `rope`, cleaned, as many whole lines as fit
/// `budget` characters of JSON; at least part of the first.
fn show_lines(rope: &Rope, first: usize, last: usize, budget: usize) -> Shown {
    let mut shown = Shown {
        text: String::new(),
        last: first,
        cut_line: None,
        removed_controls: 0,
    };
    let mut used = 2; // the JSON string's quotes
    for number in first..=last {
        let raw = rope.line(number - 1).to_string();
        let line = text::clean_text(&raw);
        let cost = text::json_len(&line) - 2;
        if used + cost > budget {
            if number == first {
                let (part, cut) = text::fit_json_budget(&line, budget);
                shown.text.push_str(part);
                shown.cut_line = cut;
                shown.removed_controls = text::char_len(&raw) - text::char_len(&line);
            }
            return shown;
        }
        used += cost;
        shown.removed_controls += text::char_len(&raw) - text::char_len(&line);
        shown.text.push_str(&line);
        shown.last = number;
    }
    shown
}

/// The text block: lines `first..=last` of `text`, each behind its number
/// and a tab.
fn numbered(text: &str, first: usize, last: usize) -> String {
    text.split('\n')
        .take(last + 1 - first)
        .enumerate()
        .map(|(offset, line)| format!("{:>6}\t{}", first + offset, line.trim_end_matches('\r')))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_like_an_editor() {
        let rope = Rope::from_str("a\r\nb\n\nc🎉👨‍👩‍👧\n");
        assert_eq!(rope.len_lines(), 5);
        let shown = show_lines(&rope, 2, 5, 1_000);
        assert_eq!(shown.text, "b\n\nc🎉👨‍👩‍👧\n");
        assert_eq!(shown.last, 5);
        assert_eq!(
            numbered(&shown.text, 2, 5),
            "     2\tb\n     3\t\n     4\tc🎉👨‍👩‍👧\n     5\t"
        );
        assert_eq!(numbered("a\r\n", 1, 1), "     1\ta");
    }

    #[test]
    fn a_window_stops_at_a_whole_line_or_cuts_a_long_first_line() {
        let rope = Rope::from_str("aaaa\nbbbb\ncccc\n");
        let shown = show_lines(&rope, 1, 4, 14);
        assert_eq!((shown.text.as_str(), shown.last), ("aaaa\nbbbb\n", 2));
        assert_eq!(shown.cut_line, None);
        let shown = show_lines(&rope, 2, 3, 5);
        assert_eq!((shown.text.as_str(), shown.last), ("bbb", 2));
        assert_eq!(shown.cut_line, Some((3, 5)));
    }

    #[test]
    fn control_characters_are_removed_and_counted() {
        let rope = Rope::from_str("a\u{1b}b\nc\u{7}\n");
        let shown = show_lines(&rope, 1, 3, 1_000);
        assert_eq!(shown.text, "ab\nc\n");
        assert_eq!(shown.removed_controls, 2);
    }
}
