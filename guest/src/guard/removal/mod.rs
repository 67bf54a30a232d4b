//! The removal rule: a person is asked before an edit that would take away
//! most of a pad, counting what was taken from the same pad lately, so that
//! several harmless-looking calls cannot add up to one that would have asked.
//!
//! What an edit removes is measured in code points, per replaced piece, as
//! the old text's length minus what it shares with its replacement at the
//! start and at the end: fixing a typo removes a character or two, while
//! replacing a sentence with unrelated text removes the whole sentence.
//! (Net loss would not do: an equal-length overwrite removes nothing net.)
//!
//! The record is the pad's own history ([`Authorship`]), which every
//! process, replica and host sees alike. An edit asks when the removals
//! counted there, this edit's included, exceed [`MAX_REMOVED_CHARS`], or half
//! of the pad as others left it: its characters that no writer of this
//! server's inserted, with the counted removals of such characters put back.
//! What counts:
//!
//! - removals by every connection that may be this server's: one that has
//!   left the pad (its name is gone with it), one named `rustpad-mcp`, one
//!   that never said who it is; not those of people at work in the pad now
//!   under another name, and not those of a connection carrying the mark of
//!   an approved edit (a person saw them);
//! - within the window: the stretch of history holding the last
//!   [`WINDOW_EDITS`] entries of unmarked connections (people, mostly) that
//!   changed the text, and the last [`WINDOW_CHARS`] characters they
//!   inserted or removed, whichever reaches further back, and everything
//!   after it. This server's own writes are marked, and entries that change
//!   nothing do not count, so nothing a model does through it moves the
//!   window on; people typing a page or so do.
//!
//! Who inserted the text matters ([`Credit`]), read from the history:
//!
//! - *own* text, which a write of this process's inserted (the host's record
//!   of the connections it wrote over, checked against the history: see
//!   `rustpad::authorship`): revising a draft of one's own takes nothing of
//!   anyone else's, so removing it does not count against the half; it is
//!   left out of the pad's size too, so padding a pad first does not dilute
//!   the rule. Hosts that keep nothing have no such record, and no own text.
//! - *marked* text, which any other writer of rustpad-mcp's inserted:
//!   another deployment's (a person's assistant writing a draft through its
//!   own server), this one's where it keeps no record (an earlier process, a
//!   host that keeps nothing, a write the record has let go of), or text of
//!   someone who copied a mark. Marks carry no key, so it cannot be told
//!   whose, and it is treated both ways that are safe: removing it counts,
//!   against half of all the marked text the pad has held lately (what is
//!   there, and the counted removals of it), as a person's text counts
//!   against half of theirs; and it is left out of the people's share, so
//!   padding through any deployment does not dilute the rule for people's
//!   text.
//! - the rest, people's text: the half above.
//!
//! Removals sent at the same moment are judged one after the other: a
//! call that would remove text first takes its place in Rustpad's order of
//! writes and waits for every write of this server's marked before it
//! (`rustpad::order`); a write still unfinished after [`QUEUE_SECONDS`]
//! makes the call ask. Where the host keeps a tally (rustpad-mcp's own
//! host: what this process removed from the pad without asking in the last
//! [`TALLY_WINDOW_SECONDS`]), what it holds that the history does not show
//! (older than the window, or made before Rustpad forgot the pad) is added
//! to the count; each amount notes the Rustpad instance and connection it
//! was made over, so what the history shows is not counted twice. The
//! host's turn for the pad makes removals from one process decide one at
//! a time. A count that cannot be read (a history too long to follow, a
//! full tally) asks, and a removal the tally cannot record is not made
//! without asking.
//!
//! [`MAX_REMOVED_CHARS`] bounds every removal whoever wrote the text.

mod change;

use std::collections::HashSet;

use operational_transform::OperationSeq;

use crate::digest;
use crate::grants::tally::{self, Amount, Turn};
use crate::rustpad::authorship::{Authorship, Credit};
use crate::rustpad::socket::Queue;
use crate::text::{count, count_as};
pub use change::Change;

