//! The confirmation guard: a person approves irreversible edits first.
//!
//! A guarded tool describes what it is about to do as a [`Proposal`] from
//! inside its open session (so counts describe the pad as it stands) and asks
//! [`Guard::approve`]. The answer is one of:
//! - approved: a verified answer from a person, or a valid two-call token;
//! - a question ([`Verdict::Ask`]): the era adapter in `mcp` turns it
//!   into an `input_required` result (2026-07-28) or an `elicitation/create`
//!   pushed to the client (2025-11-25) and runs the tool again with the answer;
//! - a refusal with the reason (declined, bad token), or the token itself
//!   where no dialog can be shown.
//!
//! An approval is bound to the tool, the pad, the exact values in order, and
//! the pad's state at the revision the person was asked (match count, the
//! content's fingerprint, a base and what an edit removes), and it goes ahead
//! only if that state held at every revision since ([`standing`]): its first
//! use breaks it, so it works once in every host and replica without any
//! record of spent approvals. That holds for uses one after the other; for
//! uses at the same moment, a write first takes its place in the pad's order
//! of writes (`rustpad::order`, as removals do) and an approval goes ahead
//! only once every write marked before it is in the history: a second use
//! then finds the first one's change there. A write whose place is not clear
//! (one ahead never finished) never spends an approval. An answer whose seal
//! does not verify, has expired, or belongs to other arguments counts as no
//! answer: the person is asked afresh.

mod proposal;
pub mod removal;
pub mod seal;
pub mod standing;

use std::time::{SystemTime, UNIX_EPOCH};

use ropey::Rope;
use serde_json::{Map, Value};

use crate::digest;
use crate::rustpad::since::Since;
use crate::rustpad::socket::Queue;
pub use proposal::{Proposal, list_lines};
use seal::{Given, Sealer, State, Token, TokenProblem, low_bits};
use standing::{Sealed, Standing};

/// The key of the one answer we ask for.
pub const ANSWER_KEY: &str = "confirm";
/// How long a question's sealed state stays valid.
pub const STATE_TTL_SECONDS: u64 = 15 * 60;
/// How long a confirmation token stays valid.
pub const TOKEN_TTL_SECONDS: u64 = 5 * 60;
/// How often a person is asked again because the pad changed meanwhile.
pub const MAX_ROUNDS: u32 = 3;
/// The dialog's limit, far below what clients can show.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// What the guard says of a proposal.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Go ahead: a person approved, or a valid token came back.
    Go,
    /// Ask a person this first.
    Ask(Question),
    /// Do not: the reason (a refusal, or where no dialog can be shown, the
    /// token to call again with).
    Refuse(String),
}

/// A question for the person, with the state that ties the answer to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// `elicitation/create` params (form mode, one boolean).
    pub params: Value,
    /// Sealed [`State`]: comes back with the answer.
    pub state: String,
}

/// What the request brought along that the guard may use.
#[derive(Default)]
pub struct Answers {
    /// A dialog can be shown: ELICITATION is on and the client declared it.
    pub can_ask: bool,
    /// Why no dialog can be shown, when none can (the fallback text says).
    pub no_dialog: NoDialog,
    /// `inputResponses` of this request (or the answer the host relayed).
    pub responses: Option<Map<String, Value>>,
    /// `requestState` of this request.
    pub state: Option<String>,
    pub token: Option<String>,
}

/// Why a call cannot show a confirmation dialog.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NoDialog {
    /// The client did not declare it can show one.
    #[default]
    ClientCannot,
    /// ELICITATION=false.
    SwitchedOff,
    /// A 2025-11-25 request to a component in a WebAssembly host: without
    /// sessions there is no way to put a question to the client mid-call.
    NoSessions,
}

pub struct Guard<'a> {
    pub sealer: &'a Sealer,
    pub answers: &'a Answers,
}

