//! The `/_test/...` controls that upstream does not have: seeding pads, choosing a
//! misbehaviour per pad id, and recording what clients sent.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};

use futures_util::{Sink, Stream};
use operational_transform::OperationSeq;
use serde::{Deserialize, Serialize};
use tokio_tungstenite::tungstenite::{self, Message};

use crate::misbehave::Mode;
use crate::ot::char_len;
use crate::protocol::UserOperation;
use crate::rustpad::Rustpad;

/// Body of `POST /_test/seed/{id}`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seed {
    /// Text loaded as one history entry with id `u64::MAX`, like upstream's storage load.
    #[serde(default)]
    pub text: Option<String>,
    /// How many single insert entries to append at the end after `text`, with ids `0..ops`.
    #[serde(default)]
    pub ops: usize,
    /// What each of those entries inserts; `"x"` when absent.
    #[serde(default, rename = "char")]
    pub ch: Option<String>,
    /// The pad's language.
    #[serde(default)]
    pub language: Option<String>,
}

/// Reply of `POST /_test/seed/{id}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seeded {
    /// History length of the new pad.
    pub revision: usize,
    /// Text length in code points.
    pub length: usize,
}

impl Seed {
    /// Builds the document the seed describes.
    ///
    /// The text grows by appending and each entry is written directly rather than run through
    /// `apply`, which re-reads the whole text: a 100 000-entry seed stays linear.
    pub(crate) fn build(&self) -> Result<(Rustpad, Seeded), String> {
        let ch = self.ch.as_deref().unwrap_or("x");
        if self.ops > 0 && ch.is_empty() {
            return Err("\"char\" must not be empty when \"ops\" is given".into());
        }
        let mut operations = Vec::with_capacity(self.ops + 1);
        let mut text = String::new();
        let mut length = 0usize;
        if let Some(initial) = self.text.as_deref().filter(|t| !t.is_empty()) {
            let mut operation = OperationSeq::default();
            operation.insert(initial);
            operations.push(UserOperation {
                id: u64::MAX,
                operation,
            });
            text.push_str(initial);
            length = char_len(initial);
        }
        let step = char_len(ch);
        text.reserve(self.ops * ch.len());
        for id in 0..self.ops as u64 {
            let mut operation = OperationSeq::default();
            operation.retain(length as u64);
            operation.insert(ch);
            operations.push(UserOperation { id, operation });
            text.push_str(ch);
            length += step;
        }
        let seeded = Seeded {
            revision: operations.len(),
            length,
        };
        let pad = Rustpad::with_history(operations, text, self.language.clone(), self.ops as u64);
        Ok((pad, seeded))
    }
}

/// The raw text of every client message, in arrival order, for one pad id.
pub type MessageLog = Arc<Mutex<Vec<String>>>;

/// Per pad id test settings, kept apart from the documents so they survive re-seeding and can
/// be set before a pad exists.
#[derive(Default)]
pub(crate) struct Controls {
    modes: Mutex<HashMap<String, Mode>>,
    logs: Mutex<HashMap<String, MessageLog>>,
}

impl Controls {
    pub(crate) fn mode(&self, id: &str) -> Option<Mode> {
        lock(&self.modes).get(id).cloned()
    }

    pub(crate) fn set_mode(&self, id: &str, mode: Option<Mode>) {
        let mut modes = lock(&self.modes);
        match mode {
            Some(mode) => modes.insert(id.to_owned(), mode),
            None => modes.remove(id),
        };
    }

    pub(crate) fn log(&self, id: &str) -> MessageLog {
        Arc::clone(lock(&self.logs).entry(id.to_owned()).or_default())
    }

    pub(crate) fn received(&self, id: &str) -> Vec<String> {
        lock(&self.logs)
            .get(id)
            .map(|log| lock(log).clone())
            .unwrap_or_default()
    }

    pub(crate) fn clear_log(&self, id: &str) {
        lock(&self.logs).remove(id);
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A WebSocket that writes every text frame it reads into a [`MessageLog`], so the protocol code
/// itself needs no recording hooks.
pub(crate) struct Recorded<S> {
    inner: S,
    log: MessageLog,
}

impl<S> Recorded<S> {
    pub(crate) fn new(inner: S, log: MessageLog) -> Self {
        Self { inner, log }
    }
}

impl<S> Stream for Recorded<S>
where
    S: Stream<Item = Result<Message, tungstenite::Error>> + Unpin,
{
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let item = ready!(Pin::new(&mut self.inner).poll_next(cx));
        if let Some(Ok(Message::Text(text))) = &item {
            lock(&self.log).push(text.as_str().to_owned());
        }
        Poll::Ready(item)
    }
}

impl<S> Sink<Message> for Recorded<S>
where
    S: Sink<Message> + Unpin,
{
    type Error = S::Error;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        Pin::new(&mut self.inner).poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, item: Message) -> Result<(), S::Error> {
        Pin::new(&mut self.inner).start_send(item)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}
