//! What a tool is: one descriptor holding everything a client (or the docs)
//! learns about it before calling it, and the handler that runs it.
//!
//! Each tool is one file in `tools/` that defines a `TOOL` of this type;
//! [`super::catalogue::ALL`] lists them.

use std::cell::Cell;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::args::{self, ConfirmToken};
use super::outcome::{ToolError, ToolResult};
use super::schema::{self, Derive};
use crate::guard::{Guard, Pad, Proposal, Verdict};
use crate::rustpad::stats;
use crate::rustpad::url::RustpadUrl;

/// The four hints MCP and ACT show for a tool, which its [`Kind`] gives it.
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
    /// A write that only adds, and adds again when called again (an append).
    pub const ADDITIVE: Annotations = Annotations {
        read_only: false,
        idempotent: false,
        ..Annotations::READ
    };
    /// A write that only adds or sets, and that the same call again leaves
    /// as it is (a new pad, a language).
    pub const ADDITIVE_IDEMPOTENT: Annotations = Annotations {
        idempotent: true,
        ..Annotations::ADDITIVE
    };
    /// A write that may remove what is there, and removes again when called
    /// again (edits, replacements, reverts).
    pub const DESTRUCTIVE: Annotations = Annotations {
        destructive: true,
        ..Annotations::ADDITIVE
    };
    /// A write that may remove what is there, and that the same call again
    /// leaves as it is (a whole new content).
    pub const DESTRUCTIVE_IDEMPOTENT: Annotations = Annotations {
        idempotent: true,
        ..Annotations::DESTRUCTIVE
    };
}

/// What a tool does to a pad: its annotations, whether it asks a person
/// first and where in the host it runs all follow from this one value, so
/// that no tool can say it removes text without asking, or asks while it
/// only reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// It only reads (and so may be called again freely).
    Read,
    /// It only reads, waiting for people, holding a socket for up to a
    /// minute: it runs in one of the host's places for waits, so that it
    /// never takes a place a write could use.
    Wait,
    /// It adds to a pad or sets what removes nothing, and never asks.
    /// Idempotent: the same call again leaves the pad as it is (a new pad,
    /// a language), where an append adds again.
    Add { idempotent: bool },
    /// It may remove what is there, so it may ask a person before it acts
    /// (👤 in the docs): it takes `confirm_token`, which its input schema
    /// gets from here. Idempotent: the same call again leaves the pad as it
    /// is (a whole new content), where an edit or a revert removes again.
    Remove { idempotent: bool },
}

impl Kind {
    /// The four hints `tools/list` and ACT show.
    pub const fn annotations(self) -> Annotations {
        match self {
            Kind::Read | Kind::Wait => Annotations::READ,
            Kind::Add { idempotent: false } => Annotations::ADDITIVE,
            Kind::Add { idempotent: true } => Annotations::ADDITIVE_IDEMPOTENT,
            Kind::Remove { idempotent: false } => Annotations::DESTRUCTIVE,
            Kind::Remove { idempotent: true } => Annotations::DESTRUCTIVE_IDEMPOTENT,
        }
    }
}

/// A tool's description: most are fixed text; some are built from figures
/// other modules own (the guard's removal rule, a wait's limits, the
/// sentences several descriptions share), so that none retypes them.
#[derive(Clone, Copy)]
pub enum Description {
    Fixed(&'static str),
    Built(fn() -> String),
}

/// The types a tool's call is read into and its result is made of: its
/// input schema is derived from the one, its outputSchema from the other.
#[derive(Clone, Copy)]
pub struct Schemas {
    /// Its own arguments, in the order they are checked (`confirm_token`
    /// is added after them for a tool that asks first).
    input: Derive,
    /// What its `structuredContent` holds (see [`super::outcome`]).
    output: Derive,
}

impl Schemas {
    pub const fn of<Arguments: JsonSchema, Output: JsonSchema>() -> Schemas {
        Schemas {
            input: Arguments::json_schema,
            output: Output::json_schema,
        }
    }
}

/// One tool.
pub struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    /// One line for the docs' tables (README, docs/tools.md).
    pub summary: &'static str,
    pub description: Description,
    pub kind: Kind,
    /// It is in the curated preset `essential`: what most sessions need,
    /// and no more.
    pub essential: bool,
    pub schemas: Schemas,
    pub run: fn(&Call) -> ToolResult,
}

