//! Every tool's input schema, as `tools/list` shows it, compared field by
//! field with the one shipped before (`input-schemas.json`, captured from the
//! catalogue before the schemas were derived from the argument types): what a
//! client may send changes only on purpose, and such a change is listed in
//! CHANGELOG.md.
//!
//! After a deliberate change, `RUSTPAD_MCP_BLESS=1 cargo test -p guest --test
//! input_schemas` rewrites the file; its diff is the change to review.

use std::path::PathBuf;

use serde_json::{Map, Value};

use guest::tools::ALL;

fn shipped_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/input-schemas.json")
}

fn current() -> Map<String, Value> {
    ALL.iter()
        .map(|tool| (tool.name.to_string(), tool.input_schema()))
        .collect()
}

/// Where `now` differs from `before`, one line per difference, each naming
/// the path to it (`edit_document.properties.edits.items`).
fn differences(at: &str, before: &Value, now: &Value, found: &mut Vec<String>) {
    match (before, now) {
        (Value::Object(before), Value::Object(now)) => {
            let before_keys: Vec<&String> = before.keys().collect();
            let now_keys: Vec<&String> = now.keys().collect();
            for (key, value) in before {
                match now.get(key) {
                    Some(other) => differences(&format!("{at}.{key}"), value, other, found),
                    None => found.push(format!("{at}.{key}: gone (was {value})")),
                }
            }
            for (key, value) in now {
                if !before.contains_key(key) {
                    found.push(format!("{at}.{key}: new ({value})"));
                }
            }
            // Clients show a tool's arguments in the order given: that is
            // part of it (the order of keys within one argument's schema is not).
            if !at.ends_with(".properties") {
                return;
            }
            let common = |keys: &[&String], other: &Map<String, Value>| -> Vec<String> {
                keys.iter()
                    .filter(|k| other.contains_key(k.as_str()))
                    .map(|k| k.to_string())
                    .collect()
            };
            if common(&before_keys, now) != common(&now_keys, before) {
                found.push(format!(
                    "{at}: the keys' order changed from {before_keys:?} to {now_keys:?}"
                ));
            }
        }
        (before, now) if before != now => found.push(format!("{at}: was {before}, now {now}")),
        _ => {}
    }
}

#[test]
fn every_input_schema_is_the_one_shipped_before() {
    let now = current();
    if std::env::var_os("RUSTPAD_MCP_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&now).unwrap() + "\n";
        std::fs::write(shipped_file(), text).unwrap();
        return;
    }
    let text = std::fs::read_to_string(shipped_file()).unwrap();
    let before: Map<String, Value> = serde_json::from_str(&text).unwrap();
    let mut found = Vec::new();
    differences("", &Value::Object(before), &Value::Object(now), &mut found);
    assert!(
        found.is_empty(),
        "the input schemas differ from those shipped before:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_changed_schema_is_caught_field_by_field() {
    let before = serde_json::json!({
        "t": { "properties": { "a": { "type": "string", "maxLength": 3 }, "b": {} }, "required": ["a"] }
    });
    let now = serde_json::json!({
        "t": { "properties": { "b": {}, "a": { "type": "string", "maxLength": 4 } }, "required": ["a"], "x": 1 }
    });
    let mut found = Vec::new();
    differences("", &before, &now, &mut found);
    assert_eq!(
        found,
        [
            ".t.properties.a.maxLength: was 3, now 4",
            ".t.properties: the keys' order changed from [\"a\", \"b\"] to [\"b\", \"a\"]",
            ".t.x: new (1)",
        ]
    );
}
