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
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::digest::{hex, unhex};

type HmacSha256 = Hmac<Sha256>;

const STATE_PREFIX: &str = "v3.";
/// Each of a token's revision, connection, Rustpad start and expiry.
const TOKEN_FIELD_BYTES: usize = 4;
const TOKEN_FIELDS: usize = 4;
const TOKEN_MAC_BYTES: usize = 16;
/// 4 bytes each of revision, connection, Rustpad start and expiry, 16 MAC
/// bytes, in hex: 64 characters.
pub const TOKEN_CHARS: usize = 2 * (TOKEN_FIELDS * TOKEN_FIELD_BYTES + TOKEN_MAC_BYTES);

/// Where an approval was asked for: the pad's revision, Rustpad's number for
/// the connection that asked, and when that Rustpad instance started (its
/// `/api/stats` `start_time`). Numbers start again when Rustpad restarts or
/// forgets a pad; the start time tells an instance from the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Given {
    pub revision: u64,
    pub connection: u64,
    pub started: u64,
}

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
    /// When the Rustpad instance started (see [`Given`]).
    #[serde(rename = "s")]
    pub started: u64,
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

    /// A token for `binding`, asked for where `given` says, valid until
    /// `expires`; None for a revision or connection number past what a
    /// token holds.
    pub fn issue_token(&self, binding: &str, given: Given, expires: u32) -> Option<String> {
        let fields = [
            u32::try_from(given.revision).ok()?,
            u32::try_from(given.connection).ok()?,
            low_bits(given.started),
            expires,
        ]
        .map(u32::to_be_bytes);
        let tag = self.token_mac(binding, &fields).finalize().into_bytes();
        let mut bytes = fields.concat();
        bytes.extend_from_slice(&tag[..TOKEN_MAC_BYTES]);
        Some(hex(&bytes))
    }

    fn token_mac(
        &self,
        binding: &str,
        fields: &[[u8; TOKEN_FIELD_BYTES]; TOKEN_FIELDS],
    ) -> HmacSha256 {
        let mut parts: Vec<&[u8]> = vec![binding.as_bytes()];
        parts.extend(fields.iter().map(|field| field.as_slice()));
        self.mac("token", &parts)
    }

    /// Checks a token against `binding` (the one it must have been issued
    /// for, at its own revision) and its expiry.
    pub fn check_token(&self, token: &Token, binding: &str, now: u64) -> Result<(), TokenProblem> {
        let fields = [
            u32::try_from(token.revision).map_err(|_| TokenProblem::Malformed)?,
            u32::try_from(token.connection).map_err(|_| TokenProblem::Malformed)?,
            token.started,
            token.expires,
        ]
        .map(u32::to_be_bytes);
        self.token_mac(binding, &fields)
            .verify_truncated_left(&token.tag)
            .map_err(|_| TokenProblem::Mismatch)?;
        if u64::from(token.expires) <= now {
            return Err(TokenProblem::Expired);
        }
        Ok(())
    }
}

/// The part of a Rustpad start time a token carries: its low 32 bits, which
/// tell one instance from the next for a century and more.
pub fn low_bits(started: u64) -> u32 {
    started as u32
}

/// A confirmation token as read, before it is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The pad's revision it was issued at.
    pub revision: u64,
    /// Rustpad's number for the connection that issued it.
    pub connection: u64,
    /// The low bits of the Rustpad instance's start time ([`low_bits`]).
    pub started: u32,
    expires: u32,
    tag: Vec<u8>,
}

impl Token {
    /// Reads a token's parts; the seal is checked by [`Sealer::check_token`].
    pub fn parse(token: &str) -> Result<Token, TokenProblem> {
        let bytes = unhex(token.trim())
            .filter(|b| b.len() == TOKEN_CHARS / 2)
            .ok_or(TokenProblem::Malformed)?;
        let (fields, tag) = bytes.split_at(TOKEN_FIELDS * TOKEN_FIELD_BYTES);
        let field = |i: usize| {
            let at = i * TOKEN_FIELD_BYTES;
            let mut word = [0u8; TOKEN_FIELD_BYTES];
            word.copy_from_slice(&fields[at..at + TOKEN_FIELD_BYTES]);
            u32::from_be_bytes(word)
        };
        Ok(Token {
            revision: field(0).into(),
            connection: field(1).into(),
            started: field(2),
            expires: field(3),
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
            started: 1_800_000_000,
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
        let given = Given {
            revision: 42,
            connection: 9,
            started: (5 << 32) + 1_800_000_000,
        };
        let issued = sealer.issue_token("binding", given, 100).unwrap();
        assert_eq!(issued.len(), TOKEN_CHARS);
        const { assert!(TOKEN_CHARS <= crate::text::MAX_TOKEN_CHARS) };
        let token = Token::parse(&issued).unwrap();
        assert_eq!(
            (token.revision, token.connection, token.started),
            (42, 9, 1_800_000_000)
        );
        for too_far in [
            Given {
                revision: 1 << 32,
                ..given
            },
            Given {
                connection: 1 << 32,
                ..given
            },
        ] {
            assert_eq!(sealer.issue_token("binding", too_far, 100), None);
        }
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
        // Every field is sealed: naming another revision, connection or
        // Rustpad instance breaks the seal.
        for (digit, changed) in [(7, "revision"), (15, "connection"), (23, "start")] {
            let mut moved = issued.clone();
            moved.replace_range(digit..digit + 1, "f");
            let moved = Token::parse(&moved).unwrap();
            assert_ne!(moved, token, "{changed}");
            assert_eq!(
                sealer.check_token(&moved, "binding", 50),
                Err(TokenProblem::Mismatch),
                "{changed}"
            );
        }
    }

    #[test]
    fn digests_keep_the_order_of_parts() {
        assert_ne!(digest(&["a", "b"]), digest(&["b", "a"]));
        assert_ne!(digest(&["a,b"]), digest(&["a", "b"]));
    }
}
