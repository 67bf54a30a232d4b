//! One rule for JSON that decides anything: no object gives a key twice.
//!
//! `{"id":"a","id":"b"}` is read one way by one parser and the other way by
//! the next (most keep the last, some the first, a proxy may route on
//! either), so a message that repeats a key anywhere — in its envelope, a
//! tool's arguments, an edit, `_meta`, an answer — does not say one thing,
//! and is not acted on. [`repeated_key`] finds the first repetition, and
//! where it is, for the error that says so.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// How deep the path in an error goes; deeper levels are elided.
const MAX_PATH_DEPTH: usize = 8;

/// A key some object of a message gives twice, and the object's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeated {
    pub key: String,
    /// Where the object is: `params.arguments`, `params.arguments.edits[2]`;
    /// empty for the message itself.
    pub at: String,
}

impl Repeated {
    /// Whether the repetition concerns the member at `path`
    /// (`params.inputResponses`): it is that member given twice, or lies
    /// within it.
    pub fn concerns(&self, path: &str) -> bool {
        let repeated_member = match self.at.as_str() {
            "" => self.key == path,
            at => {
                path.strip_prefix(at)
                    .and_then(|rest| rest.strip_prefix('.'))
                    == Some(&self.key)
            }
        };
        repeated_member
            || self.at == path
            || self
                .at
                .strip_prefix(path)
                .is_some_and(|rest| rest.starts_with(['.', '[']))
    }
}

impl fmt::Display for Repeated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key: String = self.key.escape_debug().take(64).collect();
        if self.at.is_empty() {
            write!(f, "the message gives \"{key}\" twice")
        } else {
            write!(f, "{} gives \"{key}\" twice", self.at)
        }
    }
}

/// The first key an object in `text` gives twice; None when there is none
/// (or `text` is not JSON, which its parser then reports).
pub fn repeated_key(text: &str) -> Option<Repeated> {
    // serde_json's own depth limit holds: deeper JSON is refused as unreadable anyway.
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let mut found = None;
    let _ = Walk {
        path: &mut Vec::new(),
        found: &mut found,
    }
    .deserialize(&mut deserializer);
    found
}

/// One step of the path to where the walk is.
enum Step {
    Key(String),
    Index(usize),
}

fn render(path: &[Step]) -> String {
    let mut at = String::new();
    for (depth, step) in path.iter().enumerate() {
        if depth == MAX_PATH_DEPTH {
            at.push('…');
            break;
        }
        match step {
            Step::Key(key) => {
                if !at.is_empty() {
                    at.push('.');
                }
                at.extend(key.escape_debug().take(64));
            }
            Step::Index(index) => at.push_str(&format!("[{index}]")),
        }
    }
    at
}

struct Walk<'a> {
    path: &'a mut Vec<Step>,
    found: &'a mut Option<Repeated>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys: Vec<String> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if keys.contains(&key) {
                *self.found = Some(Repeated {
                    key,
                    at: render(self.path),
                });
                // Found: the walk stops here.
                return Err(de::Error::custom("a key is given twice"));
            }
            self.path.push(Step::Key(key.clone()));
            let walked = map.next_value_seed(Walk {
                path: self.path,
                found: self.found,
            });
            self.path.pop();
            walked?;
            keys.push(key);
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        loop {
            self.path.push(Step::Index(index));
            let walked = seq.next_element_seed(Walk {
                path: self.path,
                found: self.found,
            });
            self.path.pop();
            if walked?.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// Rewrites `\uD800`–`\uDFFF` escapes that do not form a pair as `\uFFFD`;
/// None when there were none (the message is broken some other way).
pub fn replace_lone_surrogates(message: &str) -> Option<String> {
    let surrogate_at = |at: usize| -> Option<u16> {
        let hex = message.get(at + 2..at + 6)?;
        let unit = u16::from_str_radix(hex, 16).ok()?;
        (message.get(at..at + 2) == Some("\\u") && (0xD800..=0xDFFF).contains(&unit))
            .then_some(unit)
    };
    let mut repaired = String::with_capacity(message.len());
    let mut replaced = false;
    let mut rest = message.char_indices().peekable();
    while let Some((at, c)) = rest.next() {
        if c != '\\' {
            repaired.push(c);
            continue;
        }
        match surrogate_at(at) {
            Some(0xD800..=0xDBFF) if surrogate_at(at + 6).is_some_and(|low| low >= 0xDC00) => {
                repaired.push_str(&message[at..at + 12]);
                for _ in 0..11 {
                    rest.next();
                }
            }
            Some(_) => {
                repaired.push_str("\\uFFFD");
                replaced = true;
                for _ in 0..5 {
                    rest.next();
                }
            }
            None => {
                repaired.push('\\');
                if let Some((_, escaped)) = rest.next() {
                    repaired.push(escaped);
                }
            }
        }
    }
    replaced.then_some(repaired)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_characters_and_pairs_stay() {
        assert_eq!(replace_lone_surrogates(r#"{"a":"\ud83c\udf89"}"#), None);
        assert_eq!(
            replace_lone_surrogates(r#"{"a":"x\ud800y\\ud800\udc00z\udfff"}"#).as_deref(),
            Some(r#"{"a":"x\uFFFDy\\ud800\uFFFDz\uFFFD"}"#)
        );
    }

    fn at(text: &str) -> Option<(String, String)> {
        repeated_key(text).map(|r| (r.key, r.at))
    }

    #[test]
    fn the_first_repeated_key_is_found_with_its_place() {
        assert_eq!(at(r#"{"a":1,"b":[{"c":2}]}"#), None);
        assert_eq!(at(r#"{"id":1,"id":2}"#), Some(("id".into(), String::new())));
        assert_eq!(
            at(r#"{"params":{"name":"x","arguments":{"id":"a","id":"b"}}}"#),
            Some(("id".into(), "params.arguments".into()))
        );
        assert_eq!(
            at(r#"{"params":{"arguments":{"edits":[{"a":1},{"old_text":"x","old_text":"y"}]}}}"#),
            Some(("old_text".into(), "params.arguments.edits[1]".into()))
        );
        // The same key in sibling objects is no repetition.
        assert_eq!(at(r#"[{"a":1},{"a":2}]"#), None);
        // Not JSON: nothing to say here.
        assert_eq!(at("{"), None);
    }

    #[test]
    fn a_place_tells_what_it_lies_under() {
        let repeated =
            repeated_key(r#"{"params":{"inputResponses":{"confirm":{"action":1,"action":2}}}}"#)
                .unwrap();
        assert!(repeated.concerns("params.inputResponses"));
        assert!(!repeated.concerns("params.input"));
        let twice =
            repeated_key(r#"{"params":{"inputResponses":{},"inputResponses":{}}}"#).unwrap();
        assert!(twice.concerns("params.inputResponses"));
        assert!(
            !repeated_key(r#"{"params":{"a":1,"a":2}}"#)
                .unwrap()
                .concerns("params.inputResponses")
        );
        assert_eq!(
            repeated.to_string(),
            "params.inputResponses.confirm gives \"action\" twice"
        );
    }

    #[test]
    fn deep_nesting_is_walked_and_the_path_kept_short() {
        let deep = format!("{}{{\"k\":1,\"k\":2}}{}", "[".repeat(100), "]".repeat(100));
        let repeated = repeated_key(&deep).unwrap();
        assert!(
            repeated.at.ends_with('…') && repeated.at.len() < 64,
            "{}",
            repeated.at
        );
    }
}
