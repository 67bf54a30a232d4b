//! One collaborative document and the faithful per-connection protocol loop, kept as close to
//! upstream's `rustpad.rs` as practical so the two can be compared side by side.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use futures_util::{Sink, SinkExt, Stream, StreamExt};
use operational_transform::OperationSeq;
use tokio::sync::{Notify, broadcast};
use tokio_tungstenite::tungstenite::{self, Message};

use crate::note;
use crate::ot::transform_index;
use crate::protocol::{ClientMsg, CursorData, ServerMsg, UserInfo, UserOperation};

/// Largest document, in code points, an edit may leave behind (upstream's 256 KiB rule).
pub const MAX_DOCUMENT_CHARS: usize = 256 * 1024;

/// How many metadata messages a connection may fall behind before it is dropped.
const UPDATE_CAPACITY: usize = 16;

/// Errors end a connection; their text only ever reaches the log.
pub(crate) type Error = Box<dyn std::error::Error + Send + Sync>;
pub(crate) type Result<T> = std::result::Result<T, Error>;

/// What a connection handler needs from a WebSocket: frames in, frames out.
pub trait Socket:
    Stream<Item = std::result::Result<Message, tungstenite::Error>>
    + Sink<Message, Error = tungstenite::Error>
    + Unpin
    + Send
{
}

impl<T> Socket for T where
    T: Stream<Item = std::result::Result<Message, tungstenite::Error>>
        + Sink<Message, Error = tungstenite::Error>
        + Unpin
        + Send
{
}

/// A collaborative session on one document id.
pub struct Rustpad {
    state: RwLock<State>,
    /// Source of user ids; ids are only unique within this document.
    count: AtomicU64,
    /// Wakes every connection after an edit so it can forward the new history.
    notify: Notify,
    /// Fans metadata (language, user info, cursors) out to every connection.
    update: broadcast::Sender<ServerMsg>,
    /// Set when the document is replaced, so its connections close.
    killed: AtomicBool,
    /// Connections whose snapshot carried the history: what a client pays
    /// to join, which a watcher that stays joined pays once.
    history_reads: AtomicU64,
}

/// Everything several connections read and write, behind one lock.
#[derive(Default)]
struct State {
    operations: Vec<UserOperation>,
    text: String,
    language: Option<String>,
    users: HashMap<u64, UserInfo>,
    cursors: HashMap<u64, CursorData>,
}

impl Default for Rustpad {
    fn default() -> Self {
        let (update, _) = broadcast::channel(UPDATE_CAPACITY);
        Self {
            state: RwLock::default(),
            count: AtomicU64::default(),
            notify: Notify::new(),
            update,
            killed: AtomicBool::new(false),
            history_reads: AtomicU64::new(0),
        }
    }
}

impl Rustpad {
    /// A document that starts from an existing history, as upstream's storage load does.
    ///
    /// `first_user_id` keeps new connections' ids clear of the ids already in `operations`, the
    /// way they would be had those edits come from earlier connections.
    pub(crate) fn with_history(
        operations: Vec<UserOperation>,
        text: String,
        language: Option<String>,
        first_user_id: u64,
    ) -> Self {
        let pad = Self::default();
        {
            let mut state = pad.write();
            state.operations = operations;
            state.text = text;
            state.language = language;
        }
        pad.count.store(first_user_id, Ordering::Relaxed);
        pad
    }

    /// Serves one WebSocket until it closes or misbehaves.
    pub async fn on_connection(&self, socket: impl Socket) {
        let id = self.next_user_id();
        note!("connection: id = {id}");
        if let Err(e) = self.handle_connection(id, socket).await {
            note!("connection {id} ended early: {e}");
        }
        self.disconnect(id);
    }

    /// The current text.
    pub fn text(&self) -> String {
        self.read().text.clone()
    }

    /// How many connections were sent the whole history as they joined.
    pub fn history_reads(&self) -> u64 {
        self.history_reads.load(Ordering::Relaxed)
    }

    /// The number of history entries so far.
    pub fn revision(&self) -> usize {
        self.read().operations.len()
    }

    /// Closes every connection on this document at its next wake-up.
    pub fn kill(&self) {
        self.killed.store(true, Ordering::Relaxed);
        self.notify.notify_waiters();
    }

    /// Whether [`Rustpad::kill`] has been called.
    pub fn killed(&self) -> bool {
        self.killed.load(Ordering::Relaxed)
    }

    async fn handle_connection(&self, id: u64, mut socket: impl Socket) -> Result<()> {
        let mut update_rx = self.update.subscribe();

        let mut revision = self.send_initial(id, &mut socket).await?;

        loop {
            // Ask to be woken before looking at the revision, so an edit landing in between still
            // wakes us (the same ordering `tokio::sync::watch` relies on).
            let notified = self.notify.notified();
            if self.killed() {
                break;
            }
            if self.revision() > revision {
                revision = self.send_history(revision, &mut socket).await?;
            }

            tokio::select! {
                _ = notified => {}
                update = update_rx.recv() => {
                    // Lagging behind the metadata channel ends the connection, as upstream.
                    socket.send(to_message(&update?)).await?;
                }
                result = socket.next() => match result {
                    None => break,
                    Some(message) => self.handle_message(id, message?).await?,
                },
            }
        }
        Ok(())
    }

