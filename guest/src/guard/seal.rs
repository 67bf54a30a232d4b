//! Sealing: HMAC-SHA256 over everything the guard hands a client and later
//! trusts again — the `requestState` of an `input_required` round, and the
//! two-call confirmation token.
//!
//! Both are signed, not encrypted (they hold digests and a revision, nothing
//! secret), expire, and name the revision of the pad the approval was given
//! at: the guard checks the pad's history from there (see
//! [`standing`](super::standing)), which is what makes an approval work once.
//! Any process holding the same key can verify them, so replicas behind a
//! gateway can share one key (RUSTPAD_SEAL_KEY).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::digest::hex;

type HmacSha256 = Hmac<Sha256>;

const STATE_PREFIX: &str = "v2.";
const TOKEN_REVISION_BYTES: usize = 4;
const TOKEN_CONNECTION_BYTES: usize = 8;
const TOKEN_EXPIRY_BYTES: usize = 4;
const TOKEN_MAC_BYTES: usize = 16;
/// 4 revision bytes, 8 connection bytes, 4 expiry bytes, 16 MAC bytes, in
/// hex: 64 characters.
pub const TOKEN_CHARS: usize =
    2 * (TOKEN_REVISION_BYTES + TOKEN_CONNECTION_BYTES + TOKEN_EXPIRY_BYTES + TOKEN_MAC_BYTES);

/// What a sealed `requestState` remembers between rounds.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// Digest of the tool and its arguments.
    #[serde(rename = "a")]
    pub arguments: String,
    /// Digest of the arguments and the pad as it stood at `at` (count or
    /// fingerprint, and the base naming its text).
    #[serde(rename = "b")]
    pub binding: String,
    /// The pad's revision when the person was asked.
    #[serde(rename = "t")]
    pub at: u64,
    /// Rustpad's number for the connection that asked (see [`Token`]).
    #[serde(rename = "c")]
    pub connection: u64,
    /// Single-use nonce.
    #[serde(rename = "n")]
    pub nonce: String,
    /// Expiry, Unix seconds.
    #[serde(rename = "e")]
    pub expires: u64,
    /// How many times this request was asked again because the pad changed.
    #[serde(rename = "r")]
    pub round: u32,
}

/// Why a token was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum TokenProblem {
    Malformed,
    /// Issued for other arguments, another pad state, or by another key.
    Mismatch,
    Expired,
}

pub struct Sealer {
    key: Vec<u8>,
    /// The key is this process's own: it did not exist before the process did.
    pub per_process: bool,
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

impl Sealer {
    pub fn new(key: &[u8]) -> Sealer {
        Sealer {
            key: key.to_vec(),
            per_process: false,
        }
    }

    /// A sealer whose key lives only as long as this process.
    pub fn per_process(self) -> Sealer {
        Sealer {
            per_process: true,
            ..self
        }
    }

    fn mac(&self, domain: &str, parts: &[&[u8]]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes keys of any length");
        mac.update(domain.as_bytes());
        mac.update(&[0]);
        for part in parts {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        mac
    }

    pub fn seal_state(&self, state: &State) -> String {
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(state).unwrap_or_default());
        let tag = self
            .mac("state", &[payload.as_bytes()])
            .finalize()
            .into_bytes();
        format!("{STATE_PREFIX}{payload}.{}", URL_SAFE_NO_PAD.encode(tag))
    }

    /// The state, if its seal verifies and it has not expired.
    pub fn open_state(&self, sealed: &str, now: u64) -> Option<State> {
        let (payload, tag) = sealed.strip_prefix(STATE_PREFIX)?.split_once('.')?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        self.mac("state", &[payload.as_bytes()])
            .verify_slice(&tag)
            .ok()?;
        let state: State = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
        (state.expires > now).then_some(state)
    }

    /// A token for `binding`, given at `revision` of the pad on connection
    /// `connection`, valid until `expires`; None for a revision past what a
    /// token holds.
    pub fn issue_token(
        &self,
        binding: &str,
        revision: u64,
        connection: u64,
        expires: u32,
    ) -> Option<String> {
        let revision = u32::try_from(revision).ok()?.to_be_bytes();
        let (connection, expiry) = (connection.to_be_bytes(), expires.to_be_bytes());
        let tag = self
            .mac(
                "token",
                &[binding.as_bytes(), &revision, &connection, &expiry],
            )
            .finalize()
            .into_bytes();
        let mut bytes = revision.to_vec();
        bytes.extend_from_slice(&connection);
        bytes.extend_from_slice(&expiry);
        bytes.extend_from_slice(&tag[..TOKEN_MAC_BYTES]);
        Some(hex(&bytes))
    }

