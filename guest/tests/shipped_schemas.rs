//! Every tool's input and output schema, as `tools/list` shows them, compared
//! field by field with those shipped before (`input-schemas.json`, captured
//! from the catalogue before the input schemas were derived from the argument
//! types, and `output-schemas.json`): what a client may send and what it gets
//! back change only on purpose, and such a change is listed in CHANGELOG.md.
//! The client suites read their expectations from the same files.
//!
//! After a deliberate change, `RUSTPAD_MCP_BLESS=1 cargo test -p guest --test
//! shipped_schemas` rewrites them; their diff is the change to review.

use std::path::PathBuf;

use serde_json::{Map, Value};

use guest::tools::{ALL, Tool};

fn shipped_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/{name}"))
}

fn current(schema: fn(&Tool) -> Value) -> Map<String, Value> {
    ALL.iter()
        .map(|tool| (tool.name.to_string(), schema(tool)))
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

/// Compares the schemas `schema` gives with the file `name`, or rewrites it.
fn compare(name: &str, schema: fn(&Tool) -> Value) {
    let now = current(schema);
    if std::env::var_os("RUSTPAD_MCP_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&now).unwrap() + "\n";
        std::fs::write(shipped_file(name), text).unwrap();
        return;
    }
    let text = std::fs::read_to_string(shipped_file(name)).unwrap();
    let before: Map<String, Value> = serde_json::from_str(&text).unwrap();
    let mut found = Vec::new();
    differences("", &Value::Object(before), &Value::Object(now), &mut found);
    assert!(
        found.is_empty(),
        "the schemas differ from those shipped before ({name}):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_input_schema_is_the_one_shipped_before() {
    compare("input-schemas.json", Tool::input_schema);
}

#[test]
fn every_output_schema_is_the_one_shipped_before() {
    compare("output-schemas.json", Tool::output_schema);
}

/// The output schemas are derived from the result types and shaped to be
/// the ones shipped before to the byte, the order of each schema's keys
/// included: `tools/list` for a client without extensions must not change
/// (tests/python/test_pad_view.py pins its sha256).
#[test]
fn every_output_schema_is_the_one_shipped_before_to_the_byte() {
    if std::env::var_os("RUSTPAD_MCP_BLESS").is_some() {
        return;
    }
    let shipped = std::fs::read_to_string(shipped_file("output-schemas.json")).unwrap();
    let now = serde_json::to_string_pretty(&current(Tool::output_schema)).unwrap() + "\n";
    assert!(
        now == shipped,
        "an output schema's keys are in another order than shipped (see `tools::schema`)"
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
