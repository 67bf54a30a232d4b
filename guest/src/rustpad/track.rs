//! What a session keeps of the pad besides its length, chosen when it
//! opens: the text, a record from a base, who wrote what, or the edits a
//! watch hears ([`super::state::PadState`] keeps them).

/// What a session keeps of the pad besides its length.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Track {
    pub(super) text: bool,
    /// The text at this revision and every edit after it (see [`Since`](super::since::Since)).
    pub(super) since: Option<u64>,
    /// Who wrote what (see [`Authorship`](super::authorship::Authorship)), for the removal rule.
    pub(super) authorship: bool,
    /// Who made each edit after this revision (see [`Heard`](super::heard::Heard)), for a watch.
    pub(super) heard: Option<u64>,
    /// Which connections are writers of rustpad-mcp's (see
    /// [`Marked`](super::marks::Marked)), for the people a read reports:
    /// always where the text is kept, which costs far more.
    pub(super) people: bool,
}

impl Track {
    /// The length only.
    pub const LENGTH: Track = Track {
        text: false,
        since: None,
        authorship: false,
        heard: None,
        people: false,
    };
    /// The text.
    pub const TEXT: Track = Track {
        text: true,
        since: None,
        authorship: false,
        heard: None,
        people: true,
    };

    /// Whether the session keeps the text (an edit's outcome can be learnt
    /// from the history only then: see `rustpad::settle`).
    pub fn keeps_text(self) -> bool {
        self.text
    }

    /// The length, and who made each edit after `revision` (`u64::MAX`:
    /// none until [`PadState::hear_from_here`](super::state::PadState::hear_from_here)).
    pub fn edits_after(revision: u64) -> Track {
        Track::LENGTH.and_edits_after(revision)
    }

    /// The same, and who made each edit after `revision` (for a wait).
    pub fn and_edits_after(self, revision: u64) -> Track {
        Track {
            heard: Some(revision),
            ..self
        }
    }

    /// The text, and also the text at `revision` with every edit after it.
    pub fn text_since(revision: u64) -> Track {
        Track {
            since: Some(revision),
            ..Track::TEXT
        }
    }

    /// The same, recording from `revision` at the latest.
    pub fn since_at_most(self, revision: Option<u64>) -> Track {
        let since = match (self.since, revision) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Track {
            text: self.text || since.is_some(),
            since,
            ..self
        }
    }

    /// The same, and which connections are writers of rustpad-mcp's.
    pub fn with_people(self) -> Track {
        Track {
            people: true,
            ..self
        }
    }

    /// The same, and who wrote what.
    pub fn with_authorship(self) -> Track {
        Track {
            text: true,
            authorship: true,
            ..self
        }
    }
}
