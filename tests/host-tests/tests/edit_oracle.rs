//! The concurrency oracle for `edit_document`.
//!
//! Each trial: a model (the `rmcp` client library on the built binary) reads
//! a pad through a line window and plans a few edits against that text; a
//! person (a real collaborator on the test server's socket) then deletes and
//! types at chosen places: before, after, at the edges of and inside the
//! edited text; then the model sends its edits with the base it read. The
//! expected pad is computed here with the `operational-transform` crate that
//! Rustpad uses (the model's operation transformed over the person's), and
//! the pad must equal it exactly, with every marker the person typed in it.
//!
//! `EDIT_ORACLE_TRIALS` sets the number of trials (200 here, 2,000 under
//! `make soak`), `EDIT_ORACLE_SEED` the random seed; a failure names both.

mod common;

use operational_transform::OperationSeq;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rustpad_test_server::person::Person;
use rustpad_test_server::typist::XorShift;
use rustpad_test_server::{Seed, ServerOptions, TestServer};
use serde_json::{Value, json};

const DEFAULT_TRIALS: usize = 200;
const DEFAULT_SEED: u64 = 0x0ed1_7ac1e;

const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "pad",
    "note",
    "the",
    "a",
    "is",
    "🎉",
    "👨‍👩‍👧",
    "é",
    "漢字",
    "x",
    "42",
    "-",
    "(",
    ")",
    "::",
];

fn chars(text: &str) -> Vec<char> {
    text.chars().collect()
}

fn piece(text: &[char], start: usize, end: usize) -> String {
    text[start..end].iter().collect()
}

/// Lines of words, with astral characters and ZWJ sequences among them.
fn random_text(rng: &mut XorShift) -> String {
    let lines = 3 + rng.below(20);
    let mut text = String::new();
    for _ in 0..lines {
        let words = rng.below(9);
        let line: Vec<&str> = (0..words).map(|_| WORDS[rng.below(WORDS.len())]).collect();
        text.push_str(&line.join(" "));
        text.push('\n');
    }
    if rng.chance(30) {
        text.pop();
    }
    text
}

/// One of the model's edits: where it is in the text it read, and what it says.
#[derive(Clone, Debug)]
struct ModelEdit {
    start: usize,
    old: String,
    new: String,
    line: Option<usize>,
}

fn line_of(text: &[char], at: usize) -> usize {
    text[..at].iter().filter(|c| **c == '\n').count() + 1
}

fn line_start(text: &[char], line: usize) -> usize {
    if line == 1 {
        return 0;
    }
    text.iter()
        .enumerate()
        .filter(|(_, c)| **c == '\n')
        .nth(line - 2)
        .map_or(text.len(), |(i, _)| i + 1)
}

/// Starts (in characters) of every occurrence of `needle`, overlapping ones included.
fn occurrences(text: &[char], needle: &[char]) -> Vec<usize> {
    if needle.is_empty() || needle.len() > text.len() {
        return Vec::new();
    }
    (0..=text.len() - needle.len())
        .filter(|&i| text[i..i + needle.len()] == *needle)
        .collect()
}

fn random_new_text(rng: &mut XorShift, old: &str) -> String {
    let fresh = ["NEW", "Ω", "🦀", "\n", "changed text", "", "👩‍💻 ok"][rng.below(7)];
    match rng.below(4) {
        // Shares the old text's ends, so only the middle changes.
        0 if old.chars().count() >= 2 => {
            let old = chars(old);
            format!("{}{fresh}{}", old[0], old[old.len() - 1])
        }
        1 => format!("{old}{fresh}"),
        _ => fresh.to_string(),
    }
}

/// Up to four edits a model could state: unique old texts (or unique on
/// their line), inserts at line starts, never touching each other.
fn plan_edits(rng: &mut XorShift, text: &[char]) -> Vec<ModelEdit> {
    let lines = line_of(text, text.len());
    let mut edits: Vec<ModelEdit> = Vec::new();
    for _ in 0..1 + rng.below(4) {
        for _attempt in 0..20 {
            let candidate = if rng.chance(20) {
                let line = 1 + rng.below(lines + 1);
                let new = ["inserted line\n", "🎉 top\n", "x"][rng.below(3)].to_string();
                ModelEdit {
                    start: line_start(text, line),
                    old: String::new(),
                    new,
                    line: Some(line),
                }
            } else {
                if text.is_empty() {
                    continue;
                }
                let start = rng.below(text.len());
                let len = 1 + rng.below(12.min(text.len() - start));
                let old = &text[start..start + len];
                let all = occurrences(text, old);
                let line = line_of(text, start);
                let on_line = all.iter().filter(|&&s| line_of(text, s) == line).count();
                let pinned = match (all.len(), on_line) {
                    (1, _) => rng.chance(30).then_some(line),
                    (_, 1) => Some(line),
                    _ => continue,
                };
                let old: String = old.iter().collect();
                let new = random_new_text(rng, &old);
                if new == old {
                    continue;
                }
                ModelEdit {
                    start,
                    old,
                    new,
                    line: pinned,
                }
            };
            let end = candidate.start + candidate.old.chars().count();
            let clashes = edits.iter().any(|e| {
                let e_end = e.start + e.old.chars().count();
                let both_insert = e.old.is_empty() && candidate.old.is_empty();
                (candidate.start < e_end && e.start < end)
                    || (both_insert && e.start == candidate.start)
                    || (e.old.is_empty() && e.start > candidate.start && e.start < end)
                    || (candidate.old.is_empty()
                        && candidate.start > e.start
                        && candidate.start < e_end)
            });
            if !clashes {
                edits.push(candidate);
                break;
            }
        }
    }
    edits
}