/// The pad as a session holds it, for the guard: where it stands now, and
/// its history from (at the latest) the revision this request's answer
/// names ([`Guard::asked_at`]).
pub struct Pad<'a> {
    pub revision: u64,
    pub text: &'a Rope,
    pub record: Option<&'a Since>,
    /// Rustpad's number for this session's connection. Numbers grow with
    /// every connection while Rustpad keeps the pad and start again when it
    /// restarts or forgets the pad, so a number at most an approval's own
    /// says the pad was made anew since (its history too).
    pub connection: u64,
    /// When the Rustpad instance started (`/api/stats`): an approval given
    /// at another instance is not this pad's, however alike the pad looks.
    pub started: u64,
    /// Where the write stands in the pad's order of writes, once it took
    /// its place (`PadSocket::queue`); None: it did not, and may ask but
    /// never go ahead on an approval.
    pub queued: Option<Queue>,
}

impl Pad<'_> {
    /// Whether an approval asked for over connection `connection`, at the
    /// Rustpad instance this one is (`same_instance`), is for this pad as it
    /// still is: a connection number at most the approval's says the pad
    /// was made anew since.
    fn continues(&self, same_instance: bool, connection: u64) -> bool {
        same_instance && self.connection > connection
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    bytes.copy_from_slice(&wasip2::random::random::get_random_bytes(N as u64)[..N]);
    bytes
}

