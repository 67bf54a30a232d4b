//! Operations, documents and what each keeps, tried on small texts.

use super::*;

fn op(json: &str) -> Result<Operation<'_>, serde_json::Error> {
    serde_json::from_str(json)
}

fn text(doc: &Document) -> String {
    doc.text().unwrap()
}

#[test]
fn parses_the_wire_format_strictly() {
    assert_eq!(
        op(r#"[5,"abc",-2]"#).unwrap(),
        Operation(vec![
            Part::Retain(5),
            Part::Insert("abc".into()),
            Part::Delete(2)
        ])
    );
    for bad in [
        "[1.0]",
        "[0]",
        r#"["a",0]"#,
        r#"[""]"#,
        "[null]",
        "[18446744073709551615]",
        "[-9223372036854775808]",
        "{}",
    ] {
        assert!(op(bad).is_err(), "{bad}");
    }
}

#[test]
fn folds_in_code_points() {
    let mut doc = Document::with_text();
    doc.apply(&op(r#"["h🎉e🎉l👨‍👨‍👦‍👦lo"]"#).unwrap()).unwrap();
    assert_eq!(doc.len(), 14);
    doc.apply(&op(r#"[2,"X",-1,11]"#).unwrap()).unwrap();
    assert_eq!(text(&doc), "h🎉X🎉l👨‍👨‍👦‍👦lo");
    doc.apply(&op("[-14]").unwrap()).unwrap();
    assert!(doc.is_empty());
}

#[test]
fn refuses_ops_that_do_not_cover_the_document() {
    let mut doc = Document::with_text();
    doc.apply(&op(r#"["ab"]"#).unwrap()).unwrap();
    assert_eq!(
        doc.apply(&op(r#"["c"]"#).unwrap()).unwrap_err(),
        CannotApply::Length { covers: 0, has: 2 }
    );
    assert!(doc.apply(&op("[5]").unwrap()).is_err());
    assert_eq!(text(&doc), "ab");
    let mut lengths = Document::lengths_only();
    lengths.apply(&op(r#"["ab"]"#).unwrap()).unwrap();
    assert!(lengths.apply(&op("[5]").unwrap()).is_err());
    assert_eq!((lengths.len(), lengths.text()), (2, None));
}

#[test]
fn refuses_documents_over_the_limit() {
    let mut doc = Document::default();
    let at_limit = format!("[\"{}\"]", "a".repeat(MAX_DOCUMENT_CHARS));
    doc.apply(&op(&at_limit).unwrap()).unwrap();
    assert!(
        doc.apply(&op(&format!("[{MAX_DOCUMENT_CHARS},\"b\"]")).unwrap())
            .is_err()
    );
}

#[test]
fn builds_normalised_wire_ops() {
    let json = Builder::new()
        .retain(1)
        .delete(1)
        .insert("X")
        .retain(1)
        .finish();
    assert_eq!(json, serde_json::json!([1, "X", -1, 1]));
    let mut doc = Document::with_text();
    doc.apply(&op(r#"["abc"]"#).unwrap()).unwrap();
    let wire = json.to_string();
    doc.apply(&op(&wire).unwrap()).unwrap();
    assert_eq!((doc.len(), text(&doc)), (3, "aXc".to_string()));
}

#[test]
fn only_keeping_everything_changes_nothing() {
    assert!(op("[]").unwrap().changes_nothing());
    assert!(op("[12]").unwrap().changes_nothing());
    assert!(!op(r#"[1,"a"]"#).unwrap().changes_nothing());
    assert!(!op("[-1]").unwrap().changes_nothing());
}

#[test]
fn a_texts_hashed_start_lasts_until_an_edit_touches_it() {
    let line = "a line of text\n";
    let mut doc = Document::of_text(&line.repeat(1_000));
    let end = doc.len();
    let stop = end - UNSETTLED_CHARS;
    // Where it stopped (going on to 0 goes nowhere), and that it hashed the
    // text's start and nothing else.
    let hashed = |doc: &mut Document| doc.hashed_until(0).unwrap().chars();
    let hashed_start = |doc: &mut Document| {
        let to = doc.len();
        let text = doc.rope().unwrap().to_string();
        let start: String = text.chars().take(to - UNSETTLED_CHARS).collect();
        (
            doc.hashed_until(to).unwrap().fingerprint(),
            crate::digest::fingerprint(&start),
        )
    };
    assert_eq!(doc.hashed_until(end).unwrap().chars(), stop);
    // Marks, edits after it and an insert right where it stops keep it.
    for edit in [
        format!("[{end}]"),
        format!("[{end},\"more\\n\"]"),
        format!("[{stop},\"new\\n\",{}]", end + 5 - stop),
        format!("[{end},-4,\"two\\n\",5]"),
    ] {
        doc.apply(&op(&edit).unwrap()).unwrap();
        assert_eq!(hashed(&mut doc), stop, "{edit}");
    }
    let (kept, whole) = hashed_start(&mut doc);
    assert_eq!(kept, whole);
    // One before where it stopped drops it: it starts again from the start.
    let length = doc.len();
    doc.apply(&op(&format!("[8,\"!\",{}]", length - 8)).unwrap())
        .unwrap();
    assert_eq!(hashed(&mut doc), 0);
    let (kept, whole) = hashed_start(&mut doc);
    assert_eq!(kept, whole);
    // A hashing handed over that claims more than the text has is not taken.
    let mut beyond = HashedStart::default();
    beyond.extend(&Rope::from_str(&"x".repeat(100_000)), 100_000);
    let had = hashed(&mut doc);
    doc.set_hashed(beyond);
    assert_eq!(hashed(&mut doc), had);
}

#[test]
fn applies_crate_operations_to_a_rope() {
    let mut rope = Rope::from_str("h🎉llo");
    let operation = op(r#"[1,-1,"e",3,"!"]"#).unwrap().to_seq();
    apply_to_rope(&mut rope, &operation).unwrap();
    assert_eq!(rope.to_string(), "hello!");
    assert!(apply_to_rope(&mut rope, &operation).is_err());
    assert_eq!(rope.to_string(), "hello!");
}

#[test]
fn finds_literal_matches_left_to_right_without_overlap() {
    assert_eq!(find_literal("aaaa", "aa"), vec![(0, 2), (2, 2)]);
    assert_eq!(find_literal("🎉a🎉a", "a"), vec![(1, 1), (3, 1)]);
    assert!(find_literal("abc", "x").is_empty());
}
