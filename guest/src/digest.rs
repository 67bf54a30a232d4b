//! Digests that name texts and values without holding them: a pad's text in
//! a base, an approval's arguments and binding. SHA-256 throughout; none of
//! them is a secret (sealing, which is, lives in `guard::seal`).

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
