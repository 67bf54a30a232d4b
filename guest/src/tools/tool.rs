//! What a tool is: one descriptor holding everything a client (or the docs)
//! learns about it before calling it, and the handler that runs it.
//!
//! Each tool is one file in `tools/` that defines a `TOOL` of this type;
//! [`super::catalogue::ALL`] lists them.

use std::cell::OnceCell;
use std::fmt;

use schemars::generate::SchemaSettings;
use schemars::{Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::args::{self, ConfirmToken};
use super::schema::{self, Fields};
use crate::guard::{Guard, Pad, Proposal, Verdict};
use crate::result::{ToolError, ToolResult};
use crate::rustpad::stats;
use crate::rustpad::url::RustpadUrl;

/// The four annotations every tool declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Annotations {
    /// A tool that only reads (and so may be called again freely).
    pub const READ: Annotations = Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
}

/// One tool.
pub struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    /// One line for the docs' tables (README, docs/tools.md).
    pub summary: &'static str,
    pub description: fn() -> String,
    pub annotations: Annotations,
    /// It is in the curated preset `essential`: what most sessions need,
    /// and no more.
    pub essential: bool,
    /// It may ask a person before it acts (👤 in the docs): it takes
    /// `confirm_token`, which its input schema gets from here.
    pub asks_first: bool,
    /// It waits for people, holding a socket for up to a minute: it runs in
    /// one of the host's places for waits, so that it never takes a place a
    /// write could use.
    pub waits: bool,
    /// Its own arguments, in the order they are checked: the schema its
    /// `Arguments` struct derives (`Arguments::json_schema`).
    pub input: fn(&mut SchemaGenerator) -> Schema,
    /// What its `structuredContent` holds.
    pub output: fn() -> Fields,
    pub run: fn(&Call) -> ToolResult,
}

impl Tool {
    /// RUSTPAD_READ_ONLY offers exactly the tools that say they only read.
    pub fn is_read(&self) -> bool {
        self.annotations.read_only
    }

    /// The input schema `tools/list` shows: the properties and required
    /// names its arguments struct derives, in an object that takes no others.
    pub fn input_schema(&self) -> Value {
        let mut generator = SchemaSettings::draft2020_12()
            .with(|settings| {
                settings.meta_schema = None;
                settings.inline_subschemas = true;
            })
            .into_generator();
        let derived = Value::from((self.input)(&mut generator));
        let mut properties = derived.get("properties").cloned().unwrap_or(json!({}));
        let required = derived.get("required").cloned().unwrap_or(json!([]));
        if let Some(properties) = properties.as_object_mut() {
            for (name, property) in properties.iter_mut() {
                if !required
                    .as_array()
                    .is_some_and(|r| r.contains(&json!(name)))
                {
                    never_null(property);
                }
            }
        }
        if self.asks_first {
            properties["confirm_token"] = generator.subschema_for::<ConfirmToken>().into();
        }
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }

    pub fn output_schema(&self) -> Value {
        let Fields {
            properties,
            required,
        } = (self.output)();
        schema::object(properties, &required)
    }

    /// The entry `tools/list` shows for this tool.
    pub fn definition(&self) -> Value {
        let hints = self.annotations;
        json!({
            "name": self.name,
            "title": self.title,
            "description": (self.description)(),
            "inputSchema": self.input_schema(),
            "outputSchema": self.output_schema(),
            "annotations": {
                "title": self.title,
                "readOnlyHint": hints.read_only,
                "destructiveHint": hints.destructive,
                "idempotentHint": hints.idempotent,
                "openWorldHint": hints.open_world,
            },
        })
    }

    /// The argument names its schema lists, in order, and those required.
    pub fn argument_names(&self) -> (Vec<String>, Vec<String>) {
        let schema = self.input_schema();
        let known = schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let required = schema["required"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        (known, required)
    }
}

/// An optional argument is left out when it is not wanted, never sent as
/// `null`: schemars derives an `Option` field as nullable, which is taken back
/// here so that the schema says what the tools ask for.
fn never_null(property: &mut Value) {
    if let Some(Value::Array(types)) = property.get_mut("type") {
        types.retain(|kind| kind != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            property["type"] = only;
        }
    }
    let nullable = property
        .get("anyOf")
        .and_then(Value::as_array)
        .filter(|any| any.len() == 2 && any[1] == json!({ "type": "null" }))
        .map(|any| any[0].clone());
    if let Some(schema) = nullable {
        let description = property.get("description").cloned();
        *property = schema;
        if let Some(description) = description {
            property["description"] = description;
        }
    }
}

/// Tools are told apart by name: each is a `static`, and the catalogue
/// lists each once.
impl PartialEq for Tool {
    fn eq(&self, other: &Tool) -> bool {
        self.name == other.name
    }
}

impl Eq for Tool {}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Tool({})", self.name)
    }
}

/// What a handler gets: where Rustpad is, its arguments (already checked
/// for names), and the guard for what needs a person.
pub struct Call<'a> {
    pub url: &'a RustpadUrl,
    pub(super) arguments: &'a Map<String, Value>,
    pub(super) guard: &'a Guard<'a>,
    /// When the Rustpad instance started, once read.
    pub(super) started: OnceCell<u64>,
}

impl<'a> Call<'a> {
    /// The arguments as the tool's own struct (see [`args::read`]).
    pub fn arguments<T: Deserialize<'a>>(&self) -> Result<T, ToolError> {
        args::read(self.arguments)
    }

    /// The revision this request's answer or token names (see
    /// [`Guard::asked_at`]).
    pub fn asked_at(&self) -> Option<u64> {
        self.guard.asked_at()
    }

    /// Whether this request brought an approval to use: a person's answer
    /// with its question's state, or a confirmation token (valid or not).
    /// A write that may use one takes its place among the pad's writes
    /// first (`session::take_place`).
    pub fn carries_approval(&self) -> bool {
        self.guard.answers.state.is_some() || self.guard.answers.token.is_some()
    }

    /// When the Rustpad instance started (`/api/stats`), read once per call.
    /// Read after the call's session joined the pad: if Rustpad restarted
    /// after the read, that session breaks and nothing is written on it.
    pub fn rustpad_started(&self) -> Result<u64, ToolError> {
        if let Some(started) = self.started.get() {
            return Ok(*started);
        }
        let started = stats::start_time(self.url)?;
        Ok(*self.started.get_or_init(|| started))
    }

    /// Goes on only if the guard says the proposal may go ahead; a question
    /// or a refusal ends the call.
    pub fn approve(&self, proposal: &Proposal, pad: &Pad) -> Result<(), ToolError> {
        match self.guard.approve(proposal, pad) {
            Verdict::Go => Ok(()),
            Verdict::Ask(question) => Err(ToolError::NeedsInput(Box::new(question))),
            Verdict::Refuse(reason) => Err(ToolError::new(reason)),
        }
    }
}
