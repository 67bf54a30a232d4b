//! Tool arguments: checked against the catalogue's input schema before any
//! connection is made, so a bad call costs nothing and says what to fix.

use serde_json::{Map, Value};

use super::catalogue::ToolName;
use super::locate::{EditSpec, MAX_EDITS};
use crate::result::ToolError;
use crate::rustpad::base::Base;
use crate::text::{
    MAX_DOCUMENT_CHARS, MAX_ID_CHARS, MAX_LANGUAGE_CHARS, MAX_TOKEN_CHARS, char_len, clean_line,
};

/// A tool's arguments, with unknown and missing names already refused.
pub struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    pub fn check(tool: ToolName, map: &'a Map<String, Value>) -> Result<Args<'a>, ToolError> {
        let schema = tool.input_schema();
        let known: Vec<&str> = schema["properties"]
            .as_object()
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if let Some(unknown) = map.keys().find(|k| !known.contains(&k.as_str())) {
            let takes = if known.is_empty() {
                "no arguments".to_string()
            } else {
                known.join(", ")
            };
            return Err(ToolError::new(format!(
                "unknown argument \"{}\": {} takes {takes}",
                clean_line(unknown, 64),
                tool.name()
            )));
        }
        let required = schema["required"].as_array().cloned().unwrap_or_default();
        for name in required.iter().filter_map(Value::as_str) {
            if map.get(name).is_none_or(Value::is_null) {
                return Err(ToolError::new(format!(
                    "missing required argument \"{name}\""
                )));
            }
        }
        Ok(Args { map })
    }

    fn string(&self, name: &str) -> Result<Option<&'a str>, ToolError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(ToolError::new(format!(
                "argument \"{name}\" must be a string"
            ))),
        }
    }

    fn required(&self, name: &str) -> Result<&'a str, ToolError> {
        self.string(name)?
            .ok_or_else(|| ToolError::new(format!("missing required argument \"{name}\"")))
    }

    /// A pad id: 1–100 of `A-Z a-z 0-9 . _ -`, and not `.` or `..`.
    pub fn id(&self) -> Result<&'a str, ToolError> {
        check_id(self.required("id")?).map_err(ToolError::new)
    }

    pub fn optional_id(&self) -> Result<Option<&'a str>, ToolError> {
        self.string("id")?
            .map(|id| check_id(id).map_err(ToolError::new))
            .transpose()
    }

    /// Text argument of at most Rustpad's document limit, at least `min` characters.
    pub fn text(&self, name: &str, min: usize) -> Result<&'a str, ToolError> {
        let value = self.required(name)?;
        check_text(name, value, min)?;
        Ok(value)
    }

    pub fn optional_text(&self, name: &str) -> Result<Option<&'a str>, ToolError> {
        let value = self.string(name)?;
        if let Some(value) = value {
            check_text(name, value, 0)?;
        }
        Ok(value)
    }

    pub fn language(&self) -> Result<Option<&'a str>, ToolError> {
        let Some(language) = self.string("language")? else {
            return Ok(None);
        };
        let valid = (1..=MAX_LANGUAGE_CHARS).contains(&language.len())
            && language
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+#.-".contains(c));
        if !valid {
            return Err(ToolError::new(format!(
                "invalid language: a Monaco language id is 1–{MAX_LANGUAGE_CHARS} letters, digits and + # . - (e.g. \"markdown\", \"rust\", \"plaintext\")"
            )));
        }
        Ok(Some(language))
    }

    pub fn flag(&self, name: &str) -> Result<bool, ToolError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(_) => Err(ToolError::new(format!(
                "argument \"{name}\" must be true or false"
            ))),
        }
    }

    /// A 1-based line number, at most one past the longest pad's last line.
    pub fn line_number(&self, name: &str) -> Result<Option<usize>, ToolError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => check_line(value)
                .map(Some)
                .map_err(|problem| ToolError::new(format!("argument \"{name}\" {problem}"))),
        }
    }

    /// The base a model read, as `get_document` and `edit_document` give it.
    pub fn base(&self) -> Result<Option<Base>, ToolError> {
        let Some(text) = self.string("base")? else {
            return Ok(None);
        };
        Base::parse(text).map(Some).ok_or_else(|| {
            ToolError::new(
                "argument \"base\" is not a base this server gives out (r<revision>.<16 hex digits>): pass the base from a get_document window or an edit_document result unchanged, or leave it out to edit the pad as it is now",
            )
        })
    }

    /// `edit_document`'s edits: 1–100 objects of old_text, new_text and an optional line.
    pub fn edits(&self) -> Result<Vec<EditSpec<'a>>, ToolError> {
        let Some(Value::Array(items)) = self.map.get("edits") else {
            return Err(ToolError::new(
                "argument \"edits\" must be an array of {old_text, new_text, line?} objects",
            ));
        };
        if items.is_empty() || items.len() > MAX_EDITS {
            return Err(ToolError::new(format!(
                "argument \"edits\" must hold 1–{MAX_EDITS} edits; it holds {}",
                items.len()
            )));
        }
        items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                check_edit(item)
                    .map_err(|problem| ToolError::new(format!("edit {}: {problem}", index + 1)))
            })
            .collect()
    }

    pub fn confirm_token(&self) -> Result<Option<&'a str>, ToolError> {
        let token = self.string("confirm_token")?;
        if let Some(token) = token
            && (token.is_empty() || char_len(token) > MAX_TOKEN_CHARS)
        {
            return Err(ToolError::new(format!(
                "confirm_token must be 1–{MAX_TOKEN_CHARS} characters: pass exactly the token a previous call returned, or omit it"
            )));
        }
        Ok(token)
    }
}

