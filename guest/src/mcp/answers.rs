//! A person's answer, read strictly. JSON that decides whether an edit
//! happens must mean one thing: an object that gives a key twice
//! (`{"action":"decline","action":"accept"}`) is read one way by one parser
//! and the other way by the next, so it is taken as an answer nobody
//! understood, and nothing changes.

use serde_json::Value;

/// The answer in `text`, or `null` (not understood) when it is not JSON or
/// gives some key twice.
pub fn read(text: &str) -> Value {
    if rustpad_mcp_rules::json::repeated_key(text).is_some() {
        return Value::Null;
    }
    serde_json::from_str(text).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_key_given_twice_is_not_understood() {
        assert_eq!(
            read(r#"{"action":"accept","content":{"confirm":true}}"#),
            json!({"action":"accept","content":{"confirm":true}})
        );
        assert_eq!(
            read(r#"{"action":"decline","content":{},"action":"accept"}"#),
            Value::Null
        );
        assert_eq!(
            read(r#"{"action":"accept","content":{"confirm":false,"confirm":true}}"#),
            Value::Null
        );
        assert_eq!(read(""), Value::Null);
        assert_eq!(read("null"), Value::Null);
        assert_eq!(read(r#"[{"a":1},{"a":2}]"#), json!([{"a":1},{"a":2}]));
    }
}