impl Tool {
    /// RUSTPAD_READ_ONLY offers exactly the tools that say they only read.
    pub fn is_read(&self) -> bool {
        self.annotations().read_only
    }

    pub fn annotations(&self) -> Annotations {
        self.kind.annotations()
    }

    /// It may ask a person before it acts: exactly the tools that may
    /// remove what is there.
    pub fn asks_first(&self) -> bool {
        matches!(self.kind, Kind::Remove { .. })
    }

    /// It runs in one of the host's places for waits.
    pub fn waits(&self) -> bool {
        self.kind == Kind::Wait
    }

    pub fn description(&self) -> String {
        match self.description {
            Description::Fixed(text) => text.to_string(),
            Description::Built(build) => build(),
        }
    }

    /// The input schema `tools/list` shows: the properties and required
    /// names its arguments struct derives, in an object that takes no others.
    pub fn input_schema(&self) -> Value {
        let mut generator = schema::input_generator();
        let derived = Value::from((self.schemas.input)(&mut generator));
        let mut properties = match derived.get("properties") {
            Some(Value::Object(properties)) => properties.clone(),
            _ => Map::new(),
        };
        let required = match derived.get("required") {
            Some(Value::Array(required)) => required.clone(),
            _ => Vec::new(),
        };
        // An optional argument is left out when it is not wanted, never sent as `null`.
        for (name, property) in properties.iter_mut() {
            if let Value::Object(property) = property
                && !required.iter().any(|r| r == name)
            {
                schema::never_null(property);
            }
        }
        if self.asks_first() {
            let token = generator.subschema_for::<ConfirmToken>().into();
            properties.insert("confirm_token".into(), token);
        }
        let object = ObjectSchema {
            kind: "object",
            properties,
            required,
            additional_properties: false,
        };
        serde_json::to_value(object).expect("a schema is plain JSON")
    }

    pub fn output_schema(&self) -> Value {
        schema::output(self.schemas.output)
    }

    /// The entry `tools/list` shows for this tool.
    pub fn definition(&self) -> Value {
        let hints = self.annotations();
        let definition = Definition {
            name: self.name,
            title: self.title,
            description: self.description(),
            input_schema: self.input_schema(),
            output_schema: self.output_schema(),
            annotations: Hints {
                title: self.title,
                read_only_hint: hints.read_only,
                destructive_hint: hints.destructive,
                idempotent_hint: hints.idempotent,
                open_world_hint: hints.open_world,
            },
        };
        serde_json::to_value(definition).expect("a tool definition is plain JSON")
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

/// A tool's entry in `tools/list`, as MCP's `Tool` has it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Definition {
    name: &'static str,
    title: &'static str,
    description: String,
    input_schema: Value,
    output_schema: Value,
    annotations: Hints,
}

/// MCP's `ToolAnnotations`: the title again, and the four hints.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Hints {
    title: &'static str,
    read_only_hint: bool,
    destructive_hint: bool,
    idempotent_hint: bool,
    open_world_hint: bool,
}

/// An input schema: an object of the tool's arguments and no others.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ObjectSchema {
    #[serde(rename = "type")]
    kind: &'static str,
    properties: Map<String, Value>,
    required: Vec<Value>,
    additional_properties: bool,
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
    /// When the Rustpad instance started, once read (again after a write
    /// tried anew: Rustpad may have restarted in between).
    pub(super) started: Cell<Option<u64>>,
    /// A write's acknowledgement was lost and its edit then found in the
    /// pad's history: the result says so.
    pub(super) acknowledgement_lost: Cell<bool>,
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
            return Ok(started);
        }
        let started = stats::start_time(self.url)?;
        self.started.set(Some(started));
        Ok(started)
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
