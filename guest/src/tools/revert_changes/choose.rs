//! Which changes a revert takes back, worked out from the history: one
//! connection's, this server's own, or everyone's since the base.

use std::collections::HashSet;

use super::{Target, untrusted_history};
use crate::rustpad::ot::Builder;
use crate::rustpad::since::Since;
use crate::rustpad::socket::PadSocket;
use crate::rustpad::undo::{self, Undo};
use crate::tools::outcome::ToolError;
use crate::tools::args::{By, ChangeHandle};

/// The undo of what `target` chooses.
pub(super) fn undo_of(socket: &PadSocket, since: &Since, id: &str, target: &Target) -> Result<Undo, ToolError> {
    let authorship = socket
        .authorship()
        .expect("the session follows who wrote what");
    // A handle names one write: its connection's entries after the base up
    // to the first that changed the text (its edit; a kept connection goes
    // on with later writes, which are not this change).
    let mut through = u64::MAX;
    let connection = match target {
        Target::Change(ChangeHandle(handle)) => {
            let edit = (since.revision() + 1..).zip(since.entries()).find(|(_, entry)| {
                entry.author == handle.connection && !entry.operation.is_noop()
            });
            let Some((revision, _)) = edit else {
                return Err(ToolError::new(format!(
                    "Nothing was written: pad \"{id}\"'s history holds no change by connection {} after base {}, so change {handle} was never made (its write failed before its edit landed).",
                    handle.connection, handle.before
                )));
            };
            through = revision;
            Some(handle.connection)
        }
        Target::Since { by: By::Connection(n), .. } => Some(*n),
        Target::Since { by: By::Name(name), .. } => Some(one_named(socket, since, id, name)?),
        Target::Since { by: By::Everyone, .. } => return back_to_base(socket, since, id),
        Target::Since { by: By::ThisServer, .. } => None,
    };
    let chosen = |revision, author| match connection {
        Some(connection) => author == connection && revision <= through,
        None => authorship.is_own(author),
    };
    let mut reverts: Vec<u64> = Vec::new();
    let mut seen = HashSet::new();
    for (revision, entry) in (since.revision() + 1..).zip(since.entries()) {
        let revert = authorship.class_at(revision).restores() && !entry.operation.is_noop();
        if revert && Some(entry.author) != connection && seen.insert(entry.author) {
            reverts.push(entry.author);
        }
    }
    undo::take_back_once(since, chosen, &reverts).map_err(|_| untrusted_history(id))
}

/// The pad back at the text of its base: the shortest replacement from the
/// text now (what they share at both ends stays).
fn back_to_base(socket: &PadSocket, since: &Since, id: &str) -> Result<Undo, ToolError> {
    let now = socket.text()?.to_string();
    let then = since.text().ok_or_else(|| untrusted_history(id))?.to_string();
    let (prefix, suffix) = crate::text::shared_ends(&now, &then);
    let then_chars: Vec<char> = then.chars().collect();
    let middle: String = then_chars[prefix..then_chars.len() - suffix].iter().collect();
    let now_chars = crate::text::char_len(&now);
    let operation = Builder::new()
        .retain(prefix)
        .delete(now_chars - prefix - suffix)
        .insert(&middle)
        .retain(suffix)
        .build();
    let entries = since
        .entries()
        .iter()
        .filter(|entry| !entry.operation.is_noop())
        .count();
    Ok(Undo {
        operation,
        entries,
        kept_inside: Vec::new(),
    })
}

/// The one connection in the pad now called `name`, or a refusal that
/// names the connections to choose from.
fn one_named(socket: &PadSocket, since: &Since, id: &str, name: &str) -> Result<u64, ToolError> {
    let named = socket.connections_named(name);
    if let [one] = named.as_slice() {
        return Ok(*one);
    }
    let mut authors: Vec<u64> = since
        .entries()
        .iter()
        .filter(|entry| !entry.operation.is_noop())
        .map(|entry| entry.author)
        .collect();
    authors.sort_unstable();
    authors.dedup();
    let listed: Vec<String> = authors.iter().take(20).map(u64::to_string).collect();
    let choose = if listed.is_empty() {
        "nobody has changed the pad since the base".to_string()
    } else {
        format!(
            "the connections that changed it since the base are {}{}",
            listed.join(", "),
            if authors.len() > listed.len() { ", …" } else { "" }
        )
    };
    let problem = if named.is_empty() {
        "nobody of that name is in the pad now (names are known only while people have it open)".to_string()
    } else {
        let numbers: Vec<String> = named.iter().map(u64::to_string).collect();
        format!("{} connections in the pad have that name ({})", named.len(), numbers.join(", "))
    };
    Err(ToolError::new(format!(
        "Nothing was written to pad \"{id}\": {problem}; {choose}. Pass by: {{\"connection\": N}} with one of them (get_changes lists each author's connections)."
    )))
}