/// The model's batch as one operation: each edit replaces only what differs
/// between its old and new text (the ends they share stay).
fn model_operation(text: &[char], edits: &[ModelEdit]) -> OperationSeq {
    let mut sorted = edits.to_vec();
    sorted.sort_by_key(|e| (e.start, e.start + e.old.chars().count()));
    let mut operation = OperationSeq::default();
    let mut at = 0;
    for edit in &sorted {
        let (old, new) = (chars(&edit.old), chars(&edit.new));
        let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let room = old.len().min(new.len()) - prefix;
        let suffix = old
            .iter()
            .rev()
            .zip(new.iter().rev())
            .take(room)
            .take_while(|(a, b)| a == b)
            .count();
        operation.retain((edit.start + prefix - at) as u64);
        operation.delete((old.len() - prefix - suffix) as u64);
        operation.insert(&piece(&new, prefix, new.len() - suffix));
        at = edit.start + old.len() - suffix;
    }
    operation.retain((text.len() - at) as u64);
    operation
}

/// What the person does, in the coordinates of the text the model read:
/// inserts of unique markers and short deletions, never a marker deleted.
enum Keystroke {
    Insert(usize, String),
    Delete(usize, usize),
}

fn plan_person(
    rng: &mut XorShift,
    text: &[char],
    edits: &[ModelEdit],
    trial: usize,
) -> Vec<Keystroke> {
    let mut spots = vec![0, text.len()];
    for edit in edits {
        let end = edit.start + edit.old.chars().count();
        spots.extend([
            edit.start,
            end,
            edit.start.saturating_sub(1),
            (end + 1).min(text.len()),
        ]);
        if end > edit.start + 1 {
            spots.push(edit.start + 1 + rng.below(end - edit.start - 1));
        }
    }
    let mut deletions: Vec<(usize, usize)> = Vec::new();
    for _ in 0..rng.below(3) {
        if text.is_empty() {
            break;
        }
        let start = spots[rng.below(spots.len())].min(text.len() - 1);
        let end = (start + 1 + rng.below(5)).min(text.len());
        if deletions.iter().all(|(s, e)| end <= *s || start >= *e) {
            deletions.push((start, end));
        }
    }
    let mut strokes: Vec<Keystroke> = deletions
        .iter()
        .map(|(s, e)| Keystroke::Delete(*s, *e))
        .collect();
    for n in 0..1 + rng.below(3) {
        let at = if rng.chance(70) {
            spots[rng.below(spots.len())]
        } else {
            rng.below(text.len() + 1)
        };
        // Not strictly inside a deletion: the person would delete their own marker.
        if deletions.iter().any(|(s, e)| at > *s && at < *e) {
            continue;
        }
        strokes.push(Keystroke::Insert(at, format!("«{trial}🎉{n}»")));
    }
    // Right to left, so every position still means the text the model read;
    // at one place, the deletion goes first so it never takes a marker.
    strokes.sort_by_key(|s| match s {
        Keystroke::Delete(start, _) => (std::cmp::Reverse(*start), 0),
        Keystroke::Insert(at, _) => (std::cmp::Reverse(*at), 1),
    });
    strokes
}

/// Characters an operation deletes.
fn deleted(operation: &OperationSeq) -> u64 {
    operation
        .ops()
        .iter()
        .map(|part| match part {
            operational_transform::Operation::Delete(n) => *n,
            _ => 0,
        })
        .sum()
}

fn keystroke_operation(length: usize, stroke: &Keystroke) -> OperationSeq {
    let mut operation = OperationSeq::default();
    match stroke {
        Keystroke::Insert(at, text) => {
            operation.retain(*at as u64);
            operation.insert(text);
            operation.retain((length - at) as u64);
        }
        Keystroke::Delete(start, end) => {
            operation.retain(*start as u64);
            operation.delete((end - start) as u64);
            operation.retain((length - end) as u64);
        }
    }
    operation
}

/// Calls a tool and returns its structured content. A batch that removes
/// most of a small pad asks a person; this client shows no dialog, so it
/// takes the two-call token, as a client without elicitation does.
async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &'static str,
    arguments: Value,
) -> Value {
    try_call(client, tool, arguments)
        .await
        .unwrap_or_else(|message| panic!("{tool} failed: {message}"))
}

