//! A base: the name of one text of a pad that a model has read, so that it
//! can later state an edit against exactly that text.
//!
//! Rustpad numbers a pad's revisions from 0 and forgets them when it restarts
//! or the pad expires; after that the same number names another text. So a
//! base carries the revision and a fingerprint of the whole text at it, and a
//! base only counts when both still match the pad's history. It is not a
//! secret and needs no seal: anyone can compute one, and a forged base can
//! only name a text the pad really had.

use std::fmt;

use ropey::Rope;

use super::since::Since;
use crate::digest::{self, HashedStart};

/// Hex digits of the fingerprint.
const FINGERPRINT_DIGITS: usize = 16;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Base {
    pub revision: u64,
    fingerprint: String,
}

impl Base {
    /// The base naming `text` at `revision`.
    pub fn of(revision: u64, text: &str) -> Base {
        Base {
            revision,
            fingerprint: digest::fingerprint(text),
        }
    }

    /// The bases naming `before` at `revision` and `after` at the next
    /// revision, texts that agree on their first `same` code points: the
    /// hashing of that beginning is done once for both, straight from the
    /// ropes, and goes on from `known` (what hashed `before`'s start
    /// earlier) where that reaches no further than `same`. A write's two
    /// bases on a long pad cost one pass over it rather than two, and an
    /// append on a connection kept between calls only the text it adds.
    pub fn of_edit(
        revision: u64,
        before: &Rope,
        after: &Rope,
        same: usize,
        known: Option<&HashedStart>,
    ) -> (Base, Base) {
        let same = same.min(before.len_chars());
        let mut beginning = known
            .filter(|known| known.chars() <= same)
            .cloned()
            .unwrap_or_default();
        beginning.extend(before, same);
        let of = |revision, text: &Rope| {
            let mut whole = beginning.clone();
            whole.extend(text, text.len_chars());
            Base {
                revision,
                fingerprint: whole.fingerprint(),
            }
        };
        (of(revision, before), of(revision + 1, after))
    }

    /// Reads a base as [`fmt::Display`] writes it: `r<revision>.<16 hex digits>`.
    pub fn parse(text: &str) -> Option<Base> {
        let (revision, fingerprint) = text.strip_prefix('r')?.split_once('.')?;
        let revision = plain_number(revision, 19)?;
        let hex = fingerprint.len() == FINGERPRINT_DIGITS
            && fingerprint
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            return None;
        }
        Some(Base {
            revision,
            fingerprint: fingerprint.to_string(),
        })
    }

    /// Whether `text` is the text this base names.
    pub fn names(&self, text: &str) -> bool {
        digest::fingerprint(text) == self.fingerprint
    }

    /// The text this base names, from a session that recorded the pad since
    /// the base's revision, or why the pad no longer has it.
    pub fn find<'a>(&self, since: &'a Since) -> Result<&'a Rope, Stale> {
        match since.text() {
            None => Err(Stale::Unreached),
            Some(text) if !self.names(&text.to_string()) => Err(Stale::Rewritten),
            Some(text) => Ok(text),
        }
    }
}

/// Why a base no longer names a text of its pad. Both mean Rustpad restarted
/// or the pad expired after the read; each tool says what to do about it.
#[derive(Debug, PartialEq, Eq)]
pub enum Stale {
    /// The pad's history no longer reaches the base's revision.
    Unreached,
    /// The revision exists again but holds another text.
    Rewritten,
}

/// A plain decimal number of at most `max_digits` digits, no sign and no
/// leading zero, as bases and change handles write them.
pub(super) fn plain_number(text: &str, max_digits: usize) -> Option<u64> {
    let plain = !text.is_empty()
        && text.len() <= max_digits
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    plain.then(|| text.parse().ok()).flatten()
}

impl fmt::Display for Base {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}.{}", self.revision, self.fingerprint)
    }
}

/// The JSON Schema pattern of a base, for input schemas.
pub const PATTERN: &str = "^r(0|[1-9][0-9]{0,18})\\.[0-9a-f]{16}$";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edits_two_bases_are_those_of_its_two_texts() {
        // Long enough for several rope chunks, with code points of every width.
        let before = "é🎉 line of text\n".repeat(2_000);
        let inserted = format!("{before}tail ✓\n");
        let changed_early = before.replacen('🎉', "x", 1);
        for (after, same) in [
            (&inserted, before.chars().count()),
            (&changed_early, 1),
            (&before, 0),
        ] {
            for same in [same, 0] {
                let (b, a) = Base::of_edit(
                    7,
                    &Rope::from_str(&before),
                    &Rope::from_str(after),
                    same,
                    None,
                );
                assert_eq!(b, Base::of(7, &before));
                assert_eq!(a, Base::of(8, after));
            }
        }
    }

    #[test]
    fn bases_gone_on_from_a_saved_hashing_are_those_hashed_from_the_start() {
        let before = "é🎉 line of text\n".repeat(2_000);
        let rope = Rope::from_str(&before);
        let after = Rope::from_str(&format!("{before}tail ✓\n"));
        let all = before.chars().count();
        for stop in [0, 1, 5_000, all - 1, all] {
            let mut hashed = HashedStart::default();
            hashed.extend(&rope, stop);
            let restored = HashedStart::restore(&hashed.save()).unwrap();
            assert_eq!(restored.chars(), stop);
            for same in [all, stop, 3] {
                let (b, a) = Base::of_edit(7, &rope, &after, same, Some(&restored));
                assert_eq!(b, Base::of(7, &before), "stop {stop}, same {same}");
                assert_eq!(
                    a,
                    Base::of(8, &after.to_string()),
                    "stop {stop}, same {same}"
                );
            }
        }
    }

    #[test]
    fn only_a_saved_hashing_is_restored() {
        let mut hashed = HashedStart::default();
        hashed.extend(&Rope::from_str("some text"), 4);
        let saved = hashed.save();
        let (chars, state) = saved.split_once('.').unwrap();
        assert_eq!(chars, "4");
        for bad in [
            String::new(),
            state.to_string(),
            format!("04.{state}"),
            format!("x.{state}"),
            format!("4.{}", &state[1..]),
            format!("4.+{}", &state[2..]),
            format!("4.{state}00"),
        ] {
            assert!(HashedStart::restore(&bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_base_round_trips_and_names_its_text() {
        let base = Base::of(42, "hello\n");
        let written = base.to_string();
        assert!(written.starts_with("r42."), "{written}");
        let read = Base::parse(&written).unwrap();
        assert_eq!(read, base);
        assert!(read.names("hello\n"));
        assert!(!read.names("hello"));
    }

    #[test]
    fn only_the_canonical_form_is_a_base() {
        let fingerprint = "0123456789abcdef";
        assert!(Base::parse(&format!("r0.{fingerprint}")).is_some());
        for bad in [
            format!("42.{fingerprint}"),
            format!("r.{fingerprint}"),
            format!("r042.{fingerprint}"),
            format!("r-1.{fingerprint}"),
            format!("r1.{}", fingerprint.to_uppercase()),
            format!("r1.{fingerprint}0"),
            format!("r99999999999999999999.{fingerprint}"),
            format!("r1 .{fingerprint}"),
            "r1".to_string(),
        ] {
            assert!(Base::parse(&bad).is_none(), "{bad}");
        }
    }
}
