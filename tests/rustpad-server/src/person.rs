//! A person at the keyboard, scripted: a connected editor that makes exactly
//! the edits a test hands it, each acknowledged before the call returns, with
//! the same client algorithm as the browser (the typist's [`Client`]).
//!
//! Where the typist types random keystrokes on its own schedule, a person
//! lets a test put chosen edits at chosen moments: between a model's read and
//! its write, say.

use operational_transform::OperationSeq;
use tokio_tungstenite::connect_async;

use crate::protocol::{ServerMsg, UserInfo};
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

    /// Closes the connection; the others see this person leave.
    pub async fn leave(mut self) {
        self.socket.close(None).await.ok();
    }
}
