//! A person at the keyboard, scripted: a connected editor that makes exactly
//! the edits a test hands it, each acknowledged before the call returns, with
//! the same client algorithm as the browser (the typist's [`Client`]).
//!
//! Where the typist types random keystrokes on its own schedule, a person
//! lets a test put chosen edits at chosen moments: between a model's read and
//! its write, say. [`converse`] runs one from a test's script: commands in
//! on stdin, everything the server says out on stdout, as JSON lines.

use operational_transform::OperationSeq;
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_tungstenite::connect_async;

use crate::protocol::{ClientMsg, CursorData, ServerMsg, UserInfo};
use crate::typist::{Client, ClientSocket, TypistError, handle, next_server_msg, send};

/// A connected editor, its snapshot read.
pub struct Person {
    socket: ClientSocket,
    client: Client,
}

impl Person {
    /// Opens `ws://…/api/socket/ID` as `name` and reads the pad's snapshot.
    pub async fn join(url: &str, name: &str) -> Result<Person, TypistError> {
        let (mut socket, _) = connect_async(url).await?;
        let me = match next_server_msg(&mut socket).await? {
            ServerMsg::Identity(me) => me,
            other => {
                return Err(TypistError(format!(
                    "expected Identity first, got {other:?}"
                )));
            }
        };
        let mut client = Client::new(me);
        let info = UserInfo {
            name: name.to_string(),
            hue: 0,
        };
        send(&mut socket, &crate::protocol::ClientMsg::ClientInfo(info)).await?;
        // The echo of our own ClientInfo marks the end of the snapshot.
        loop {
            match next_server_msg(&mut socket).await? {
                ServerMsg::UserInfo { id, info: Some(_) } if id == me => break,
                msg => handle(&mut client, &mut socket, msg).await?,
            }
        }
        Ok(Person { socket, client })
    }

    /// This person's connection number in the pad.
    pub fn identity(&self) -> u64 {
        self.client.me
    }

    /// The text as this person sees it.
    pub fn text(&self) -> &str {
        &self.client.text
    }

    /// Makes one edit on the text as this person sees it and waits for the
    /// server to acknowledge it.
    pub async fn edit(&mut self, operation: OperationSeq) -> Result<(), TypistError> {
        let to_send = self
            .client
            .local_edit(operation)
            .map_err(|_| TypistError("the edit does not fit the person's text".into()))?;
        if let Some(edit) = to_send {
            send(&mut self.socket, &edit).await?;
        }
        while !self.client.is_settled() {
            let msg = next_server_msg(&mut self.socket).await?;
            handle(&mut self.client, &mut self.socket, msg).await?;
        }
        Ok(())
    }

    /// Makes the text `text` in one edit of what lies between the ends the
    /// two texts share, as a person editing by hand would.
    pub async fn set_text(&mut self, text: &str) -> Result<(), TypistError> {
        let old: Vec<char> = self.text().chars().collect();
        let new: Vec<char> = text.chars().collect();
        let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let suffix = old[prefix..]
            .iter()
            .rev()
            .zip(new[prefix..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let mut operation = OperationSeq::default();
        operation.retain(prefix as u64);
        operation.delete((old.len() - prefix - suffix) as u64);
        operation.insert(&new[prefix..new.len() - suffix].iter().collect::<String>());
        operation.retain(suffix as u64);
        self.edit(operation).await
    }

    /// Closes the connection; the others see this person leave.
    pub async fn leave(mut self) {
        self.socket.close(None).await.ok();
    }
}

/// A command of [`converse`]'s script: one JSON object per line.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum Command {
    /// Makes the text this, as [`Person::set_text`] does.
    Text(String),
    /// Adds this at the end of the text as this person sees it.
    Append(String),
    /// Puts this person's carets and selections here.
    Cursor(CursorData),
    /// Sends this many edits that keep the whole text (as rustpad-mcp's marks are), each
    /// acknowledged before the next.
    Keep(u32),
}

/// Joins as `name` and follows a script: prints `{"identity", "text"}` once
/// the snapshot is in, then every message the server sends as
/// `{"server": …}`, and `{"done": {"revision", "text"}}` after each command
/// of stdin (`{"text": T}`, `{"append": T}`, `{"cursor": {"cursors", "selections"}}` or
/// `{"keep": N}`) has taken effect. Leaves when stdin ends.
pub async fn converse(url: &str, name: &str) -> Result<(), TypistError> {
    let mut person = Person::join(url, name).await?;
    println!(
        "{}",
        serde_json::json!({ "identity": person.identity(), "text": person.text() })
    );
    let mut commands = BufReader::new(tokio::io::stdin()).lines();
    loop {
        tokio::select! {
            line = commands.next_line() => {
                let Some(line) = line.map_err(|e| TypistError(e.to_string()))? else { break };
                let command: Command = serde_json::from_str(&line)
                    .map_err(|e| TypistError(format!("bad command {line:?}: {e}")))?;
                match command {
                    Command::Text(text) => person.set_text(&text).await?,
                    Command::Append(text) => {
                        let whole = format!("{}{text}", person.text());
                        person.set_text(&whole).await?;
                    }
                    Command::Cursor(data) => {
                        send(&mut person.socket, &ClientMsg::CursorData(data)).await?;
                    }
                    Command::Keep(count) => {
                        for _ in 0..count {
                            let mut keep = OperationSeq::default();
                            keep.retain(person.text().chars().count() as u64);
                            person.edit(keep).await?;
                        }
                    }
                }
                let done = serde_json::json!({
                    "revision": person.client.revision,
                    "text": person.text(),
                });
                println!("{}", serde_json::json!({ "done": done }));
            }
            message = next_server_msg(&mut person.socket) => {
                let message = message?;
                println!("{}", serde_json::json!({ "server": message }));
                handle(&mut person.client, &mut person.socket, message).await?;
            }
        }
    }
    person.leave().await;
    Ok(())
}