    async fn send_initial(&self, id: u64, socket: &mut impl Socket) -> Result<usize> {
        socket.send(to_message(&ServerMsg::Identity(id))).await?;
        let (messages, revision) = self.snapshot();
        if matches!(messages.first(), Some(ServerMsg::History { .. })) {
            self.history_reads.fetch_add(1, Ordering::Relaxed);
        }
        for msg in &messages {
            socket.send(to_message(msg)).await?;
        }
        Ok(revision)
    }

    /// Hands out the next user id.
    pub(crate) fn next_user_id(&self) -> u64 {
        self.count.fetch_add(1, Ordering::Relaxed)
    }

    /// Forgets a user and tells the others it left.
    pub(crate) fn disconnect(&self, id: u64) {
        note!("disconnection: id = {id}");
        {
            let mut state = self.write();
            state.users.remove(&id);
            state.cursors.remove(&id);
        }
        self.update
            .send(ServerMsg::UserInfo { id, info: None })
            .ok();
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ServerMsg> {
        self.update.subscribe()
    }

    /// Wakes connections after an edit.
    pub(crate) fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.notify.notified()
    }

    /// Everything a new connection gets after its `Identity`, and the revision it covers.
    pub(crate) fn snapshot(&self) -> (Vec<ServerMsg>, usize) {
        let state = self.read();
        let mut messages = Vec::new();
        if !state.operations.is_empty() {
            messages.push(ServerMsg::History {
                start: 0,
                operations: state.operations.clone(),
            });
        }
        if let Some(language) = &state.language {
            messages.push(ServerMsg::Language(language.clone()));
        }
        for (&id, info) in &state.users {
            messages.push(ServerMsg::UserInfo {
                id,
                info: Some(info.clone()),
            });
        }
        for (&id, data) in &state.cursors {
            messages.push(ServerMsg::UserCursor {
                id,
                data: data.clone(),
            });
        }
        (messages, state.operations.len())
    }

    /// History entries from `start` on (empty if there are none yet).
    pub(crate) fn history_since(&self, start: usize) -> Vec<UserOperation> {
        let state = self.read();
        state.operations.get(start..).unwrap_or_default().to_vec()
    }

    /// Sends whatever history the connection has not seen; returns its new revision.
    pub(crate) async fn send_history(
        &self,
        start: usize,
        socket: &mut impl Socket,
    ) -> Result<usize> {
        let operations = self.history_since(start);
        let num_ops = operations.len();
        if num_ops > 0 {
            let msg = ServerMsg::History { start, operations };
            socket.send(to_message(&msg)).await?;
        }
        Ok(start + num_ops)
    }

    pub(crate) async fn handle_message(&self, id: u64, message: Message) -> Result<()> {
        let msg: ClientMsg = match message {
            Message::Text(text) => serde_json::from_str(&text)
                .map_err(|e| format!("undecodable client message: {e}"))?,
            // Binary, ping, pong and close frames carry nothing for the document.
            _ => return Ok(()),
        };
        match msg {
            ClientMsg::Edit {
                revision,
                operation,
            } => {
                self.apply_edit(id, revision, operation)
                    .map_err(|e| format!("rejected edit: {e}"))?;
                self.notify.notify_waiters();
            }
            ClientMsg::SetLanguage(language) => {
                self.write().language = Some(language.clone());
                self.update.send(ServerMsg::Language(language)).ok();
            }
            ClientMsg::ClientInfo(info) => {
                self.write().users.insert(id, info.clone());
                let msg = ServerMsg::UserInfo {
                    id,
                    info: Some(info),
                };
                self.update.send(msg).ok();
            }
            ClientMsg::CursorData(data) => {
                self.write().cursors.insert(id, data.clone());
                self.update.send(ServerMsg::UserCursor { id, data }).ok();
            }
        }
        Ok(())
    }

    fn apply_edit(&self, id: u64, revision: usize, mut operation: OperationSeq) -> Result<()> {
        note!(
            "edit: id = {id}, revision = {revision}, base_len = {}, target_len = {}",
            operation.base_len(),
            operation.target_len()
        );
        // One write lock for the whole edit keeps edits on a document strictly serialised.
        let mut state = self.write();
        let len = state.operations.len();
        if revision > len {
            return Err(format!("revision {revision} is ahead of the history ({len})").into());
        }
        for history_op in &state.operations[revision..] {
            operation = operation.transform(&history_op.operation)?.0;
        }
        if operation.target_len() > MAX_DOCUMENT_CHARS {
            return Err(format!(
                "the result would be {} code points, over the {MAX_DOCUMENT_CHARS} limit",
                operation.target_len()
            )
            .into());
        }
        let new_text = operation.apply(&state.text)?;
        for data in state.cursors.values_mut() {
            for cursor in &mut data.cursors {
                *cursor = transform_index(&operation, *cursor);
            }
            for (start, end) in &mut data.selections {
                *start = transform_index(&operation, *start);
                *end = transform_index(&operation, *end);
            }
        }
        state.operations.push(UserOperation { id, operation });
        state.text = new_text;
        Ok(())
    }

    // A panic while holding the lock cannot leave the state half-updated in a way that matters
    // to a test server, so poisoning is ignored rather than spread to every connection.
    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A server message as a WebSocket text frame.
pub(crate) fn to_message(msg: &ServerMsg) -> Message {
    Message::text(msg.to_json())
}
