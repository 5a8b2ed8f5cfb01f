//! Signed tokens: a challenge page's nonce and the pass a solution earns. Each is a version
//! byte, a fixed-size payload and an HMAC-SHA256 tag cut to 128 bits, in base64url (70
//! characters). The key is derived from the identity key every instance shares, so any
//! instance opens what another signed. A token bound to the client's network has the network
//! in its tag, not in its text: a pass copied to another network fails as a forgery would, and
//! no address is stored in the cookie.

use crate::identity::{Bind, Challenge, ChallengeKind, IdentityKey, Pass, PassId};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::cell::RefCell;
use std::net::IpAddr;

/// The context of the signing key's derivation: changing it voids every pass.
const KEY_CONTEXT: &str = "floodgate 2026 challenge nonce and pass signing key";

const NONCE_V1: u8 = 1;
const PASS_V1: u8 = 2;

/// version, id, time, policy, kind, difficulty, bind.
const PAYLOAD: usize = 1 + 16 + 8 + 8 + 3;
const TAG: usize = 16;
const RAW: usize = PAYLOAD + TAG;

/// The length of every token's text.
pub const TOKEN_LEN: usize = (RAW * 4).div_ceil(3);

/// A challenge page's nonce, opened: what was asked of whom, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nonce {
    /// Its random id: redeemed once fleet-wide.
    pub id: [u8; 16],
    /// When the page was issued, in Unix ms.
    pub issued_ms: u64,
    /// The id of the policy that asked (0 for CrowdSec).
    pub policy: u64,
    /// What was asked.
    pub challenge: Challenge,
}

/// Why a token was not opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not a token of this kind: wrong length, alphabet, version or fields.
    #[error("malformed")]
    Malformed,
    /// The tag does not match: forged, altered, or bound to another network.
    #[error("not signed by the fleet, or for another network")]
    Forged,
    /// A pass past its end.
    #[error("expired")]
    Expired,
}

/// Why no token could be made.
#[derive(Debug, Clone, thiserror::Error)]
#[error("no randomness for a challenge token: {0}")]
pub struct NoRandomness(String);

/// Signs and opens nonces and passes with the fleet's key.
#[derive(Clone)]
pub struct Signer {
    keyed: Hmac<Sha256>,
}

impl Signer {
    /// The signer whose key is derived from the fleet's identity key.
    pub fn new(key: &IdentityKey) -> Self {
        let keyed = Hmac::<Sha256>::new_from_slice(&key.derive(KEY_CONTEXT))
            .expect("HMAC takes a key of any length");
        Self { keyed }
    }

    /// A fresh nonce for `challenge`, asked by policy `policy` of `client` at `now_ms`.
    pub fn nonce(
        &self,
        challenge: &Challenge,
        policy: u64,
        client: Option<IpAddr>,
        now_ms: u64,
    ) -> Result<String, NoRandomness> {
        let fields = Fields {
            id: random_id()?,
            time: now_ms,
            policy,
            challenge: *challenge,
        };
        Ok(self.seal(NONCE_V1, &fields, client))
    }

    /// The nonce `text` carries, if the fleet signed it for `client`'s network.
    pub fn open_nonce(&self, text: &str, client: Option<IpAddr>) -> Result<Nonce, TokenError> {
        let fields = self.open(NONCE_V1, text, client)?;
        Ok(Nonce {
            id: fields.id,
            issued_ms: fields.time,
            policy: fields.policy,
            challenge: fields.challenge,
        })
    }

    /// A new pass for solving `nonce`, good until `expires_s` (Unix seconds), and its cookie
    /// value.
    pub fn pass(
        &self,
        nonce: &Nonce,
        client: Option<IpAddr>,
        expires_s: u64,
    ) -> Result<(Pass, String), NoRandomness> {
        self.pass_for(nonce.policy, nonce.challenge, client, expires_s)
    }

    /// A pass for `challenge` of the policy numbered `policy`, solved without a nonce (a
    /// Privacy Pass token), for `client`, good until `expires_s`.
    pub fn pass_for(
        &self,
        policy: u64,
        challenge: Challenge,
        client: Option<IpAddr>,
        expires_s: u64,
    ) -> Result<(Pass, String), NoRandomness> {
        let fields = Fields {
            id: random_id()?,
            time: expires_s,
            policy,
            challenge,
        };
        Ok((fields.pass(), self.seal(PASS_V1, &fields, client)))
    }

    /// The pass cookie value `text` carries, if the fleet signed it (for `client`'s network
    /// when it is bound) and it is good at `now_s`.
    pub fn open_pass(
        &self,
        text: &[u8],
        client: Option<IpAddr>,
        now_s: u64,
    ) -> Result<Pass, TokenError> {
        let text = std::str::from_utf8(text).map_err(|_| TokenError::Malformed)?;
        let fields = self.open(PASS_V1, text, client)?;
        match fields.time > now_s {
            true => Ok(fields.pass()),
            false => Err(TokenError::Expired),
        }
    }

    fn seal(&self, version: u8, fields: &Fields, client: Option<IpAddr>) -> String {
        let mut raw = [0u8; RAW];
        raw[..PAYLOAD].copy_from_slice(&fields.payload(version));
        let tag = self.tag(&raw[..PAYLOAD], fields.challenge.bind, client);
        raw[PAYLOAD..].copy_from_slice(&tag[..TAG]);
        URL_SAFE_NO_PAD.encode(raw)
    }

