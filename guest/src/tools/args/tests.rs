//! The argument types, read as a client sends them.

use super::*;
use serde_json::json;

#[derive(Deserialize, Debug)]
struct Sample<'a> {
    #[serde(borrow)]
    id: PadId<'a>,
    #[serde(borrow)]
    text: Option<NonEmptyText<'a>>,
    line: Option<Line>,
    #[serde(default)]
    flag: Flag,
    #[serde(borrow)]
    edits: Option<Edits<'a>>,
}

fn problem(value: Value) -> String {
    let map = value.as_object().unwrap().clone();
    match read::<Sample>(&map) {
        Ok(sample) => panic!("read {sample:?}"),
        Err(error) => error.message().to_string(),
    }
}

#[test]
fn refuses_unknown_and_missing_arguments() {
    let map = json!({"id": "a", "dispatcher": 1})
        .as_object()
        .unwrap()
        .clone();
    let err = names("get_document", &["id"], &["id"], &map).unwrap_err();
    assert_eq!(
        err.message(),
        "unknown argument \"dispatcher\": get_document takes id"
    );
    let map = json!({"id": null}).as_object().unwrap().clone();
    let err = names("get_document", &["id"], &["id"], &map).unwrap_err();
    assert_eq!(err.message(), "missing required argument \"id\"");
    let map = json!({"x": 1}).as_object().unwrap().clone();
    let err = names("get_stats", &[], &[], &map).unwrap_err();
    assert!(err.message().contains("no arguments"), "{}", err.message());
}

#[test]
fn ids_are_plain_names() {
    for bad in [
        "",
        ".",
        "..",
        "../etc",
        "a/b",
        "%2F",
        "a b",
        &"x".repeat(101),
    ] {
        assert!(check_id(bad).is_err(), "{bad}");
    }
    for good in ["notes", "a.b_c-d", "X9", &"x".repeat(100)] {
        assert!(check_id(good).is_ok(), "{good}");
    }
}

#[test]
fn a_good_object_reads_into_the_struct() {
    let map = json!({"edits": [{"line": 2, "new_text": "b", "old_text": "a"}], "id": "p", "flag": true, "line": 3, "text": "t"});
    let sample: Sample = read(map.as_object().unwrap()).unwrap();
    assert_eq!(sample.id, PadId("p"));
    assert_eq!(sample.text, Some(NonEmptyText("t")));
    assert_eq!((sample.line, sample.flag), (Some(Line(3)), Flag(true)));
    let edits = sample.edits.unwrap().0;
    assert_eq!(
        (edits[0].old_text, edits[0].new_text, edits[0].line),
        ("a", "b", Some(2))
    );
}

#[test]
fn each_problem_names_its_argument_in_the_declared_order() {
    assert_eq!(
        problem(json!({"id": 5})),
        "argument \"id\" must be a string"
    );
    assert_eq!(
        problem(json!({"id": "a b"})),
        "invalid pad id: only letters, digits, dot, underscore and hyphen are allowed"
    );
    assert_eq!(
        problem(json!({"id": "a", "text": ""})),
        "argument \"text\" must not be empty"
    );
    // The first declared field is reported, whatever order the object gives.
    assert_eq!(
        problem(json!({"line": 0, "id": "a", "text": 3})),
        "argument \"text\" must be a string"
    );
    assert_eq!(
        problem(json!({"id": "a", "line": 0})),
        format!("argument \"line\" must be a whole line number from 1 to {MAX_LINE}")
    );
    assert_eq!(
        problem(json!({"id": "a", "line": 1.5})),
        format!("argument \"line\" must be a whole line number from 1 to {MAX_LINE}")
    );
    assert_eq!(
        problem(json!({"id": "a", "flag": "yes"})),
        "argument \"flag\" must be true or false"
    );
}

#[test]
fn an_edit_names_its_number_and_field() {
    let edit = |value: Value| {
        problem(json!({"id": "a", "edits": [{"old_text": "x", "new_text": "y"}, value]}))
    };
    assert_eq!(
        edit(json!(3)),
        "edit 2: must be an object with old_text, new_text and optionally line"
    );
    assert_eq!(
        edit(json!({"old_text": "x"})),
        "edit 2: missing new_text (it may be empty, but it must be there)"
    );
    assert_eq!(
        edit(json!({"old_text": "x", "new_text": "y", "lines": 1})),
        "edit 2: unknown field \"lines\": an edit takes old_text, new_text and line"
    );
    assert_eq!(
        edit(json!({"old_text": 1, "new_text": "y"})),
        "edit 2: old_text must be a string"
    );
    assert_eq!(
        edit(json!({"old_text": "x", "new_text": "y", "line": 0})),
        format!("edit 2: line must be a whole line number from 1 to {MAX_LINE}")
    );
    assert_eq!(
        problem(json!({"id": "a", "edits": []})),
        "argument \"edits\" must hold 1–100 edits; it holds 0"
    );
    assert_eq!(
        problem(json!({"id": "a", "edits": "x"})),
        "argument \"edits\" must be an array of {old_text, new_text, line?} objects"
    );
}

#[test]
fn a_bad_base_is_told_where_bases_come_from_and_left_out_only_where_it_may_be() {
    #[derive(Deserialize, Debug)]
    struct Needs {
        #[allow(dead_code)]
        base: GivenBase,
    }
    #[derive(Deserialize, Debug)]
    struct MayOmit {
        #[allow(dead_code)]
        base: Option<BaseOrNow>,
    }
    let bad = json!({"base": "r1.not-ours"});
    let needed = read::<Needs>(bad.as_object().unwrap()).unwrap_err();
    let optional = read::<MayOmit>(bad.as_object().unwrap()).unwrap_err();
    for message in [needed.message(), optional.message()] {
        assert!(
            message.contains("get_document window, edit_document, get_changes or wait_for_changes"),
            "{message}"
        );
    }
    assert!(
        !needed.message().contains("leave it out"),
        "{}",
        needed.message()
    );
    assert!(
        optional.message().contains("leave it out"),
        "{}",
        optional.message()
    );
}
