//! A person's answer, read strictly. JSON that decides whether an edit
//! happens must mean one thing: an object that gives a key twice
//! (`{"action":"decline","action":"accept"}`) is read one way by one parser
//! and the other way by the next, so it is taken as an answer nobody
//! understood, and nothing changes.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// The answer in `text`, or `null` (not understood) when it is not JSON or
/// gives some key twice.
pub fn read(text: &str) -> Value {
    if serde_json::from_str::<Unambiguous>(text).is_err() {
        return Value::Null;
    }
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// Whether the `inputResponses` of a request `message` are ambiguous: given
/// twice, or giving some key twice inside.
pub fn input_responses_are_ambiguous(message: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        params: Option<&'a RawValue>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(rename = "inputResponses", borrow)]
        input_responses: Option<&'a RawValue>,
    }
    // A derived struct refuses a member given twice: then the message is
    // ambiguous wherever its answer is.
    let params = match serde_json::from_str::<Message>(message) {
        Ok(Message {
            params: Some(params),
        }) => params,
        Ok(_) => return false,
        Err(_) => return true,
    };
    if !params.get().trim_start().starts_with('{') {
        return false;
    }
    match serde_json::from_str::<Params>(params.get()) {
        Ok(Params {
            input_responses: Some(responses),
        }) => serde_json::from_str::<Unambiguous>(responses.get()).is_err(),
        Ok(_) => false,
        Err(_) => true,
    }
}

/// Any JSON value in which no object gives a key twice.
struct Unambiguous;

impl<'de> Deserialize<'de> for Unambiguous {
    fn deserialize<D: Deserializer<'de>>(value: D) -> Result<Unambiguous, D::Error> {
        value.deserialize_any(Unambiguous)
    }
}

impl<'de> Visitor<'de> for Unambiguous {
    type Value = Unambiguous;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON in which no object gives a key twice")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unambiguous, A::Error> {
        let mut keys: Vec<String> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if keys.contains(&key) {
                return Err(de::Error::custom("a key is given twice"));
            }
            keys.push(key);
            map.next_value::<Unambiguous>()?;
        }
        Ok(Unambiguous)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Unambiguous, A::Error> {
        while seq.next_element::<Unambiguous>()?.is_some() {}
        Ok(Unambiguous)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Unambiguous, E> {
        Ok(Unambiguous)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Unambiguous, E> {
        Ok(Unambiguous)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Unambiguous, E> {
        Ok(Unambiguous)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Unambiguous, E> {
        Ok(Unambiguous)
    }
    fn visit_str<E>(self, _: &str) -> Result<Unambiguous, E> {
        Ok(Unambiguous)
    }
    fn visit_unit<E>(self) -> Result<Unambiguous, E> {
        Ok(Unambiguous)
    }
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

    #[test]
    fn ambiguous_input_responses_are_noticed() {
        let call = |responses: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{{"a":1,"a":2}},"inputResponses":{responses}}}}}"#
            )
        };
        assert!(!input_responses_are_ambiguous(&call(
            r#"{"confirm":{"action":"accept","content":{"confirm":true}}}"#
        )));
        assert!(input_responses_are_ambiguous(&call(
            r#"{"confirm":{"action":"decline","action":"accept","content":{"confirm":true}}}"#
        )));
        assert!(input_responses_are_ambiguous(&call(
            r#"{"confirm":{"action":"decline"},"confirm":{"action":"accept"}}"#
        )));
        let twice = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"inputResponses":{},"inputResponses":{"confirm":{"action":"accept"}}}}"#;
        assert!(input_responses_are_ambiguous(twice));
        assert!(!input_responses_are_ambiguous(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
        ));
    }
}