    fn open(&self, version: u8, text: &str, client: Option<IpAddr>) -> Result<Fields, TokenError> {
        if text.len() != TOKEN_LEN {
            return Err(TokenError::Malformed);
        }
        let mut raw = [0u8; RAW + 2];
        let n = URL_SAFE_NO_PAD
            .decode_slice(text, &mut raw)
            .map_err(|_| TokenError::Malformed)?;
        if n != RAW || raw[0] != version {
            return Err(TokenError::Malformed);
        }
        let fields = Fields::read(&raw[..PAYLOAD]).ok_or(TokenError::Malformed)?;
        let mut mac = self.keyed.clone();
        mac.update(&raw[..PAYLOAD]);
        bound_network(fields.challenge.bind, client, &mut mac);
        // Constant-time comparison.
        mac.verify_truncated_left(&raw[PAYLOAD..RAW])
            .map_err(|_| TokenError::Forged)?;
        Ok(fields)
    }

    fn tag(&self, payload: &[u8], bind: Bind, client: Option<IpAddr>) -> [u8; 32] {
        let mut mac = self.keyed.clone();
        mac.update(payload);
        bound_network(bind, client, &mut mac);
        mac.finalize().into_bytes().into()
    }
}

/// Adds the network a `bind = "network"` token is tied to: the client's /24 (IPv4, also when
/// mapped into IPv6) or /48 (IPv6).
fn bound_network(bind: Bind, client: Option<IpAddr>, mac: &mut Hmac<Sha256>) {
    if bind == Bind::None {
        return;
    }
    match client.map(|ip| ip.to_canonical()) {
        // The MAC reads one stream: a tag byte and the network, as one slice or two.
        Some(IpAddr::V4(v4)) => {
            mac.update(&[4]);
            mac.update(&v4.octets()[..3]);
        }
        Some(IpAddr::V6(v6)) => {
            mac.update(&[6]);
            mac.update(&v6.octets()[..6]);
        }
        None => mac.update(&[0]),
    }
}

/// A thread's source of token ids: a key drawn from the OS once, and a counter; each id is
/// the first 16 bytes of BLAKE3 keyed by it over the counter (a PRF over distinct inputs), so a
/// page costs no system call for its id.
struct Ids {
    key: [u8; 32],
    counter: u64,
}

thread_local! {
    static IDS: RefCell<Option<Ids>> = const { RefCell::new(None) };
}

/// A fresh random token id.
fn random_id() -> Result<[u8; 16], NoRandomness> {
    IDS.with_borrow_mut(|ids| {
        let ids = match ids {
            Some(ids) => ids,
            None => {
                let mut key = [0u8; 32];
                getrandom::fill(&mut key).map_err(|e| NoRandomness(e.to_string()))?;
                ids.insert(Ids { key, counter: 0 })
            }
        };
        ids.counter += 1;
        let hash = blake3::keyed_hash(&ids.key, &ids.counter.to_le_bytes());
        let mut id = [0u8; 16];
        id.copy_from_slice(&hash.as_bytes()[..16]);
        Ok(id)
    })
}

/// A token's payload: an id, a time (a nonce's issue in ms, a pass's end in s), the policy
/// and the challenge.
struct Fields {
    id: [u8; 16],
    time: u64,
    policy: u64,
    challenge: Challenge,
}

impl Fields {
    fn payload(&self, version: u8) -> [u8; PAYLOAD] {
        let mut out = [0u8; PAYLOAD];
        out[0] = version;
        out[1..17].copy_from_slice(&self.id);
        out[17..25].copy_from_slice(&self.time.to_be_bytes());
        out[25..33].copy_from_slice(&self.policy.to_be_bytes());
        (out[33], out[34]) = match self.challenge.kind {
            ChallengeKind::Refresh => (0, 0),
            ChallengeKind::Pow { difficulty } => (1, difficulty),
            ChallengeKind::PrivacyPass => (2, 0),
        };
        out[35] = match self.challenge.bind {
            Bind::None => 0,
            Bind::Network => 1,
        };
        out
    }

    fn read(payload: &[u8]) -> Option<Self> {
        let u64_at = |at: usize| {
            Some(u64::from_be_bytes(
                payload.get(at..at + 8)?.try_into().ok()?,
            ))
        };
        let kind = match (payload[33], payload[34]) {
            (0, 0) => ChallengeKind::Refresh,
            (1, difficulty @ 1..=crate::identity::MAX_DIFFICULTY) => {
                ChallengeKind::Pow { difficulty }
            }
            (2, 0) => ChallengeKind::PrivacyPass,
            _ => return None,
        };
        let bind = match payload[35] {
            0 => Bind::None,
            1 => Bind::Network,
            _ => return None,
        };
        Some(Self {
            id: payload[1..17].try_into().ok()?,
            time: u64_at(17)?,
            policy: u64_at(25)?,
            challenge: Challenge { kind, bind },
        })
    }

    fn pass(&self) -> Pass {
        Pass {
            id: PassId(self.id),
            kind: self.challenge.kind,
            bind: self.challenge.bind,
            policy: self.policy,
            expires_s: self.time,
        }
    }
}

#[cfg(test)]
mod tests;
