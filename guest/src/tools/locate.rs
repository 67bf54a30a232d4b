//! Finding `edit_document`'s edits in the text they were stated against, and
//! building the one operation that makes them all.
//!
//! Every `old_text` is looked up in the same text (edits do not see each
//! other), must occur there exactly once (or exactly once starting on its
//! `line`), and no two edits may touch the same characters. Any problem
//! refuses the whole batch, naming every edit at fault and where the
//! candidates are, so the model can fix them all in one go.
//!
//! Each edit replaces only what differs between its `old_text` and
//! `new_text`: the ends they share are kept, so a person typing inside them
//! meanwhile keeps their text exactly where they put it.

use operational_transform::OperationSeq;
use ropey::Rope;

use crate::guard;
use crate::text::{char_len, count, shared_ends};
use crate::tools::outcome::ToolError;

/// The most edits one call takes.
pub const MAX_EDITS: usize = 100;
/// The most problems one refusal lists.
const MAX_PROBLEMS: usize = 10;

/// One edit as the model stated it.
#[derive(Clone, Copy, Debug)]
pub struct EditSpec<'a> {
    pub old_text: &'a str,
    pub new_text: &'a str,
    pub line: Option<usize>,
}

/// An edit found in the text: its characters `start..start + old_len`.
#[derive(Clone, Copy, Debug)]
struct Found {
    edit: usize,
    start: usize,
    old_len: usize,
}

/// The batch as one operation on the text it was located in.
#[derive(Debug)]
pub struct Plan {
    pub operation: OperationSeq,
    /// For each edit, in the order given, where its new text lies in the
    /// text the operation produces, in characters.
    pub placed: Vec<(u64, u64)>,
    /// For each edit, in the order given, the line it starts on in the text
    /// it was located in.
    pub lines: Vec<usize>,
}

/// Locates every edit in `text` and builds the batch's operation.
pub fn plan(text: &Rope, edits: &[EditSpec]) -> Result<Plan, ToolError> {
    let flat = text.to_string();
    let mut problems = Vec::new();
    let mut found = Vec::with_capacity(edits.len());
    for (index, edit) in edits.iter().enumerate() {
        match locate(text, &flat, edit) {
            Ok(start) => found.push(Found {
                edit: index,
                start,
                old_len: char_len(edit.old_text),
            }),
            Err(problem) => problems.push(format!("edit {}: {problem}", index + 1)),
        }
    }
    found.sort_by_key(|f| (f.start, f.start + f.old_len));
    for pair in found.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let both_insert = a.old_len == 0 && b.old_len == 0 && a.start == b.start;
        if b.start < a.start + a.old_len || both_insert {
            let (first, second) = (a.edit.min(b.edit) + 1, a.edit.max(b.edit) + 1);
            let line = text.char_to_line(b.start) + 1;
            problems.push(if both_insert {
                format!(
                    "edits {first} and {second} both insert at the start of line {line}: merge them into one edit"
                )
            } else {
                format!(
                    "edits {first} and {second} overlap on line {line}: both would change the same characters, so merge them into one edit"
                )
            });
        }
    }
    if !problems.is_empty() {
        let more = problems.len().saturating_sub(MAX_PROBLEMS);
        problems.truncate(MAX_PROBLEMS);
        let mut message = problems.join("; ");
        if more > 0 {
            message.push_str(&format!("; and {}", count(more, "more problem")));
        }
        return Err(ToolError::new(message));
    }
    Ok(build(text, edits, &found))
}