impl Guard<'_> {
    /// The revision of the pad that this request's answer or token says the
    /// approval was given at (unchecked): the session must record the pad's
    /// history from there for [`Guard::approve`] to check it.
    pub fn asked_at(&self) -> Option<u64> {
        if let Some(state) = &self.answers.state
            && let Some(state) = self.sealer.open_state(state, now())
        {
            return Some(state.at);
        }
        let token = Token::parse(self.answers.token.as_deref()?).ok()?;
        Some(token.revision)
    }

    /// Whether the proposal may go ahead, must ask first, or is refused.
    /// Never writes anything itself.
    pub fn approve(&self, proposal: &Proposal, pad: &Pad) -> Verdict {
        let verdict = self.weigh(proposal, pad);
        if verdict != Verdict::Go {
            return verdict;
        }
        match pad.queued {
            Some(Queue::Clear) => Verdict::Go,
            Some(Queue::Behind { writers }) => Verdict::Refuse(format!(
                "rustpad-mcp: not done: {} of this server's to pad \"{}\", begun just before this one, had not finished after {} seconds. An approval is used only once every write ahead of it is in the pad's history, so that it can never be used twice at once. Nothing was changed and the approval was not used: call {} again in a moment (with the same confirm_token, if one was given).",
                match writers {
                    1 => "another write".to_string(),
                    n => format!("{n} other writes"),
                },
                proposal.pad,
                removal::QUEUE_SECONDS,
                proposal.tool
            )),
            None => Verdict::Refuse(format!(
                "internal error: {} did not take its place among the writes to pad \"{}\" before using an approval; nothing was changed",
                proposal.tool, proposal.pad
            )),
        }
    }

    /// [`Guard::approve`], before the write's place is looked at.
    fn weigh(&self, proposal: &Proposal, pad: &Pad) -> Verdict {
        let now = now();
        let arguments = proposal.argument_digest();
        let mut round = 0;
        if let Some((answer, state)) = self.verified_answer(now)
            && state.arguments == arguments
        {
            // A "no" stands whatever the pad did meanwhile.
            if !approves(answer) {
                return judge(answer, proposal);
            }
            match self.standing(proposal, pad, &state) {
                Standing::Held => return Verdict::Go,
                Standing::Broke { at } => {
                    return Verdict::Refuse(format!(
                        "rustpad-mcp: not done: this approval was given for pad \"{}\" as it stood at revision {}, and the pad's history shows the approved change at revision {at} was made since (by this very approval, or by someone changing the pad and changing it back). An approval works once; nothing was changed. Call {} again to ask afresh.",
                        proposal.pad, state.at, proposal.tool
                    ));
                }
                // Approved against a pad that has changed since: ask again, a few times at most.
                Standing::Changed | Standing::Gone | Standing::TooLong => {
                    round = state.round + 1;
                    if round >= MAX_ROUNDS {
                        return Verdict::Refuse(format!(
                            "pad \"{}\" kept changing while a person was being asked ({MAX_ROUNDS} times), so the approval never matched the pad; nothing was changed. Try again when the pad is quieter.",
                            proposal.pad
                        ));
                    }
                }
            }
        }
        let here = Sealed::of(pad.revision, pad.text, proposal.state_of);
        let binding = proposal.binding(&here);
        if self.answers.can_ask {
            let state = State {
                arguments,
                binding,
                at: pad.revision,
                connection: pad.connection,
                started: pad.started,
                nonce: digest::hex(&random_bytes::<16>()),
                expires: now + STATE_TTL_SECONDS,
                round,
            };
            return Verdict::Ask(Question {
                params: proposal.elicitation(),
                state: self.sealer.seal_state(&state),
            });
        }
        match &self.answers.token {
            Some(token) => self.spend_token(token, proposal, pad, now),
            None => match self.fallback(proposal, &binding, pad, now) {
                Ok(instructions) | Err(instructions) => Verdict::Refuse(instructions),
            },
        }
    }

    /// What the pad's history says of the approval in `state`.
    fn standing(&self, proposal: &Proposal, pad: &Pad, state: &State) -> Standing {
        let Some(record) = pad.record else {
            return Standing::Gone;
        };
        standing::check(
            record,
            state.at,
            |sealed| {
                proposal.binding(sealed) == state.binding
                    && pad.continues(pad.started == state.started, state.connection)
            },
            proposal.state_of,
        )
    }

    /// The answer that came with this request, if its state's seal verifies
    /// and it has not expired.
    fn verified_answer(&self, now: u64) -> Option<(&Value, State)> {
        let answer = self.answers.responses.as_ref()?.get(ANSWER_KEY)?;
        let state = self
            .sealer
            .open_state(self.answers.state.as_deref()?, now)?;
        Some((answer, state))
    }

    fn spend_token(&self, token: &str, proposal: &Proposal, pad: &Pad, now: u64) -> Verdict {
        let tool = proposal.tool;
        let again = format!("Call {tool} again without confirm_token to get a new one.");
        let malformed = || {
            Verdict::Refuse(format!(
                "rustpad-mcp: confirm_token is not a confirmation token from this server. {again}"
            ))
        };
        let Ok(token) = Token::parse(token) else {
            return malformed();
        };
        // The seal covers the pad as it stood at the token's revision: check
        // it there, then the history since.
        let mut sealed_problem = None;
        let standing = match pad.record {
            Some(record) => standing::check(
                record,
                token.revision,
                |at| match self.sealer.check_token(&token, &proposal.binding(at), now) {
                    // The token carries the low bits of the start time.
                    Ok(()) => {
                        pad.continues(low_bits(pad.started) == token.started, token.connection)
                    }
                    Err(problem) => {
                        sealed_problem.get_or_insert(problem);
                        false
                    }
                },
                proposal.state_of,
            ),
            None => Standing::Gone,
        };
        let mismatch = if self.sealer.per_process {
            format!(
                "rustpad-mcp: this confirmation token does not match this call. Most likely this server was started anew since it issued the token: it signs with a key that lasts only as long as the process (some clients start a server for every call). Set RUSTPAD_SEAL_KEY (32+ characters) in the server's environment, or give it a writable state directory, so that tokens outlive a restart. Otherwise the token was issued for other arguments or another pad, or the pad has changed since. {again}"
            )
        } else {
            format!(
                "rustpad-mcp: this confirmation token does not match this call: it was issued for other arguments or another pad, the pad has changed since, or it is not from this server. {again}"
            )
        };
        match (standing, sealed_problem) {
            (Standing::Held, _) => Verdict::Go,
            (_, Some(TokenProblem::Expired)) => Verdict::Refuse(format!(
                "rustpad-mcp: this confirmation token has expired (tokens last {} minutes). {again}",
                TOKEN_TTL_SECONDS / 60
            )),
            (_, Some(TokenProblem::Malformed)) => malformed(),
            (_, Some(TokenProblem::Mismatch)) => Verdict::Refuse(mismatch),
            (Standing::Broke { at }, None) => Verdict::Refuse(format!(
                "rustpad-mcp: this confirmation token was already used, or pad \"{}\" was changed and changed back since it was issued: the pad's history shows the change it approves at revision {at}. A token works once; nothing was changed. {again}",
                proposal.pad
            )),
            (Standing::Changed, None) => Verdict::Refuse(format!(
                "rustpad-mcp: pad \"{}\" has changed since this confirmation token was issued (at revision {}), so it no longer approves this call; nothing was changed. {again}",
                proposal.pad, token.revision
            )),
            (Standing::Gone, None) => Verdict::Refuse(format!(
                "rustpad-mcp: this confirmation token names revision {} of pad \"{}\", which the pad's history does not hold: Rustpad restarted or forgot the pad since the token was issued, or the token is not from this server. Nothing was changed. {again}",
                token.revision, proposal.pad
            )),
            (Standing::TooLong, None) => Verdict::Refuse(format!(
                "rustpad-mcp: pad \"{}\" has changed too much since this confirmation token was issued for this server to check it; nothing was changed. {again}",
                proposal.pad
            )),
        }
    }

    fn fallback(
        &self,
        proposal: &Proposal,
        binding: &str,
        pad: &Pad,
        now: u64,
    ) -> Result<String, String> {
        let expires = (now + TOKEN_TTL_SECONDS).min(u64::from(u32::MAX)) as u32;
        let token = self
            .sealer
            .issue_token(
                binding,
                Given {
                    revision: pad.revision,
                    connection: pad.connection,
                    started: pad.started,
                },
                expires,
            )
            .ok_or_else(|| {
                format!(
                    "pad \"{}\" has more revisions or connections than a confirmation token can name ({} revisions, connection {}), so this change cannot be confirmed by token; nothing was changed. A client that can show a confirmation dialog can still make it.",
                    proposal.pad, pad.revision, pad.connection
                )
            })?;
        let who = match self.answers.no_dialog {
            NoDialog::SwitchedOff => {
                "rustpad-mcp was started with ELICITATION=false, so it did not ask anybody."
            }
            NoDialog::ClientCannot => {
                "This client cannot show a confirmation dialog, so nobody was asked."
            }
            NoDialog::NoSessions => crate::grants::WHY_NOBODY_WAS_ASKED,
        };
        Ok(format!(
            "{}\n\nTo go ahead, call {} again with the same arguments plus confirm_token=\"{token}\".\nThe token is valid for {} minutes and works once.\n\nNote: {who} The token proves only that the call was made twice with the same arguments, not that a person approved it. A human should read the lines above before you continue.",
            proposal.message(),
            proposal.tool,
            TOKEN_TTL_SECONDS / 60
        ))
    }
}