    /// Checks a token against `binding` (the one it must have been issued
    /// for, at its own revision) and its expiry.
    pub fn check_token(&self, token: &Token, binding: &str, now: u64) -> Result<(), TokenProblem> {
        let revision = u32::try_from(token.revision)
            .map_err(|_| TokenProblem::Malformed)?
            .to_be_bytes();
        let (connection, expiry) = (token.connection.to_be_bytes(), token.expires.to_be_bytes());
        self.mac(
            "token",
            &[binding.as_bytes(), &revision, &connection, &expiry],
        )
        .verify_truncated_left(&token.tag)
        .map_err(|_| TokenProblem::Mismatch)?;
        if u64::from(token.expires) <= now {
            return Err(TokenProblem::Expired);
        }
        Ok(())
    }
}

/// A confirmation token as read, before it is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The pad's revision it was issued at.
    pub revision: u64,
    /// Rustpad's number for the connection that issued it.
    pub connection: u64,
    expires: u32,
    tag: Vec<u8>,
}

impl Token {
    /// Reads a token's parts; the seal is checked by [`Sealer::check_token`].
    pub fn parse(token: &str) -> Result<Token, TokenProblem> {
        let bytes = unhex(token.trim())
            .filter(|b| b.len() == TOKEN_CHARS / 2)
            .ok_or(TokenProblem::Malformed)?;
        let malformed = |_| TokenProblem::Malformed;
        let (revision, rest) = bytes.split_at(TOKEN_REVISION_BYTES);
        let (connection, rest) = rest.split_at(TOKEN_CONNECTION_BYTES);
        let (expiry, tag) = rest.split_at(TOKEN_EXPIRY_BYTES);
        Ok(Token {
            revision: u32::from_be_bytes(revision.try_into().map_err(malformed)?).into(),
            connection: u64::from_be_bytes(connection.try_into().map_err(malformed)?),
            expires: u32::from_be_bytes(expiry.try_into().map_err(malformed)?),
            tag: tag.to_vec(),
        })
    }

    /// A name for this token that no other token has: its seal.
    pub fn id(&self) -> String {
        hex(&self.tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::digest;

    fn state() -> State {
        State {
            arguments: "a".into(),
            binding: "b".into(),
            at: 7,
            connection: 3,
            nonce: "n".into(),
            expires: 100,
            round: 0,
        }
    }

    #[test]
    fn states_open_only_untampered_and_unexpired() {
        let sealer = Sealer::new(b"key");
        let sealed = sealer.seal_state(&state());
        assert_eq!(sealer.open_state(&sealed, 50), Some(state()));
        assert_eq!(sealer.open_state(&sealed, 100), None);
        assert_eq!(Sealer::new(b"other").open_state(&sealed, 50), None);
        let mut tampered = sealed.clone();
        tampered.insert(5, 'x');
        assert_eq!(sealer.open_state(&tampered, 50), None);
        assert_eq!(sealer.open_state("garbage", 50), None);
    }

    #[test]
    fn tokens_are_bound_short_and_expire() {
        let sealer = Sealer::new(b"key");
        let issued = sealer.issue_token("binding", 42, 9, 100).unwrap();
        assert_eq!(issued.len(), TOKEN_CHARS);
        const { assert!(TOKEN_CHARS <= crate::text::MAX_TOKEN_CHARS) };
        let token = Token::parse(&issued).unwrap();
        assert_eq!((token.revision, token.connection), (42, 9));
        assert_eq!(sealer.issue_token("binding", 1 << 32, 9, 100), None);
        assert_eq!(sealer.check_token(&token, "binding", 50), Ok(()));
        assert_eq!(
            sealer.check_token(&token, "other", 50),
            Err(TokenProblem::Mismatch)
        );
        assert_eq!(
            sealer.check_token(&token, "binding", 100),
            Err(TokenProblem::Expired)
        );
        assert_eq!(Token::parse("xyz"), Err(TokenProblem::Malformed));
        assert_eq!(
            Sealer::new(b"k2").check_token(&token, "binding", 50),
            Err(TokenProblem::Mismatch)
        );
        // The revision is sealed: naming another one breaks the seal.
        let mut moved = issued.clone();
        moved.replace_range(7..8, "b");
        let moved = Token::parse(&moved).unwrap();
        assert_eq!(moved.revision, 43);
        assert_eq!(
            sealer.check_token(&moved, "binding", 50),
            Err(TokenProblem::Mismatch)
        );
    }

    #[test]
    fn digests_keep_the_order_of_parts() {
        assert_ne!(digest(&["a", "b"]), digest(&["b", "a"]));
        assert_ne!(digest(&["a,b"]), digest(&["a", "b"]));
    }
}
