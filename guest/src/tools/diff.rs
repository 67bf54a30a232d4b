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

use similar::udiff::UnifiedHunkHeader;
use similar::{Algorithm, DiffOp, DiffTag, capture_diff_slices_deadline, group_diff_ops};

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

impl Diff {
    /// No diff: nothing changed.
    pub fn none() -> Diff {
        Diff {
            text: String::new(),
            cut: false,
        }
    }
}

/// The unified diff from `old` to `new`, under the given file labels. Past
/// its deadline it settles for a coarser diff, so it always has an answer.
pub fn unified(old: &str, new: &str, old_label: &str, new_label: &str) -> Diff {
    let lines = Lines::of(old, new);
    let ops = lines.diff(Instant::now() + DIFF_TIMEOUT);
    lines.render(ops, old_label, new_label)
}

/// The unified diff from `old` to `new`, or None when the two are too
/// different to diff within [`MAX_DIFF_WORK`] or the deadline: a coarse diff
/// of two unrelated texts would only repeat both.
pub fn unified_or_give_up(old: &str, new: &str, old_label: &str, new_label: &str) -> Option<Diff> {
    let lines = Lines::of(old, new);
    if lines.least_work() > MAX_DIFF_WORK {
        return None;
    }
    let deadline = Instant::now() + DIFF_TIMEOUT;
    let ops = lines.diff(deadline);
    if Instant::now() >= deadline {
        return None;
    }
    Some(lines.render(ops, old_label, new_label))
}

/// Both texts as lines (each with its line break), and each line as a
/// number, equal lines equal numbers: the diff compares numbers, which keeps
/// `similar` to one instantiation of its algorithm (its text API would build
/// several, a third of the component's code).
struct Lines<'a> {
    old: Vec<&'a str>,
    new: Vec<&'a str>,
    old_ids: Vec<u32>,
    new_ids: Vec<u32>,
}

impl<'a> Lines<'a> {
    fn of(old: &'a str, new: &'a str) -> Lines<'a> {
        let old: Vec<&str> = old.split_inclusive('\n').collect();
        let new: Vec<&str> = new.split_inclusive('\n').collect();
        let mut ids: HashMap<&str, u32> = HashMap::new();
        let mut id_of = |line: &'a str| {
            let next = ids.len() as u32;
            *ids.entry(line).or_insert(next)
        };
        let old_ids = old.iter().map(|line| id_of(line)).collect();
        let new_ids = new.iter().map(|line| id_of(line)).collect();
        Lines {
            old,
            new,
            old_ids,
            new_ids,
        }
    }

    fn diff(&self, deadline: Instant) -> Vec<DiffOp> {
        capture_diff_slices_deadline(
            Algorithm::Myers,
            &self.old_ids,
            &self.new_ids,
            Some(deadline),
        )
    }

    /// An estimate of Myers' work: all lines of both texts times the lines
    /// that must be deleted or inserted whatever the alignment (those one
    /// side has more copies of than the other). Cheap to count, and never
    /// more than the worst case, so a diff it lets through may still meet
    /// the deadline.
    fn least_work(&self) -> u64 {
        let mut surplus: HashMap<u32, i64> = HashMap::new();
        for id in &self.old_ids {
            *surplus.entry(*id).or_default() += 1;
        }
        for id in &self.new_ids {
            *surplus.entry(*id).or_default() -= 1;
        }
        let changed: u64 = surplus.values().map(|n| n.unsigned_abs()).sum();
        let lines = (self.old_ids.len() + self.new_ids.len()) as u64;
        lines.saturating_mul(changed)
    }

    /// Hunks with three lines of context, in the unified format (a line
    /// without a final line break is followed by `\ No newline at end of
    /// file`), cut at [`MAX_DIFF_CHARS`] between hunks.
    fn render(&self, ops: Vec<DiffOp>, old_label: &str, new_label: &str) -> Diff {
        let mut text = format!("--- {old_label}\n+++ {new_label}\n");
        let mut used = char_len(&text);
        for (index, group) in group_diff_ops(ops, 3).iter().enumerate() {
            let hunk = clean_text(&self.hunk(group));
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

    fn hunk(&self, ops: &[DiffOp]) -> String {
        let mut hunk = format!("{}\n", UnifiedHunkHeader::new(ops));
        let mut write = |sign: char, lines: &[&str]| {
            for line in lines {
                hunk.push(sign);
                hunk.push_str(line);
                if !line.ends_with('\n') {
                    hunk.push_str("\n\\ No newline at end of file\n");
                }
            }
        };
        for op in ops {
            let (old, new) = (op.old_range(), op.new_range());
            match op.tag() {
                DiffTag::Equal => write(' ', &self.old[old]),
                DiffTag::Delete => write('-', &self.old[old]),
                DiffTag::Insert => write('+', &self.new[new]),
                DiffTag::Replace => {
                    write('-', &self.old[old]);
                    write('+', &self.new[new]);
                }
            }
        }
        hunk
    }
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
        assert!(Lines::of(&old, &new).least_work() > MAX_DIFF_WORK);
        assert!(unified_or_give_up(&old, &new, "a", "b").is_none());
        let edited = old.replacen("17\n", "seventeen\n", 1);
        let diff = unified_or_give_up(&old, &edited, "a", "b").expect("a small change is diffed");
        assert!(diff.text.contains("-17\n+seventeen\n"), "{}", diff.text);
        // Moving lines around changes no line's count: the bound stays low.
        assert_eq!(Lines::of("a\nb\n", "b\na\n").least_work(), 0);
    }

    #[test]
    fn a_last_line_without_a_break_is_marked_as_unified_diffs_do() {
        let diff = unified("keep\na", "keep\nb", "x", "y");
        assert_eq!(
            diff.text,
            "--- x\n+++ y\n@@ -1,2 +1,2 @@\n keep\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"
        );
        let inserted = unified("a\n", "a\nb\nc\n", "x", "y");
        assert_eq!(inserted.text, "--- x\n+++ y\n@@ -1 +1,3 @@\n a\n+b\n+c\n");
        assert_eq!(unified("same\n", "same\n", "x", "y").text, "--- x\n+++ y\n");
    }
}
