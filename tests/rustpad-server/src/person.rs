//! A person at the keyboard, scripted: a connected editor that makes exactly
//! the edits a test hands it, each acknowledged before the call returns, with
//! the same client algorithm as the browser (the typist's [`Client`]).
//!
//! Where the typist types random keystrokes on its own schedule, a person
//! lets a test put chosen edits at chosen moments: between a model's read and
//! its write, say. [`converse`] runs one from a test's script: commands in
//! on stdin, everything the server says out on stdout, as JSON lines.
//! [`type_steadily`] is the person of a load run: a keystroke at a fixed
//! pace, joining again whenever Rustpad drops it, and counting how often.

use std::time::Duration;

use operational_transform::OperationSeq;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::time::{Instant, sleep, sleep_until};
use tokio_tungstenite::connect_async;

use crate::protocol::{ClientMsg, CursorData, ServerMsg, UserInfo};
use crate::typist::{Client, ClientSocket, TypistError, handle, next_server_msg, send};

/// A connected editor, its snapshot read.
pub struct Person {
    socket: ClientSocket,
    client: Client,
    /// What others' doings sent this person since it joined.
    pub heard: Heard,
}

/// Counts of what reached a person because of others, after its snapshot.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Heard {
    /// Messages Rustpad relays through its small per-pad queue (names,
    /// departures, carets, languages): what can knock an editor off the pad.
    pub relayed: u64,
    /// History entries others made (these come another way and cannot lag).
    pub entries: u64,
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
        Ok(Person {
            socket,
            client,
            heard: Heard::default(),
        })
    }

    /// The server's next message, counted in [`Person::heard`] when it is
    /// about someone else, and taken into the person's text.
    async fn receive(&mut self) -> Result<ServerMsg, TypistError> {
        let message = next_server_msg(&mut self.socket).await?;
        let me = self.client.me;
        match &message {
            ServerMsg::History { operations, .. } => {
                self.heard.entries +=
                    operations.iter().filter(|entry| entry.id != me).count() as u64;
            }
            ServerMsg::UserInfo { id, .. } | ServerMsg::UserCursor { id, .. } if *id != me => {
                self.heard.relayed += 1;
            }
            ServerMsg::Language(_) => self.heard.relayed += 1,
            _ => {}
        }
        handle(&mut self.client, &mut self.socket, message.clone()).await?;
        Ok(message)
    }

    /// This person's connection number in the pad.
    pub fn identity(&self) -> u64 {
        self.client.me
    }

    /// The text as this person sees it.
    pub fn text(&self) -> String {
        self.client.text.to_string()
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
            self.receive().await?;
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
            message = person.receive() => {
                println!("{}", serde_json::json!({ "server": message? }));
            }
        }
    }
    person.leave().await;
    Ok(())
}

/// What [`type_steadily`] did.
#[derive(Debug, Default, Serialize)]
pub struct SteadyReport {
    /// Keystrokes Rustpad acknowledged.
    pub acknowledged: u64,
    /// The acknowledged keystrokes, in order.
    pub typed: String,
    /// How often the connection ended without this person leaving.
    pub disconnections: u64,
    /// Why, for the first few of them.
    pub reasons: Vec<String>,
    /// What others' doings sent this person, over all its connections.
    pub heard: Heard,
}

impl SteadyReport {
    fn add(&mut self, heard: Heard) {
        self.heard.relayed += heard.relayed;
        self.heard.entries += heard.entries;
    }

    fn dropped(&mut self, why: TypistError) {
        self.disconnections += 1;
        if self.reasons.len() < 8 {
            self.reasons.push(why.0);
        }
    }
}

/// Joins as `name` and, every `every`, types one letter at the end of the
/// pad's first line, each acknowledged before the next; in between it reads
/// all the server sends, as an open editor does, so a lag Rustpad reports is
/// Rustpad's own. When the connection ends, it counts that and joins again.
/// Stops, leaving the pad, when `stop` completes (the command line's: when
/// stdin ends).
pub async fn type_steadily(
    url: &str,
    name: &str,
    every: Duration,
    stop: impl std::future::Future<Output = ()>,
) -> SteadyReport {
    let mut stop = std::pin::pin!(stop);
    let mut report = SteadyReport::default();
    loop {
        let mut person = tokio::select! {
            () = &mut stop => return report,
            joined = Person::join(url, name) => match joined {
                Ok(person) => person,
                Err(why) => {
                    report.dropped(why);
                    sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let mut next = Instant::now() + every;
        let dropped = loop {
            tokio::select! {
                () = &mut stop => {
                    report.add(person.heard);
                    person.leave().await;
                    return report;
                }
                () = sleep_until(next) => {
                    next += every;
                    let letter = char::from(b'a' + (report.acknowledged % 26) as u8);
                    // Read from the rope: a copy of a long pad's text per keystroke
                    // would cost what the rope saves.
                    let text = &person.client.text;
                    let line_end = text.chars().take_while(|&c| c != '\n').count() as u64;
                    let mut keystroke = OperationSeq::default();
                    keystroke.retain(line_end);
                    keystroke.insert(&letter.to_string());
                    keystroke.retain(text.len_chars() as u64 - line_end);
                    if let Err(why) = person.edit(keystroke).await {
                        break why;
                    }
                    report.acknowledged += 1;
                    report.typed.push(letter);
                }
                received = person.receive() => {
                    if let Err(why) = received {
                        break why;
                    }
                }
            }
        };
        report.add(person.heard);
        report.dropped(dropped);
    }
}