/// Text-changing entries of unmarked connections that the window spans (see above).
pub const WINDOW_EDITS: u64 = 1_000;
/// Characters those entries inserted or removed that the window spans: a
/// page or so.
pub const WINDOW_CHARS: u64 = 3_000;
/// How long the host's tally keeps a removal, where there is one.
pub const TALLY_WINDOW_SECONDS: u32 = 15 * 60;
/// Removals above this many characters always ask, whatever the pad's size.
pub const MAX_REMOVED_CHARS: u64 = 10_000;
/// Removals of more than one part in this many of the pad ask (a half).
pub const MAX_REMOVED_PARTS: u64 = 2;
/// How long a removal waits for the writes marked before it to finish, and
/// for the host's turn, before it asks instead.
pub const QUEUE_SECONDS: u64 = 5;

/// The share [`MAX_REMOVED_PARTS`] names, as the docs say it.
pub fn share_in_words() -> &'static str {
    match MAX_REMOVED_PARTS {
        2 => "half",
        3 => "a third",
        4 => "a quarter",
        _ => "a part",
    }
}

/// The records a removal is judged by, for one pad.
pub struct Ledger<'a> {
    pad: &'a str,
    history: Option<&'a Authorship>,
    /// Whether a connection belongs to a person at work in the pad now.
    at_work: &'a dyn Fn(u64) -> bool,
    /// Whether the writes marked before this one had finished.
    queue: Queue,
    /// The Rustpad instance (its start time) and this write's connection,
    /// as the tally notes where a removal was made; None where no tally is
    /// kept or the instance is not known.
    made_over: Option<(u64, u64)>,
}

impl<'a> Ledger<'a> {
    /// The ledger of pad `pad`, from its history as a session folded it
    /// (None: the session did not follow it, and every removal asks).
    pub fn of(
        pad: &'a str,
        history: Option<&'a Authorship>,
        at_work: &'a dyn Fn(u64) -> bool,
    ) -> Ledger<'a> {
        Ledger {
            pad,
            history,
            at_work,
            queue: Queue::Clear,
            made_over: None,
        }
    }

    /// The same, for a write that queued behind the writes marked before it
    /// with this outcome (see `PadSocket::queue`).
    pub fn queued(self, queue: Queue) -> Ledger<'a> {
        Ledger { queue, ..self }
    }

    /// The same, for a write over connection `connection` of the Rustpad
    /// instance that started at `started`.
    pub fn made_over(self, started: u64, connection: u64) -> Ledger<'a> {
        Ledger {
            made_over: Some((started, connection)),
            ..self
        }
    }

    /// Judges `operation` (against the pad as it stands, `pad_chars`
    /// characters) from the history and the host's tally, holding the
    /// host's turn for the pad from here until the [`Removal`] is dropped
    /// or [`Removal::give_back_turn`] is called.
    pub fn judge(&self, pad_chars: usize, operation: &OperationSeq) -> Removal {
        let change = Change::of_operation(operation);
        let credit = self
            .history
            .and_then(|history| history.removed_by(operation))
            .unwrap_or_default();
        if change.removed == 0 {
            return self.measure(pad_chars, change, credit, Some(&[]), None);
        }
        let key = tally_key(self.pad);
        let turn = tally::take_turn(&key, (QUEUE_SECONDS * 1000) as u32);
        let tallied = turn.as_ref().and_then(|_| {
            let read = Amount {
                value: 0,
                made_at: String::new(),
            };
            tally::add(&key, &read, TALLY_WINDOW_SECONDS)
        });
        let mut removal = self.measure(pad_chars, change, credit, tallied.as_deref(), turn);
        removal.waited_for_turn = removal.turn.is_none();
        removal
    }

    /// The same, with who inserted what it removes (`credit`), what the
    /// host's tally holds for the pad (None: it could not say) and the turn.
    fn measure(
        &self,
        pad_chars: usize,
        change: Change,
        credit: Credit,
        tallied: Option<&[Amount]>,
        turn: Option<Turn>,
    ) -> Removal {
        let history = self.history.and_then(|history| self.counted(history));
        let tallied = tallied.map(|amounts| match &history {
            Some(counted) => self.not_shown(amounts, counted),
            None => amounts.iter().map(|amount| amount.value).sum(),
        });
        let in_text = self
            .history
            .map_or_else(Credit::default, Authorship::in_text);
        let counted = history.clone().unwrap_or_default();
        let removed = change.removed as u64;
        let credit = Credit {
            own: credit.own.min(removed),
            marked: credit.marked.min(removed - credit.own.min(removed)),
        };
        Removal {
            pad: self.pad.to_string(),
            change,
            credit,
            pad_chars: pad_chars as u64,
            // What only the tally holds is not put back: the session's
            // text may still hold it (a snapshot taken before that
            // removal landed), and counting it there too would dilute the
            // rule.
            share_of: Shares {
                people: (pad_chars as u64).saturating_sub(in_text.own + in_text.marked)
                    + counted.people,
                marked: in_text.marked + counted.marked,
            },
            history: history.map(|counted| Shares {
                people: counted.people,
                marked: counted.marked,
            }),
            counted_all: counted.all,
            tallied,
            queue: self.queue,
            turn,
            waited_for_turn: false,
            made_at: self
                .made_over
                .map_or_else(String::new, |(started, connection)| {
                    made_at(started, connection)
                }),
        }
    }

    /// The removals that count, from the history.
    fn counted(&self, history: &Authorship) -> Option<Counted> {
        let removals = history.removals()?;
        let (entries, chars) = history.unmarked_changes();
        let mut counted = Counted::default();
        for removal in removals.iter().rev() {
            let moved_on = entries - removal.unmarked_through >= WINDOW_EDITS
                && chars - removal.unmarked_chars_through >= WINDOW_CHARS;
            if moved_on {
                break;
            }
            if removal.class.approved() || (self.at_work)(removal.author) {
                continue;
            }
            counted.all += removal.chars;
            counted.marked += removal.credit.marked;
            counted.people += removal.chars - removal.credit.own - removal.credit.marked;
            counted.authors.insert(removal.author);
        }
        Some(counted)
    }

    /// What the tally holds that the counted history does not show: an
    /// amount noted over a connection of this Rustpad instance whose
    /// removals are counted is in the history already.
    fn not_shown(&self, amounts: &[Amount], counted: &Counted) -> u64 {
        let shown: HashSet<String> = match self.made_over {
            Some((started, _)) => counted
                .authors
                .iter()
                .map(|author| made_at(started, *author))
                .collect(),
            None => HashSet::new(),
        };
        amounts
            .iter()
            .filter(|amount| amount.made_at.is_empty() || !shown.contains(&amount.made_at))
            .map(|amount| amount.value)
            .sum()
    }
}

