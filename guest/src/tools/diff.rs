//! Unified diffs of pad text, for results: what an edit changed (or would
//! change), line by line, with three lines of context.
//!
//! The diff is computed by the `similar` crate under a deadline (past it,
//! `similar` settles for a coarser diff that is still correct), and cut at
//! [`MAX_DIFF_CHARS`] on a hunk boundary. It is pad text, so results carry it
//! as untrusted data, with control characters removed.

use std::time::Duration;

use similar::{Algorithm, TextDiff};

use crate::text::{char_len, clean_text};

/// The most characters of diff one result carries.
pub const MAX_DIFF_CHARS: usize = 20_000;
/// How long the diff may search for the smallest set of changes.
const DIFF_TIMEOUT: Duration = Duration::from_millis(250);

pub struct Diff {
    pub text: String,
    /// Whether the diff was cut to stay within [`MAX_DIFF_CHARS`].
    pub cut: bool,
}

/// The unified diff from `old` to `new`, under the given file labels.
pub fn unified(old: &str, new: &str, old_label: &str, new_label: &str) -> Diff {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
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
}
