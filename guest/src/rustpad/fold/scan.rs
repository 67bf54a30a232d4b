//! The fast reader: a History exactly as Rustpad's serializer writes it,
//! `{"History":{"start":N,"operations":[{"id":N,"operation":[parts]},…]}}`
//! with no whitespace, read byte by byte.
//!
//! It is sure only of what it fully understands: that exact shape, whole
//! numbers written plainly (no sign on ids, no leading zero, no fraction or
//! exponent), non-zero parts within a document's reach, non-empty strings
//! (escapes decoded as JSON decodes them), and edits that fit the document.
//! On anything else — whitespace, another key order, a refusal — it answers
//! [`Scanned::Unsure`] and the caller reads the History with serde, which
//! decides. So it never needs to know how serde words a refusal, only what
//! serde surely accepts.

use std::time::Instant;

use super::super::marks::Marked;
use super::super::ot::MAX_PART;
use super::{Folding, Lengths};
use crate::text::MAX_DOCUMENT_CHARS;

/// How the scan ended.
pub(super) enum Scanned {
    /// Read to the end, every edit folded.
    Folded(Lengths),
    /// The deadline passed.
    Late,
    /// Not the plain shape, or something to refuse: read it the careful way.
    Unsure,
}

/// Folds `entries` like [`super::fold_lengths`], following each entry's
/// connection in `marked`, or says it is not sure (then `marked` may have
/// followed some of them: the caller puts it back).
pub(super) fn fold(
    entries: &str,
    from: Lengths,
    skip: u64,
    by: Folding,
    marked: Option<&mut Marked>,
) -> Scanned {
    let mut scanner = Scanner::new(entries);
    let fold = Fold { from, skip, by };
    finish(scanner.entries(&fold, marked).and_then(|lengths| {
        scanner.end()?;
        Ok(lengths)
    }))
}