/// The tally's note of where a removal was made.
fn made_at(started: u64, connection: u64) -> String {
    format!("{started}/{connection}")
}

/// The host's tally key for a pad's unasked removals (opaque to the host).
fn tally_key(pad: &str) -> String {
    digest::digest(&["removed", pad])
}

/// Removals the history counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Counted {
    all: u64,
    /// Of people's text (no marked writer had inserted it).
    people: u64,
    /// Of marked text (see the module's text).
    marked: u64,
    /// The connections that made them.
    authors: HashSet<u64>,
}

/// An amount for each share the rule keeps: people's text, and marked text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Shares {
    people: u64,
    marked: u64,
}

/// An edit's removals measured against the pad and the recent past.
#[derive(Debug)]
pub struct Removal {
    pad: String,
    change: Change,
    /// Of what it removes, the own and the marked text.
    credit: Credit,
    pad_chars: u64,
    /// Each share as the pad's history holds it lately: the text there and
    /// its counted removals, put back (see the module's text).
    share_of: Shares,
    /// What the history counts of each share's text; None: it could not
    /// be read.
    history: Option<Shares>,
    /// Everything the history counts, whoever wrote it.
    counted_all: u64,
    /// This process's unasked removals the history does not show, where
    /// the host keeps them (0 where none is kept); None: the host could not
    /// say.
    tallied: Option<u64>,
    queue: Queue,
    /// The host's turn for the pad, while this removal holds it.
    turn: Option<Turn>,
    /// The turn did not come in time.
    waited_for_turn: bool,
    /// Where it is made, as the tally notes it.
    made_at: String,
}

/// Every removal counted, this one's included: in all, and of each share.
struct Totals {
    all: u64,
    gone: Shares,
}

impl Removal {
    /// The characters this edit removes.
    pub fn removed(&self) -> usize {
        self.change.removed
    }