/// Where one edit starts, in characters, or why it cannot be placed.
fn locate(text: &Rope, flat: &str, edit: &EditSpec) -> Result<usize, String> {
    if edit.old_text == edit.new_text {
        return Err(if edit.old_text.is_empty() {
            "old_text and new_text are both empty, so it changes nothing; leave it out".into()
        } else {
            "old_text and new_text are the same, so it changes nothing; leave it out".into()
        });
    }
    let lines = text.len_lines();
    if let Some(line) = edit.line
        && line > lines + usize::from(edit.old_text.is_empty())
    {
        return Err(format!(
            "line {line} is past the end: the text has {}{}",
            count(lines, "line"),
            if edit.old_text.is_empty() {
                format!(", so an insertion can go at line {} at most", lines + 1)
            } else {
                String::new()
            }
        ));
    }
    if edit.old_text.is_empty() {
        return match edit.line {
            None => Err(
                "old_text is empty, so it needs \"line\": the line at whose start new_text goes"
                    .into(),
            ),
            Some(line) if line > lines => Ok(text.len_chars()),
            Some(line) => Ok(text.line_to_char(line - 1)),
        };
    }
    // At most a few occurrences are looked for: enough to tell one from
    // several and to name where, never a search that grows with the repeats
    // of a repetitive pad.
    let starts = occurrences(flat, edit.old_text, 0..flat.len(), MOST_NAMED + 1);
    let line_of = |byte: usize| text.byte_to_line(byte) + 1;
    let candidates: Vec<usize> = match edit.line {
        Some(line) => {
            let on_line = text.line_to_byte(line - 1)..text.line_to_byte(line);
            occurrences(flat, edit.old_text, on_line, 2)
        }
        None => starts.iter().copied().take(2).collect(),
    };
    match (candidates.as_slice(), edit.line) {
        ([byte], _) => Ok(text.byte_to_char(*byte)),
        ([], None) => Err("old_text does not occur in the text; copy it exactly from a fresh read (line numbers and the tab after them are not part of the text)".into()),
        ([], Some(line)) if starts.is_empty() => Err(format!(
            "old_text does not occur in the text (it was to start on line {line}); copy it exactly from a fresh read"
        )),
        ([], Some(line)) => Err(format!(
            "old_text does not start on line {line}; it starts on {}",
            candidate_lines(&starts[..starts.len().min(MOST_NAMED)], line_of)
        )),
        (_, None) => Err(format!(
            "old_text occurs {}, starting on {}; make it longer so it occurs once, or give \"line\" to pick one",
            times(starts.len()),
            candidate_lines(&starts[..starts.len().min(MOST_NAMED)], line_of)
        )),
        (_, Some(line)) => Err(format!(
            "old_text starts more than once on line {line}; make it longer so it occurs once there"
        )),
    }
}

/// How many occurrences an error names at most.
const MOST_NAMED: usize = 10;

/// "2 times", or "more than 10 times" when the search stopped.
fn times(found: usize) -> String {
    if found > MOST_NAMED {
        format!("more than {MOST_NAMED} times")
    } else {
        format!("{found} times")
    }
}

/// Byte offsets of the first `most` occurrences of `needle` that start
/// within `starting_in`, overlapping ones included: "aa" occurs twice in
/// "aaa", and is therefore not unique there.
fn occurrences(
    haystack: &str,
    needle: &str,
    starting_in: std::ops::Range<usize>,
    most: usize,
) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut from = starting_in.start;
    while starts.len() < most
        && from < starting_in.end
        && let Some(offset) = haystack[from..].find(needle)
    {
        let at = from + offset;
        if at >= starting_in.end {
            break;
        }
        starts.push(at);
        from = at + haystack[at..].chars().next().map_or(1, char::len_utf8);
    }
    starts
}

fn candidate_lines(starts: &[usize], line_of: impl Fn(usize) -> usize) -> String {
    let mut lines: Vec<usize> = starts.iter().map(|b| line_of(*b)).collect();
    lines.dedup();
    let noun = if lines.len() == 1 { "line" } else { "lines" };
    format!("{noun} {}", guard::list_lines(&lines))
}