/// Folds a whole frame onto a pad at `from`, or says it is not sure
/// (another message, another shape, a gap in the history): then the frame
/// goes the careful way, whole.
pub(super) fn history_frame(
    frame: &str,
    from: Lengths,
    by: Folding,
    marked: Option<&mut Marked>,
) -> Scanned {
    let mut scanner = Scanner::new(frame);
    finish((|| {
        scanner.literal(br#"{"History":{"start":"#)?;
        let start = scanner.whole_number()?;
        if start > from.revision {
            return Err(Stop::Unsure);
        }
        scanner.literal(br#","operations":"#)?;
        let fold = Fold {
            from,
            skip: from.revision - start,
            by,
        };
        let lengths = scanner.entries(&fold, marked)?;
        scanner.literal(b"}}")?;
        scanner.end()?;
        Ok(lengths)
    })())
}

fn finish(outcome: Step<Lengths>) -> Scanned {
    match outcome {
        Ok(lengths) => Scanned::Folded(lengths),
        Err(Stop::Late) => Scanned::Late,
        Err(Stop::Unsure) => Scanned::Unsure,
    }
}

/// What the entries are folded onto, and how.
struct Fold {
    from: Lengths,
    skip: u64,
    by: Folding,
}

enum Stop {
    Late,
    Unsure,
}

type Step<T> = Result<T, Stop>;

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Scanner<'a> {
        Scanner {
            bytes: text.as_bytes(),
            at: 0,
        }
    }

    /// The entries array, folded onto `fold.from`, each followed in `marked`.
    fn entries(&mut self, fold: &Fold, mut marked: Option<&mut Marked>) -> Step<Lengths> {
        let mut lengths = fold.from;
        self.literal(b"[")?;
        if self.take(b']') {
            return Ok(lengths);
        }
        let mut index = 0u64;
        loop {
            self.literal(br#"{"id":"#)?;
            let id = self.whole_number()?;
            self.literal(br#","operation":["#)?;
            let (base, target, keeps) = self.parts()?;
            self.literal(b"}")?;
            if index >= fold.skip {
                if index.is_multiple_of(fold.by.check_every) && Instant::now() > fold.by.deadline {
                    return Err(Stop::Late);
                }
                if base != lengths.length || target > MAX_DOCUMENT_CHARS as u64 {
                    return Err(Stop::Unsure);
                }
                lengths.length = target;
                lengths.revision += 1;
                if Some(id) == fold.by.me {
                    lengths.ours += 1;
                    lengths.last_ours = Some(lengths.revision);
                }
                if let Some(marked) = marked.as_deref_mut() {
                    marked.follow(id, keeps);
                }
            }
            index += 1;
            if self.take(b']') {
                return Ok(lengths);
            }
            self.literal(b",")?;
        }
    }

    /// The end of the text.
    fn end(&self) -> Step<()> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(Stop::Unsure)
        }
    }

    /// Takes `expected` if it comes next. Compared eight bytes at a time:
    /// the literals are constants, and a byte loop per entry would be most of
    /// the scan's work.
    #[inline(always)]
    fn literal(&mut self, expected: &[u8]) -> Step<()> {
        let rest = &self.bytes[self.at..];
        if rest.len() < expected.len() {
            return Err(Stop::Unsure);
        }
        let word = |bytes: &[u8]| {
            let mut padded = [0u8; 8];
            padded[..bytes.len()].copy_from_slice(bytes);
            u64::from_le_bytes(padded)
        };
        let same = expected
            .chunks(8)
            .zip(rest.chunks(8))
            .all(|(want, got)| word(want) == word(&got[..want.len()]));
        if !same {
            return Err(Stop::Unsure);
        }
        self.at += expected.len();
        Ok(())
    }

    /// Takes `byte` if it comes next; says whether it did.
    fn take(&mut self, byte: u8) -> bool {
        let next = self.bytes.get(self.at) == Some(&byte);
        self.at += usize::from(next);
        next
    }

    /// An unsigned whole number as JSON writes one: no sign, no leading
    /// zero, no fraction or exponent, within `u64`.
    fn whole_number(&mut self) -> Step<u64> {
        let digits = self.bytes[self.at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let number = &self.bytes[self.at..self.at + digits];
        self.at += digits;
        let plain = match number {
            [] => false,
            [b'0', _, ..] => false,
            _ => !matches!(self.bytes.get(self.at), Some(b'.' | b'e' | b'E')),
        };
        if !plain || digits > 19 {
            // 20 digits may still fit; the careful reader decides.
            return Err(Stop::Unsure);
        }
        Ok(number
            .iter()
            .fold(0u64, |value, digit| value * 10 + u64::from(digit - b'0')))
    }

    /// An operation's parts, after its `[`, through its `]`: (base, target,
    /// whether it only retains, changing nothing).
    fn parts(&mut self) -> Step<(u64, u64, bool)> {
        let (mut base, mut target, mut keeps) = (0u64, 0u64, true);
        if self.take(b']') {
            return Ok((0, 0, true));
        }
        loop {
            match self.bytes.get(self.at) {
                Some(b'"') => {
                    self.at += 1;
                    target += self.string_chars()?;
                    keeps = false;
                }
                Some(b'-') => {
                    self.at += 1;
                    base += self.part_length()?;
                    keeps = false;
                }
                _ => {
                    let retained = self.part_length()?;
                    base += retained;
                    target += retained;
                }
            }
            if self.take(b']') {
                return Ok((base, target, keeps));
            }
            self.literal(b",")?;
        }
    }

    /// A retain's or delete's length: a whole number from 1 to `MAX_PART`.
    fn part_length(&mut self) -> Step<u64> {
        match self.whole_number()? {
            n @ 1..=MAX_PART => Ok(n),
            _ => Err(Stop::Unsure),
        }
    }

    /// The code points of a non-empty string, after its opening quote and
    /// through its closing one, counted as JSON decodes it.
    fn string_chars(&mut self) -> Step<u64> {
        let mut chars = 0u64;
        loop {
            // Plain text up to the next quote, escape or control character.
            let rest = &self.bytes[self.at..];
            let plain = rest
                .iter()
                .position(|b| matches!(b, b'"' | b'\\' | 0..0x20))
                .ok_or(Stop::Unsure)?;
            // A code point starts at every byte that does not continue one.
            chars += rest[..plain].iter().filter(|b| **b & 0xC0 != 0x80).count() as u64;
            self.at += plain + 1;
            match rest[plain] {
                b'"' => break,
                b'\\' => chars += self.escape()?,
                _ => return Err(Stop::Unsure),
            }
        }
        if chars == 0 {
            return Err(Stop::Unsure);
        }
        Ok(chars)
    }

    /// One escape, after its backslash: always one code point.
    fn escape(&mut self) -> Step<u64> {
        match self.bytes.get(self.at) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                self.at += 1;
                Ok(1)
            }
            Some(b'u') => {
                self.at += 1;
                match self.hex_unit()? {
                    // A high surrogate counts only with its low half right after it.
                    0xD800..0xDC00 => {
                        self.literal(b"\\u")?;
                        match self.hex_unit()? {
                            0xDC00..0xE000 => Ok(1),
                            _ => Err(Stop::Unsure),
                        }
                    }
                    0xDC00..0xE000 => Err(Stop::Unsure),
                    _ => Ok(1),
                }
            }
            _ => Err(Stop::Unsure),
        }
    }

    /// Four hex digits of a `\u` escape.
    fn hex_unit(&mut self) -> Step<u32> {
        let digits = self.bytes.get(self.at..self.at + 4).ok_or(Stop::Unsure)?;
        let mut unit = 0u32;
        for digit in digits {
            let value = (*digit as char).to_digit(16).ok_or(Stop::Unsure)?;
            unit = unit * 16 + value;
        }
        self.at += 4;
        Ok(unit)
    }
}
