//! Unified diffs of pad text, for results: what an edit changed (or would
//! change), line by line, with three lines of context.
//!
//! The diff is computed by the `similar` crate under a deadline (past it,
//! `similar` settles for a coarser diff that is still correct), and cut at
//! [`MAX_DIFF_CHARS`] on a hunk boundary. It is pad text, so results carry it
//! as untrusted data, with control characters removed.
//!
//! Between two texts that share little, Myers' search costs up to the number
//! of lines times the number of changed lines, which for two unrelated
//! 262,144-character pads would be most of a call's CPU budget.
//! [`unified_or_give_up`] first estimates that cost, and gives up without
//! diffing when the estimate is past [`MAX_DIFF_WORK`].

use std::collections::HashMap;
use std::time::{Duration, Instant};

use similar::{Algorithm, TextDiff};

use crate::text::{char_len, clean_text};

/// The most characters of diff one result carries.
pub const MAX_DIFF_CHARS: usize = 20_000;
/// How long the diff may search for the smallest set of changes.
const DIFF_TIMEOUT: Duration = Duration::from_millis(250);
/// The most line comparisons a diff may be expected to need: a few tens of
/// milliseconds of guest time.
pub const MAX_DIFF_WORK: u64 = 50_000_000;

pub struct Diff {
    pub text: String,
    /// Whether the diff was cut to stay within [`MAX_DIFF_CHARS`].
    pub cut: bool,
}

/// The unified diff from `old` to `new`, under the given file labels. Past
/// its deadline it settles for a coarser diff, so it always has an answer.
pub fn unified(old: &str, new: &str, old_label: &str, new_label: &str) -> Diff {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    render(&diff, old_label, new_label)
}

/// The unified diff from `old` to `new`, or None when the two are too
/// different to diff within [`MAX_DIFF_WORK`] or the deadline: a coarse diff
/// of two unrelated texts would only repeat both.
pub fn unified_or_give_up(old: &str, new: &str, old_label: &str, new_label: &str) -> Option<Diff> {
    if least_work(old, new) > MAX_DIFF_WORK {
        return None;
    }
    let deadline = Instant::now() + DIFF_TIMEOUT;
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .deadline(deadline)
        .diff_lines(old, new);
    if Instant::now() >= deadline {
        return None;
    }
    Some(render(&diff, old_label, new_label))
}

/// An estimate of Myers' work: all lines of both texts times the lines that
/// must be deleted or inserted whatever the alignment (those one side has
/// more copies of than the other). Cheap to count, and never more than the
/// worst case, so a diff it lets through may still meet the deadline.
fn least_work(old: &str, new: &str) -> u64 {
    let mut surplus: HashMap<&str, i64> = HashMap::new();
    let mut lines = 0u64;
    for line in old.split_inclusive('\n') {
        *surplus.entry(line).or_default() += 1;
        lines += 1;
    }
    for line in new.split_inclusive('\n') {
        *surplus.entry(line).or_default() -= 1;
        lines += 1;
    }
    let changed: u64 = surplus.values().map(|n| n.unsigned_abs()).sum();
    lines.saturating_mul(changed)
}

fn render(diff: &TextDiff<'_, '_, str>, old_label: &str, new_label: &str) -> Diff {
    let mut text = format!("--- {old_label}\n+++ {new_label}\n");
    let mut used = char_len(&text);
    for (index, hunk) in diff
        .unified_diff()
        .context_radius(3)
        .iter_hunks()
        .enumerate()
    {
        let hunk = clean_text(&hunk.to_string());
        let size = char_len(&hunk);
        if used + size <= MAX_DIFF_CHARS {
            used += size;
            text.push_str(&hunk);
            continue;
        }
        // A first hunk too long for the budget is shown as far as whole lines fit.
        if index == 0 {
            for line in hunk.split_inclusive('\n') {
                used += char_len(line);
                if used > MAX_DIFF_CHARS {
                    break;
                }
                text.push_str(line);
            }
        }
        return Diff { text, cut: true };
    }
    Diff { text, cut: false }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_shows_changed_lines_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nD\ne\nf\ng\nh\n";
        let diff = unified(old, new, "pad r1", "pad r2");
        assert_eq!(
            diff.text,
            "--- pad r1\n+++ pad r2\n@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n"
        );
        assert!(!diff.cut);
    }

    #[test]
    fn a_long_diff_is_cut_between_hunks_and_control_characters_go() {
        let old: String = (0..4000).map(|i| format!("line {i}\n")).collect();
        let new = old.replace('0', "zero\u{1b}");
        let diff = unified(&old, &new, "a", "b");
        assert!(char_len(&diff.text) <= MAX_DIFF_CHARS);
        assert!(diff.cut);
        assert!(diff.text.ends_with('\n'));
        assert!(!diff.text.contains('\u{1b}'));
        // One change too long for a result still shows its first lines.
        let diff = unified("", &old, "a", "b");
        assert!(diff.cut);
        assert!(diff.text.contains("+line 0\n") && char_len(&diff.text) <= MAX_DIFF_CHARS);
    }

    #[test]
    fn unrelated_long_texts_are_given_up_at_once_and_related_ones_are_not() {
        let old: String = (0..40_000).map(|i| format!("{i}\n")).collect();
        let new: String = (0..40_000).map(|i| format!("x{i}\n")).collect();
        assert!(least_work(&old, &new) > MAX_DIFF_WORK);
        assert!(unified_or_give_up(&old, &new, "a", "b").is_none());
        let edited = old.replacen("17\n", "seventeen\n", 1);
        let diff = unified_or_give_up(&old, &edited, "a", "b").expect("a small change is diffed");
        assert!(diff.text.contains("-17\n+seventeen\n"), "{}", diff.text);
        // Moving lines around changes no line's count: the bound stays low.
        assert_eq!(least_work("a\nb\n", "b\na\n"), 0);
    }
}