    /// What it removes of each share.
    fn own_shares(&self) -> Shares {
        Shares {
            people: self.change.removed as u64 - self.credit.own - self.credit.marked,
            marked: self.credit.marked,
        }
    }

    /// Every removal counted, this one's included; None when a record
    /// cannot be read. What the tally adds is counted as people's text,
    /// which it may be.
    fn totals(&self) -> Option<Totals> {
        let history = self.history?;
        let tallied = self.tallied?;
        let this = self.own_shares();
        Some(Totals {
            all: self.counted_all + tallied + self.change.removed as u64,
            gone: Shares {
                people: history.people + tallied + this.people,
                marked: history.marked + this.marked,
            },
        })
    }

    /// Whether a person must approve this edit.
    pub fn needs_person(&self) -> bool {
        if self.change.removed == 0 {
            return false;
        }
        if self.queue != Queue::Clear || self.waited_for_turn {
            return true;
        }
        let Some(totals) = self.totals() else {
            return true;
        };
        let this = self.own_shares();
        let past_half = |gone: u64, of: u64| gone * MAX_REMOVED_PARTS > of;
        totals.all > MAX_REMOVED_CHARS
            || (this.people > 0
                && self.share_of.people > 0
                && past_half(totals.gone.people, self.share_of.people))
            || (this.marked > 0 && past_half(totals.gone.marked, self.share_of.marked))
    }

    /// Takes this removal, about to be made unasked, into the host's tally
    /// (before it is made, so that one whose outcome stays unknown counts
    /// too); false when the tally cannot keep it, and then it must not be
    /// made without asking.
    pub fn record_unasked(&self) -> bool {
        if self.change.removed == 0 {
            return true;
        }
        let amount = Amount {
            value: self.change.removed as u64,
            made_at: self.made_at.clone(),
        };
        tally::add(&tally_key(&self.pad), &amount, TALLY_WINDOW_SECONDS).is_some()
    }

    /// Gives the host's turn for the pad back, before a person is asked.
    pub fn give_back_turn(&mut self) {
        self.turn = None;
    }

    /// What the dialog says about the removal: counts, never content.
    pub fn facts(&self) -> Vec<String> {
        let removed = self.change.removed;
        let mut facts = vec![format!(
            "This removes {removed} of the pad's {}.",
            count(self.pad_chars, "character")
        )];
        if self.credit.own > 0 {
            facts.push(format!(
                "Of these, {} text this server wrote, which counts only toward the limit of {MAX_REMOVED_CHARS}.",
                count_as(self.credit.own, "is", "are")
            ));
        }
        if self.credit.marked > 0 {
            facts.push(format!(
                "Of these, {} text another writer of rustpad-mcp's put there (another server, or this one at an earlier time), which counts as its author's.",
                count_as(self.credit.marked, "is", "are")
            ));
        }
        if let Queue::Behind { writers } = self.queue {
            facts.push(format!(
                "{} of this server's to this pad, begun just before this one, had not finished after {QUEUE_SECONDS} seconds, so what {} could not be counted.",
                match writers {
                    1 => "Another write".to_string(),
                    n => format!("{n} other writes"),
                },
                if writers == 1 { "it removes" } else { "they remove" }
            ));
        }
        if self.waited_for_turn {
            facts.push(format!(
                "Another call of this server's was deciding a removal from this pad and had not finished after {QUEUE_SECONDS} seconds."
            ));
        }
        let Some(totals) = self.totals() else {
            facts.push(
                "This server could not read what was removed from this pad lately (the pad's history is longer than it follows, or this server's count is full), so it asks."
                    .into(),
            );
            return facts;
        };
        let this = self.own_shares();
        if this.people > 0
            && (totals.gone.people > this.people || self.share_of.people != self.pad_chars)
        {
            facts.push(format!(
                "With what was removed from the pad lately without a person's approval (by this server, or by connections that have since left it), {} would be gone, of the {} that no writer of rustpad-mcp's wrote.",
                count(totals.gone.people, "character"),
                self.share_of.people
            ));
        }
        if this.marked > 0 {
            facts.push(format!(
                "Of the {} that writers of rustpad-mcp's other than this server put in the pad lately, {} would be gone.",
                count(self.share_of.marked, "character"),
                totals.gone.marked
            ));
        }
        facts
    }
}

#[cfg(test)]
mod tests;
