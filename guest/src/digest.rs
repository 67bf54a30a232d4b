//! Digests that name texts and values without holding them: a pad's text in
//! a base, an approval's arguments and binding. SHA-256 throughout; none of
//! them is a secret (sealing, which is, lives in `guard::seal`).

use std::fmt;

use ropey::Rope;
use sha2::digest::common::hazmat::{SerializableState, SerializedState};
use sha2::{Digest, Sha256};

/// A hex digest of ordered parts; JSON keeps the parts unambiguous.
pub fn digest(parts: &[&str]) -> String {
    hex(&Sha256::digest(
        serde_json::to_string(parts).unwrap_or_default().as_bytes(),
    ))
}

/// The first 16 hex digits of a text's SHA-256: enough to tell contents apart.
pub fn fingerprint(text: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(text.as_bytes());
    fingerprint_of(hasher)
}

/// [`fingerprint`] of what `hasher` has taken in, for a text given in
/// pieces (or two texts that begin alike, sharing the hashing of their
/// beginning: a hasher can be cloned half way).
pub fn fingerprint_of(hasher: Sha256) -> String {
    hex(&hasher.finalize())[..16].to_string()
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes hex digits (either case) spell; none for anything else.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok())
        .collect()
}

/// A fingerprint's hashing stopped after a text's first `chars` code
/// points, to go on from there when the text has grown: a pad appended to
/// call after call is then hashed once, not from its start at every call.
/// It stays true only while nothing changes those code points, which
/// `rustpad::ot::Document` sees to as it folds each edit.
#[derive(Clone, Default)]
pub struct HashedStart {
    chars: usize,
    hasher: Sha256,
}

impl HashedStart {
    /// Code points taken in so far.
    pub fn chars(&self) -> usize {
        self.chars
    }

    /// Takes in `text`'s code points from where this stopped up to `to`;
    /// `text` must begin with the ones taken in already.
    pub fn extend(&mut self, text: &Rope, to: usize) {
        let to = to.min(text.len_chars());
        if to <= self.chars {
            return;
        }
        let bytes = text.char_to_byte(self.chars)..text.char_to_byte(to);
        for chunk in text.byte_slice(bytes).chunks() {
            self.hasher.update(chunk.as_bytes());
        }
        self.chars = to;
    }

    /// The fingerprint of the text taken in so far.
    pub fn fingerprint(&self) -> String {
        fingerprint_of(self.hasher.clone())
    }

    /// This, as a line of text may carry it: `<chars>.<hash state in hex>`.
    pub fn save(&self) -> String {
        format!("{}.{}", self.chars, hex(&self.hasher.serialize()))
    }

    /// Reads what [`HashedStart::save`] wrote; none for anything else.
    pub fn restore(saved: &str) -> Option<HashedStart> {
        let (chars, state) = saved.split_once('.')?;
        let chars = chars
            .parse()
            .ok()
            .filter(|n: &usize| n.to_string() == chars)?;
        let bytes = unhex(state)?;
        let state = SerializedState::<Sha256>::try_from(bytes.as_slice()).ok()?;
        let hasher = Sha256::deserialize(&state).ok()?;
        Some(HashedStart { chars, hasher })
    }
}

impl fmt::Debug for HashedStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HashedStart({} code points)", self.chars)
    }
}
