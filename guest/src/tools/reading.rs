//! How pads are read outside a tool call's own session, and the one way MCP
//! reaches a pad: its whole text as every read shows it (fetched over HTTP,
//! control characters removed, cut to fit one result), its revision now, and
//! a round of watching it for other people's changes from an invisible look.
//! `get_document` and the pad resources read here, and each says in its own
//! words what was done; the subscriptions watch here.

use std::time::{Duration, Instant};

use crate::grants::websocket::Connection;
use crate::rustpad::watch::{Look, Reached, Seen};
use crate::rustpad::{Error, http, url::RustpadUrl};
use crate::text;

/// What a read of a whole pad shows.
pub struct WholeText {
    /// The text, cleaned and cut to the budget.
    pub shown: String,
    /// `(shown, total)` characters, when it was cut.
    pub cut: Option<(usize, usize)>,
    /// How many control characters were removed.
    pub removed: usize,
    /// Rustpad sent nothing: the pad is empty, or never existed, or expired.
    pub empty: bool,
}

/// Pad `id`'s whole text, within `budget` characters of JSON.
pub fn whole_text(url: &RustpadUrl, id: &str, budget: usize) -> Result<WholeText, Error> {
    let raw = http::pad_text(url, id)?;
    let cleaned = text::clean_text(&raw);
    let (shown, cut) = text::fit_json_budget(&cleaned, budget);
    Ok(WholeText {
        shown: shown.to_string(),
        cut,
        removed: text::char_len(&raw) - text::char_len(&cleaned),
        empty: raw.is_empty(),
    })
}

/// A pad on this server's Rustpad, as MCP's resources and subscriptions
/// name it (`id` checked already).
#[derive(Clone, Copy)]
pub struct Pad<'a> {
    url: &'a RustpadUrl,
    id: &'a str,
}

/// How one round of watching a pad ended.
pub struct Watched {
    /// Someone else changed the pad during the round.
    pub changed: bool,
    /// Where the next round goes on from.
    pub cursor: String,
    /// The look's connection, still open, for the next round to go on with.
    pub look: Connection,
}

impl<'a> Pad<'a> {
    pub fn new(url: &'a RustpadUrl, id: &'a str) -> Pad<'a> {
        Pad { url, id }
    }

    pub fn id(&self) -> &'a str {
        self.id
    }

    /// The link people open the pad with.
    pub fn share_link(&self) -> String {
        self.url.share_link(self.id)
    }

    /// The pad's whole text, within `budget` characters of JSON.
    pub fn whole_text(&self, budget: usize) -> Result<WholeText, Error> {
        whole_text(self.url, self.id, budget)
    }

    /// The pad's revision now, from an invisible look.
    pub fn revision_now(&self) -> Result<u64, Error> {
        let look = Look::open(self.url, self.id, None)?;
        let revision = look.revision();
        look.close();
        Ok(revision)
    }

    /// Watches the pad for one round (of `round` at most) from `from`:
    /// where the last round left off, with its look's connection if one was
    /// held; none: from now.
    ///
    /// A look handed back goes on where it stood and takes in what came; one
    /// that ended meanwhile (Rustpad restarted, or a message bigger than the
    /// host lets a held look take) is joined afresh from where it stood, which
    /// tells a restart and reads what was missed. A round without a look joins;
    /// it waits for a change only when its cursor says an earlier round handed
    /// a look back which the host did not keep (so a host that keeps none is
    /// not made to join again and again).
    pub fn watch_round(
        &self,
        from: Option<(String, Option<Connection>)>,
        round: Duration,
    ) -> Result<Watched, String> {
        let (url, id) = (self.url, self.id);
        let (cursor, connection) = match from {
            Some((cursor, connection)) => (Some(cursor), connection),
            None => (None, None),
        };
        let reached = match cursor.as_deref().map(str::parse::<Reached>) {
            None => None,
            Some(Ok(reached)) => Some(reached),
            Some(Err(())) => return Err("the cursor is not one this component gave".into()),
        };
        let resumed = match (connection, reached) {
            (
                Some(connection),
                Some(Reached {
                    revision,
                    length: Some(length),
                }),
            ) => {
                let mut look = Look::resume(connection, id, revision, length);
                match look.what_came() {
                    Ok(seen) => Some(Ok((look, seen))),
                    Err(_) => {
                        look.close();
                        None
                    }
                }
            }
            (Some(connection), _) => {
                connection.close();
                None
            }
            (None, _) => None,
        };
        let seen = resumed.unwrap_or_else(|| {
            let was_handed_back = reached.is_some_and(|reached| reached.length.is_some());
            Look::open(url, id, reached.map(|reached| reached.revision)).and_then(|mut look| {
                let seen = if was_handed_back {
                    look.next_change(Instant::now() + round)
                } else {
                    look.what_came()
                };
                match seen {
                    Ok(seen) => Ok((look, seen)),
                    Err(error) => {
                        look.close();
                        Err(error)
                    }
                }
            })
        });
        match seen {
            Ok((look, seen)) => Ok(Watched {
                changed: matches!(seen, Seen::Changed),
                cursor: look.reached().to_string(),
                look: look.into_connection(),
            }),
            Err(error) => Err(error.message().to_string()),
        }
    }
}
