//! Sealing: HMAC-SHA256 over everything the guard hands a client and later
//! trusts again — the `requestState` of an `input_required` round, and the
//! two-call confirmation token.
//!
//! Both are signed, not encrypted (they hold digests and a nonce, nothing
//! secret), expire, and carry a nonce that the host spends once. Any process
//! holding the same key can verify them, so replicas behind a gateway can
//! share one key (RUSTPAD_SEAL_KEY).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

const STATE_PREFIX: &str = "v1.";
const TOKEN_NONCE_BYTES: usize = 8;
const TOKEN_MAC_BYTES: usize = 16;
/// 8 nonce bytes, 4 expiry bytes, 16 MAC bytes, in hex: 56 characters.
pub const TOKEN_CHARS: usize = 2 * (TOKEN_NONCE_BYTES + 4 + TOKEN_MAC_BYTES);

/// What a sealed `requestState` remembers between rounds.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// Digest of the tool and its arguments.
    #[serde(rename = "a")]
    pub arguments: String,
    /// Digest of the arguments and the pad as it stood (count or fingerprint).
    #[serde(rename = "b")]
    pub binding: String,
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

/// A hex digest of ordered parts; JSON keeps the parts unambiguous.
pub fn digest(parts: &[&str]) -> String {
    hex(&Sha256::digest(
        serde_json::to_string(parts).unwrap_or_default().as_bytes(),
    ))
}

/// The first 16 hex digits of a text's SHA-256: enough to tell contents apart.
pub fn fingerprint(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))[..16].to_string()
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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

    /// A token for `binding`, valid until `expires`.
    pub fn issue_token(
        &self,
        binding: &str,
        nonce: &[u8; TOKEN_NONCE_BYTES],
        expires: u32,
    ) -> String {
        let expiry = expires.to_be_bytes();
        let tag = self
            .mac("token", &[binding.as_bytes(), nonce, &expiry])
            .finalize()
            .into_bytes();
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&expiry);
        bytes.extend_from_slice(&tag[..TOKEN_MAC_BYTES]);
        hex(&bytes)
    }

    /// Checks a token against `binding`; returns its nonce for spending.
    pub fn check_token(
        &self,
        token: &str,
        binding: &str,
        now: u64,
    ) -> Result<String, TokenProblem> {
        let bytes = unhex(token.trim())
            .filter(|b| b.len() == TOKEN_CHARS / 2)
            .ok_or(TokenProblem::Malformed)?;
        let (nonce, rest) = bytes.split_at(TOKEN_NONCE_BYTES);
        let (expiry, tag) = rest.split_at(4);
        self.mac("token", &[binding.as_bytes(), nonce, expiry])
            .verify_truncated_left(tag)
            .map_err(|_| TokenProblem::Mismatch)?;
        let expires = u32::from_be_bytes(expiry.try_into().map_err(|_| TokenProblem::Malformed)?);
        if u64::from(expires) <= now {
            return Err(TokenProblem::Expired);
        }
        Ok(hex(nonce))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        State {
            arguments: "a".into(),
            binding: "b".into(),
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
        let token = sealer.issue_token("binding", &[7; 8], 100);
        assert_eq!(token.len(), TOKEN_CHARS);
        const { assert!(TOKEN_CHARS <= crate::text::MAX_TOKEN_CHARS) };
        assert_eq!(sealer.check_token(&token, "binding", 50), Ok(hex(&[7; 8])));
        assert_eq!(
            sealer.check_token(&token, "other", 50),
            Err(TokenProblem::Mismatch)
        );
        assert_eq!(
            sealer.check_token(&token, "binding", 100),
            Err(TokenProblem::Expired)
        );
        assert_eq!(
            sealer.check_token("xyz", "binding", 50),
            Err(TokenProblem::Malformed)
        );
        assert_eq!(
            Sealer::new(b"k2").check_token(&token, "binding", 50),
            Err(TokenProblem::Mismatch)
        );
    }

    #[test]
    fn digests_keep_the_order_of_parts() {
        assert_ne!(digest(&["a", "b"]), digest(&["b", "a"]));
        assert_ne!(digest(&["a,b"]), digest(&["a", "b"]));
    }
}