fn check_id(id: &str) -> Result<&str, String> {
    if id.is_empty() || id.len() > MAX_ID_CHARS {
        return Err(format!(
            "invalid pad id: it must be 1–{MAX_ID_CHARS} characters long"
        ));
    }
    if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    {
        return Err(
            "invalid pad id: only letters, digits, dot, underscore and hyphen are allowed".into(),
        );
    }
    if id == "." || id == ".." {
        return Err("invalid pad id: \".\" and \"..\" are not pad ids".into());
    }
    Ok(id)
}

/// The most lines a pad can have: one more than its characters.
pub const MAX_LINE: usize = MAX_DOCUMENT_CHARS + 1;

fn check_line(value: &Value) -> Result<usize, String> {
    match value.as_u64() {
        Some(line) if (1..=MAX_LINE as u64).contains(&line) => Ok(line as usize),
        _ => Err(format!("must be a whole line number from 1 to {MAX_LINE}")),
    }
}

fn check_edit(item: &Value) -> Result<EditSpec<'_>, String> {
    let Value::Object(fields) = item else {
        return Err("must be an object with old_text, new_text and optionally line".into());
    };
    if let Some(unknown) = fields
        .keys()
        .find(|k| !["old_text", "new_text", "line"].contains(&k.as_str()))
    {
        return Err(format!(
            "unknown field \"{}\": an edit takes old_text, new_text and line",
            clean_line(unknown, 64)
        ));
    }
    let text = |name: &str| -> Result<&str, String> {
        match fields.get(name) {
            Some(Value::String(text)) if char_len(text) <= MAX_DOCUMENT_CHARS => Ok(text),
            Some(Value::String(text)) => Err(format!(
                "{name} is {} characters long, more than Rustpad's limit of {MAX_DOCUMENT_CHARS} for a whole pad",
                char_len(text)
            )),
            None | Some(Value::Null) => Err(format!(
                "missing {name} (it may be empty, but it must be there)"
            )),
            Some(_) => Err(format!("{name} must be a string")),
        }
    };
    let line = match fields.get("line") {
        None | Some(Value::Null) => None,
        Some(value) => Some(check_line(value).map_err(|problem| format!("line {problem}"))?),
    };
    Ok(EditSpec {
        old_text: text("old_text")?,
        new_text: text("new_text")?,
        line,
    })
}

fn check_text(name: &str, value: &str, min: usize) -> Result<(), ToolError> {
    let length = char_len(value);
    if length < min {
        return Err(ToolError::new(format!(
            "argument \"{name}\" must not be empty"
        )));
    }
    if length > MAX_DOCUMENT_CHARS {
        return Err(ToolError::new(format!(
            "argument \"{name}\" is {length} characters long, more than Rustpad's limit of {MAX_DOCUMENT_CHARS} for a whole pad"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn refuses_unknown_and_missing_arguments() {
        let map = args(json!({"id": "a", "dispatcher": 1}));
        let err = Args::check(ToolName::GetDocument, &map).err().unwrap();
        assert!(
            err.message().contains("\"dispatcher\""),
            "{}",
            err.message()
        );
        let map = args(json!({}));
        assert!(Args::check(ToolName::GetDocument, &map).is_err());
        let map = args(json!({"x": 1}));
        assert!(
            Args::check(ToolName::GetStats, &map)
                .err()
                .unwrap()
                .message()
                .contains("no arguments")
        );
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
    fn wrong_types_are_input_errors() {
        let map = args(json!({"id": 5}));
        let checked = Args::check(ToolName::GetDocument, &map).unwrap();
        assert!(
            checked
                .id()
                .unwrap_err()
                .message()
                .contains("must be a string")
        );
    }
}