/// Only `accept` with the box ticked approves.
fn approves(answer: &Value) -> bool {
    answer.get("action").and_then(Value::as_str) == Some("accept")
        && answer.pointer(&format!("/content/{ANSWER_KEY}")) == Some(&Value::Bool(true))
}

/// Approval, or the refusal that says how the person answered.
fn judge(answer: &Value, proposal: &Proposal) -> Verdict {
    if approves(answer) {
        return Verdict::Go;
    }
    let action = answer.get("action").and_then(Value::as_str);
    let ticked = answer.pointer(&format!("/content/{ANSWER_KEY}"));
    let how = match (action, ticked) {
        // Only a boolean is a box; "true" as a string is not a tick, nor a clear no.
        (Some("accept"), Some(Value::Bool(false))) => "the box was not ticked",
        (Some("decline"), _) => "the person declined",
        (Some("cancel"), _) => "the dialog was cancelled",
        _ => "the answer was not understood",
    };
    Verdict::Refuse(format!(
        "rustpad-mcp: not confirmed ({how}). Pad \"{}\" was not changed.",
        proposal.pad
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn three(_: &Rope) -> String {
        "3".into()
    }

    #[test]
    fn only_a_ticked_accept_approves() {
        let p = Proposal {
            tool: "replace_in_document",
            pad: "notes",
            arguments: vec!["a", "z"],
            state_of: &three,
            what: "replace 3 occurrences in pad \"notes\"".into(),
            consequence: "What is replaced cannot be restored.",
            facts: Vec::new(),
            values: Vec::new(),
            title: "Replace?".into(),
            hint: "Tick to replace.",
        };
        assert_eq!(
            judge(&json!({"action":"accept","content":{"confirm":true}}), &p),
            Verdict::Go
        );
        for answer in [
            json!({"action":"accept","content":{"confirm":false}}),
            json!({"action":"accept"}),
            json!({"action":"accept","content":{"confirm":"true"}}),
            json!({"action":"decline"}),
            json!({"action":"cancel"}),
            json!("yes"),
        ] {
            assert!(matches!(judge(&answer, &p), Verdict::Refuse(_)), "{answer}");
        }
    }
}
