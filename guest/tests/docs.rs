//! The documentation agrees with the tool catalogue and with the guard's
//! figures.
//!
//! - The catalogue: docs/tools.md, README.md and the client suites' tool
//!   lists, as [`catalogue_docs`] checks them.
//! - The figures: where the docs give a threshold or a time of the guard
//!   (how much of a pad may go unasked, over how many edits, for how long a
//!   token or a question lasts), they give the one in the code.
//!
//! Run natively: `cargo test -p guest --test docs`.

mod catalogue_docs;

use catalogue_docs::{ToolFacts, repository};
use guest::guard::removal::{
    self, MAX_REMOVED_CHARS, QUEUE_SECONDS, TALLY_WINDOW_SECONDS, WINDOW_CHARS, WINDOW_EDITS,
};
use guest::guard::{STATE_TTL_SECONDS, TOKEN_TTL_SECONDS};
use guest::text::thousands;
use guest::tools::ALL;

fn facts() -> Vec<ToolFacts> {
    ALL.iter()
        .map(|tool| {
            ToolFacts::of(
                &tool.definition(),
                tool.summary,
                tool.asks_first(),
                tool.essential,
            )
        })
        .collect()
}

#[test]
fn the_docs_agree_with_the_catalogue() {
    let problems = catalogue_docs::problems(&repository(), &facts());
    assert!(
        problems.is_empty(),
        "the docs disagree with the tool catalogue:\n- {}",
        problems.join("\n- ")
    );
}

/// A figure the docs give: in `file`, wherever `before` is followed (within
/// a few words) by `after`, what stands between them is `figure`.
struct Figure {
    file: &'static str,
    before: &'static str,
    after: &'static str,
    figure: String,
}

fn figures() -> Vec<Figure> {
    let figure = |file, before, after, figure: String| Figure {
        file,
        before,
        after,
        figure,
    };
    let share = || removal::share_in_words().to_string();
    let minutes = |seconds: u64| (seconds / 60).to_string();
    vec![
        figure(
            "docs/tools.md",
            "would remove more than ",
            " of the pad's characters",
            share(),
        ),
        figure(
            "docs/tools.md",
            "of the pad's characters or more than ",
            ", counting",
            thousands(MAX_REMOVED_CHARS),
        ),
        figure(
            "docs/tools.md",
            "(tokens last ",
            " minutes)",
            minutes(TOKEN_TTL_SECONDS),
        ),
        figure(
            "docs/guide/approval.md",
            "remove more than ",
            " of the pad's characters",
            share(),
        ),
        figure(
            "docs/guide/approval.md",
            "remove **more than ",
            " of the pad's characters",
            share(),
        ),
        figure(
            "docs/guide/approval.md",
            "of the pad's characters, or more than ",
            " ",
            thousands(MAX_REMOVED_CHARS),
        ),
        figure(
            "docs/guide/approval.md",
            "of the pad's characters, or more than ",
            " characters",
            thousands(MAX_REMOVED_CHARS),
        ),
        figure(
            "docs/guide/approval.md",
            "holds the last ",
            " edits",
            thousands(WINDOW_EDITS),
        ),
        figure(
            "docs/guide/approval.md",
            "removed without asking in the last ",
            " minutes",
            minutes(u64::from(TALLY_WINDOW_SECONDS)),
        ),
        figure(
            "docs/guide/approval.md",
            "last ",
            " characters they typed or deleted",
            thousands(WINDOW_CHARS),
        ),
        figure(
            "docs/guide/approval.md",
            "does not finish within ",
            " seconds",
            QUEUE_SECONDS.to_string(),
        ),
        figure(
            "docs/security.md",
            "a call waits at most ",
            " seconds for the writes ahead of it",
            QUEUE_SECONDS.to_string(),
        ),
        figure(
            "docs/guide/approval.md",
            "A person has ",
            " minutes to answer",
            minutes(STATE_TTL_SECONDS),
        ),
        figure(
            "docs/guide/approval.md",
            "The token is valid for ",
            " minutes",
            minutes(TOKEN_TTL_SECONDS),
        ),
        figure(
            "docs/guide/approval.md",
            "(tokens last ",
            " minutes)",
            minutes(TOKEN_TTL_SECONDS),
        ),
        figure(
            "docs/security.md",
            "unasked removals in the last ",
            " minutes",
            minutes(u64::from(TALLY_WINDOW_SECONDS)),
        ),
        figure(
            "docs/security.md",
            "twice within ",
            " minutes",
            minutes(TOKEN_TTL_SECONDS),
        ),
        figure(
            "README.md",
            "Pads whose removals of the last ",
            " minutes",
            minutes(u64::from(TALLY_WINDOW_SECONDS)),
        ),
    ]
}

/// What stands between `before` and `after` at each place `before` occurs
/// (where `after` follows within 40 characters), in whitespace-folded text.
fn between(text: &str, before: &str, after: &str) -> Vec<String> {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    folded
        .match_indices(before)
        .filter_map(|(at, _)| {
            let rest = &folded[at + before.len()..];
            let end = rest.find(after).filter(|end| *end <= 40)?;
            Some(rest[..end].to_string())
        })
        .collect()
}

#[test]
fn the_docs_give_the_guards_figures() {
    let mut problems = Vec::new();
    for Figure {
        file,
        before,
        after,
        figure,
    } in figures()
    {
        let text = std::fs::read_to_string(repository().join(file)).unwrap();
        let found = between(&text, before, after);
        if found.is_empty() {
            problems.push(format!("{file} no longer says \"{before}{figure}{after}\""));
        }
        for other in found.iter().filter(|found| **found != figure) {
            problems.push(format!(
                "{file} says \"{before}{other}{after}\" where the code has {figure}"
            ));
        }
    }
    assert!(problems.is_empty(), "- {}", problems.join("\n- "));
}

#[test]
fn a_figure_is_found_between_its_words() {
    let text = "asks when it would\n  remove more than half of the pad's characters, or more than a third of the pad's characters";
    assert_eq!(
        between(text, "more than ", " of the pad's characters"),
        ["half", "a third"]
    );
}
