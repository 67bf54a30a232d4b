//! The tools: one descriptor per tool, each in a file of its own, listed
//! once below; and what every call goes through before its handler runs.
//!
//! Handlers never see the protocol era: they get a [`Call`] (where Rustpad
//! is, their arguments, the guard) and return a result or a failure for the
//! model. How a tool is added: docs/architecture.md.

pub mod args;
pub mod catalogue;
// The docs checks of `tests/docs.rs`, run here over a catalogue with a test-only tool.
#[cfg(test)]
#[path = "../../tests/catalogue_docs/mod.rs"]
mod catalogue_docs;
mod diff;
mod edit_effect;
pub mod locate;
pub mod outcome;
mod people;
pub mod reading;
mod schema;
pub mod selection;
mod session;
mod tool;
mod window;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::guard::{Answers, Guard, NoDialog, seal::Sealer};
use crate::rustpad::url::RustpadUrl;
use args::ConfirmToken;
pub use outcome::{OUTCOME_KEY, ToolError, ToolOutput, ToolResult};
pub use tool::{Annotations, Call, Tool};

/// Declares each tool's module and lists its descriptor in [`ALL`].
macro_rules! tools {
    ($($(#[$attribute:meta])* $tool:ident,)*) => {
        $($(#[$attribute])* mod $tool;)*

        /// Every tool this server knows, in the order `tools/list` shows them.
        pub static ALL: &[&Tool] = &[$($(#[$attribute])* &$tool::TOOL,)*];
    };
}

tools! {
    get_document,
    get_document_info,
    get_stats,
    get_changes,
    create_document,
    set_document,
    append_to_document,
    replace_in_document,
    edit_document,
    set_language,
    revert_changes,
    wait_for_changes,
    // What adding a read tool takes, shown by one that exists only in tests.
    #[cfg(test)]
    count_lines,
}

/// The tool that reads pads: pads are resources exactly where it is offered.
pub static GET_DOCUMENT: &Tool = &get_document::TOOL;
/// The tools besides it whose results the pad view shows (a diff).
pub static GET_CHANGES: &Tool = &get_changes::TOOL;
pub static EDIT_DOCUMENT: &Tool = &edit_document::TOOL;
pub static REVERT_CHANGES: &Tool = &revert_changes::TOOL;
/// The pad view's own wait, in no list but the view's client's.
pub static FOLLOW_PAD: &Tool = &wait_for_changes::FOLLOW;
pub static WAIT_FOR_CHANGES: &Tool = &wait_for_changes::TOOL;

/// Which protocol revision a call came in on.
pub use rustpad_mcp_rules::era::Era;

/// What a tool call knows about the request it came in.
pub struct CallContext {
    pub era: Era,
    /// The client declared it can show an elicitation dialog.
    pub can_elicit: bool,
    /// `inputResponses` carried by this request (2026-07-28), or the answer
    /// relayed from the client's dialog (2025-11-25).
    pub responses: Option<Map<String, Value>>,
    /// `requestState` carried by this request, or the one we sealed.
    pub state: Option<String>,
}

/// What a tool call needs of the server's configuration.
pub struct Settings<'a> {
    /// None: started without RUSTPAD_URL, and every call says so.
    pub rustpad: Option<&'a RustpadUrl>,
    /// False: guarded tools use the two-call token even for clients with dialogs.
    pub elicitation: bool,
    pub seal_key: &'a [u8],
    /// The key lives only as long as this process.
    pub seal_key_per_process: bool,
}

const UNCONFIGURED: &str = "rustpad-mcp is running without RUSTPAD_URL, so it cannot reach any pad. Set RUSTPAD_URL to the base address of your Rustpad instance (for example https://rustpad.example.net) in this server's environment, then restart it.";

#[derive(Deserialize)]
struct TokenArgument<'a> {
    #[serde(borrow)]
    confirm_token: Option<ConfirmToken<'a>>,
}

/// Runs `tool`. Its arguments are checked in the documented order (see
/// docs/tools.md, Conventions): names, then whether Rustpad is configured,
/// then `confirm_token`'s shape, then the tool's own arguments and checks.
pub fn call(
    settings: &Settings,
    tool: &Tool,
    arguments: &Map<String, Value>,
    context: &CallContext,
) -> ToolResult {
    let (known, required) = tool.argument_names();
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    let required: Vec<&str> = required.iter().map(String::as_str).collect();
    args::names(tool.name, &known, &required, arguments)?;
    let url = settings
        .rustpad
        .ok_or_else(|| ToolError::new(UNCONFIGURED))?;
    // A call that will reach Rustpad runs in one of the host's places for
    // tool calls (or for waits), or not at all (the instance keeps its place
    // to the end).
    let enter = if tool.waits() {
        crate::grants::calls::enter_wait
    } else {
        crate::grants::calls::enter
    };
    enter().map_err(|host| ToolError::NoRoom(host.message))?;
    let token = if tool.asks_first() {
        args::read::<TokenArgument>(arguments)?
            .confirm_token
            .map(|ConfirmToken(token)| token.to_string())
    } else {
        None
    };
    let pushes = context.era == Era::Modern || crate::grants::PUSHES_QUESTIONS;
    let answers = Answers {
        can_ask: settings.elicitation && context.can_elicit && pushes,
        no_dialog: if !settings.elicitation {
            NoDialog::SwitchedOff
        } else if !pushes {
            NoDialog::NoSessions
        } else {
            NoDialog::ClientCannot
        },
        responses: context.responses.clone(),
        state: context.state.clone(),
        token,
    };
    let mut sealer = Sealer::new(settings.seal_key);
    if settings.seal_key_per_process {
        sealer = sealer.per_process();
    }
    let guard = Guard {
        sealer: &sealer,
        answers: &answers,
    };
    let call = Call {
        url,
        arguments,
        guard: &guard,
        started: Default::default(),
        acknowledgement_lost: Default::default(),
    };
    let mut output = (tool.run)(&call)?;
    if call.acknowledgement_lost.get() {
        output.text.push_str(session::ACKNOWLEDGEMENT_LOST);
    }
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::Answers;

    /// The argument a call names in its failure, if it names one.
    fn named(message: &str) -> Option<&str> {
        let rest = message.strip_prefix("argument \"")?;
        rest.split('"').next()
    }

    /// Every tool reads its arguments in the order its schema lists them
    /// (the order docs/tools.md documents): with all of them wrong, the
    /// failure names the first; without it, the next.
    #[test]
    fn arguments_are_checked_in_the_order_the_schema_lists_them() {
        let (url, _) = RustpadUrl::parse("http://127.0.0.1:9").unwrap();
        let sealer = Sealer::new(b"a key for the tests of this module, long enough");
        let answers = Answers::default();
        let guard = Guard {
            sealer: &sealer,
            answers: &answers,
        };
        for tool in ALL {
            let (mut left, _) = tool.argument_names();
            left.retain(|name| name != "confirm_token");
            while let Some(first) = left.first().cloned() {
                let arguments: Map<String, Value> = left
                    .iter()
                    .map(|name| (name.clone(), Value::Array(Vec::new())))
                    .collect();
                let call = Call {
                    url: &url,
                    arguments: &arguments,
                    guard: &guard,
                    started: Default::default(),
                    acknowledgement_lost: Default::default(),
                };
                let failure = match (tool.run)(&call) {
                    Err(ToolError::Failed(message)) => message,
                    other => panic!("{}: {other:?}", tool.name),
                };
                assert_eq!(
                    named(&failure),
                    Some(first.as_str()),
                    "{}: {failure}",
                    tool.name
                );
                left.remove(0);
            }
        }
    }
}