/// The operation for edits already found (sorted, not overlapping).
fn build(text: &Rope, edits: &[EditSpec], found: &[Found]) -> Plan {
    let mut operation = OperationSeq::default();
    let mut placed = vec![(0, 0); edits.len()];
    let mut lines = vec![0; edits.len()];
    let (mut at, mut shift) = (0usize, 0i64);
    for found in found {
        let edit = edits[found.edit];
        let new_len = char_len(edit.new_text);
        let (prefix, suffix) = shared_ends(edit.old_text, edit.new_text);
        let middle: String = edit
            .new_text
            .chars()
            .skip(prefix)
            .take(new_len - prefix - suffix)
            .collect();
        operation.retain((found.start + prefix - at) as u64);
        operation.delete((found.old_len - prefix - suffix) as u64);
        operation.insert(&middle);
        at = found.start + found.old_len - suffix;
        let start = (found.start as i64 + shift) as u64;
        placed[found.edit] = (start, start + new_len as u64);
        lines[found.edit] = text.char_to_line(found.start) + 1;
        shift += new_len as i64 - found.old_len as i64;
    }
    operation.retain((text.len_chars() - at) as u64);
    Plan {
        operation,
        placed,
        lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit<'a>(old_text: &'a str, new_text: &'a str, line: Option<usize>) -> EditSpec<'a> {
        EditSpec {
            old_text,
            new_text,
            line,
        }
    }

    fn apply(text: &str, edits: &[EditSpec]) -> Result<String, String> {
        let plan = plan(&Rope::from_str(text), edits).map_err(|e| e.message().to_string())?;
        Ok(plan.operation.apply(text).unwrap())
    }

    #[test]
    fn edits_are_located_in_the_same_text_and_made_at_once() {
        let text = "one\ntwo\nthree\n";
        let edits = [
            edit("two", "2", None),
            edit("one", "two", None),
            edit("", "zero\n", Some(1)),
            edit("", "four\n", Some(4)),
        ];
        assert_eq!(apply(text, &edits).unwrap(), "zero\ntwo\n2\nthree\nfour\n");
    }

    #[test]
    fn placed_ranges_name_each_new_text_in_the_result() {
        let text = "alpha beta gamma";
        let edits = [edit("gamma", "GAMMA!", None), edit("alpha", "a", None)];
        let plan = plan(&Rope::from_str(text), &edits).unwrap();
        let result = plan.operation.apply(text).unwrap();
        let piece = |(start, end): (u64, u64)| -> String {
            result
                .chars()
                .skip(start as usize)
                .take((end - start) as usize)
                .collect()
        };
        assert_eq!(piece(plan.placed[0]), "GAMMA!");
        assert_eq!(piece(plan.placed[1]), "a");
    }

    #[test]
    fn only_what_differs_is_replaced() {
        let plan = plan(
            &Rope::from_str("say teh word"),
            &[edit("teh word", "the word", None)],
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(&plan.operation).unwrap(),
            serde_json::json!([5, "he", -2, 5])
        );
    }

    #[test]
    fn a_line_picks_one_of_several_occurrences() {
        let text = "x = 1\nx = 1\n";
        assert_eq!(
            apply(text, &[edit("x = 1", "x = 2", Some(2))]).unwrap(),
            "x = 1\nx = 2\n"
        );
        let err = apply(text, &[edit("x = 1", "x = 2", None)]).unwrap_err();
        assert!(
            err.contains("occurs 2 times, starting on lines 1, 2"),
            "{err}"
        );
    }

    #[test]
    fn overlapping_occurrences_are_not_unique() {
        let err = apply("aaa", &[edit("aa", "b", None)]).unwrap_err();
        assert!(err.contains("occurs 2 times"), "{err}");
    }

    #[test]
    fn every_problem_is_named_and_nothing_is_built() {
        let text = "a\nb\nc\n";
        let err = apply(
            text,
            &[
                edit("zzz", "y", None),
                edit("b", "b", None),
                edit("", "x", None),
                edit("a", "A", Some(3)),
                edit("", "x", Some(9)),
            ],
        )
        .unwrap_err();
        for expected in [
            "edit 1: old_text does not occur",
            "edit 2: old_text and new_text are the same",
            "edit 3: old_text is empty, so it needs \"line\"",
            "edit 4: old_text does not start on line 3; it starts on line 1",
            "edit 5: line 9 is past the end: the text has 4 lines, so an insertion can go at line 5 at most",
        ] {
            assert!(err.contains(expected), "{expected} in {err}");
        }
    }

    #[test]
    fn overlaps_and_double_inserts_are_refused() {
        let err = apply(
            "hello world",
            &[edit("hello w", "x", None), edit("world", "y", None)],
        )
        .unwrap_err();
        assert!(err.contains("edits 1 and 2 overlap on line 1"), "{err}");
        let err = apply("a\nb", &[edit("", "x", Some(2)), edit("", "y", Some(2))]).unwrap_err();
        assert!(err.contains("both insert at the start of line 2"), "{err}");
        // Touching is not overlapping.
        assert_eq!(
            apply(
                "ab",
                &[
                    edit("a", "A", None),
                    edit("b", "B", None),
                    edit("", ">", Some(1))
                ]
            )
            .unwrap(),
            ">AB"
        );
    }

    #[test]
    fn code_points_count_in_astral_and_zwj_text() {
        let text = "👨‍👩‍👧 family\n🎉 party\n";
        assert_eq!(
            apply(text, &[edit("party", "fête", Some(2))]).unwrap(),
            "👨‍👩‍👧 family\n🎉 fête\n"
        );
    }

    #[test]
    fn a_repetitive_pad_is_searched_a_bounded_number_of_times() {
        let pad = "a".repeat(262_144);
        let long = "a".repeat(131_072);
        let err = apply(&pad, &[edit(&long, "b", None)]).unwrap_err();
        assert!(
            err.contains("occurs more than 10 times, starting on line 1;"),
            "{err}"
        );
        let err = apply(&pad, &[edit(&long, "b", Some(1))]).unwrap_err();
        assert!(err.contains("starts more than once on line 1"), "{err}");
        let lines = "x\n".repeat(30);
        let err = apply(&lines, &[edit("x", "y", None)]).unwrap_err();
        assert!(
            err.contains("more than 10 times, starting on lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10;"),
            "{err}"
        );
    }
}