/// Like [`call`], but a tool error is returned as its message.
async fn try_call(
    client: &RunningService<RoleClient, ()>,
    tool: &'static str,
    arguments: Value,
) -> Result<Value, String> {
    let Value::Object(mut arguments) = arguments else {
        unreachable!("arguments are an object")
    };
    loop {
        let result = client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments.clone()))
            .await
            .unwrap_or_else(|e| panic!("{tool} failed at the protocol level: {e}"));
        let text = serde_json::to_value(&result.content).unwrap_or_default();
        if result.is_error != Some(true) {
            return Ok(result
                .structured_content
                .unwrap_or_else(|| panic!("{tool} returned no structured content: {text}")));
        }
        let message = text[0]["text"].as_str().unwrap_or_default();
        let token = message
            .split_once("confirm_token=\"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(token, _)| token.to_string());
        match token {
            Some(token) if !arguments.contains_key("confirm_token") => {
                arguments.insert("confirm_token".into(), json!(token));
            }
            _ => return Err(message.to_string()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_typing_between_read_and_edit_never_moves_the_edit_or_loses_a_keystroke() {
    let trials: usize = std::env::var("EDIT_ORACLE_TRIALS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_TRIALS);
    let seed: u64 = std::env::var("EDIT_ORACLE_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    let rustpad = TestServer::start(ServerOptions::default()).await.unwrap();
    let mut command = tokio::process::Command::new(common::binary());
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("RUSTPAD_URL", rustpad.url())
        .env("XDG_STATE_HOME", common::state_dir());
    let model =
        ().serve(TokioChildProcess::new(command).expect("the binary starts"))
            .await
            .expect("the client connects");

    let mut rng = XorShift::new(seed);
    let (mut edits_made, mut refused) = (0, 0);
    for trial in 0..trials {
        let context = format!("trial {trial} of EDIT_ORACLE_SEED={seed}");
        let pad = format!("oracle-{seed}-{trial}");
        let original = random_text(&mut rng);
        let text = chars(&original);
        rustpad
            .seed(
                &pad,
                &Seed {
                    text: Some(original.clone()),
                    ..Seed::default()
                },
            )
            .unwrap();

        let read = call(
            &model,
            "get_document",
            json!({ "id": pad, "start_line": 1 }),
        )
        .await;
        assert_eq!(read["text"], json!(original), "{context}");
        let edits = plan_edits(&mut rng, &text);
        if edits.is_empty() {
            continue;
        }
        let ours = model_operation(&text, &edits);

        let strokes = plan_person(&mut rng, &text, &edits, trial);
        let mut person = Person::join(&rustpad.socket_url(&pad), "person")
            .await
            .unwrap();
        let mut theirs = Vec::new();
        for stroke in &strokes {
            let operation = keystroke_operation(person.text().chars().count(), stroke);
            person.edit(operation.clone()).await.unwrap();
            theirs.push(operation);
        }
        let typed_by_person = person.text().to_string();
        person.leave().await;

        let arguments: Vec<Value> = edits
            .iter()
            .map(|e| match e.line {
                Some(line) => json!({ "old_text": e.old, "new_text": e.new, "line": line }),
                None => json!({ "old_text": e.old, "new_text": e.new }),
            })
            .collect();
        let outcome = try_call(
            &model,
            "edit_document",
            json!({ "id": pad, "base": read["base"], "edits": arguments }),
        )
        .await;

        let planned = deleted(&ours);
        let carried = theirs
            .iter()
            .fold(ours, |ours, theirs| ours.transform(theirs).unwrap().0);
        // Where the person deleted text an edit replaces, merging would tangle
        // the two (or repeat a change): the server must refuse and write nothing.
        if deleted(&carried) < planned {
            let message = outcome.expect_err(&format!(
                "{context}: edits over deleted text were made: {edits:?}"
            ));
            assert!(
                message.contains("was changed since base"),
                "{context}: {message}"
            );
            assert_eq!(rustpad.text(&pad), typed_by_person, "{context}");
            refused += 1;
            continue;
        }
        let result = outcome.unwrap_or_else(|message| panic!("{context}: {message}"));
        let expected = carried.apply(&typed_by_person).unwrap();
        let actual = rustpad.text(&pad);
        assert_eq!(actual, expected, "{context}: edits {edits:?}");
        for stroke in &strokes {
            if let Keystroke::Insert(_, marker) = stroke {
                assert!(
                    actual.contains(marker.as_str()),
                    "{context}: {marker} was lost"
                );
            }
        }
        // The seed, the person's edits, this server's mark and its edit.
        let revision = 1 + theirs.len() as u64 + 2;
        assert_eq!(result["revision"], json!(revision), "{context}");
        let lines = actual.split('\n').count() as u64;
        for range in result["edits"].as_array().unwrap() {
            let (first, last) = (
                range["start_line"].as_u64().unwrap(),
                range["end_line"].as_u64().unwrap(),
            );
            assert!(
                1 <= first && first <= last && last <= lines,
                "{context}: {range}"
            );
        }
        edits_made += 1;
    }
    eprintln!("{trials} trials: {edits_made} made their edits, {refused} refused");
    assert!(
        edits_made * 10 >= trials * 6,
        "only {edits_made} of {trials} trials made their edits ({refused} refused)"
    );
    assert!(
        trials < 100 || refused > 0,
        "no trial had the person delete text an edit replaces"
    );
    model.cancel().await.ok();
}
