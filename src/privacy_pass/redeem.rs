//! Redeeming a token, in the order that costs least first and spends last: its form and type,
//! a known key (by `token_key_id`), the challenge it answers (one of its issuer's live
//! challenges: the issuer's name, its origins, the current or the previous window), the
//! issuer's signature, and only then one atomic "spent?" of its nonce in the fleet's ledger.
//! The digests of the live challenges are made once a window, not once a token.

use super::issuer::Issuer;
use super::offer::Offer;
use super::outcome::{Invalid, Redemption};
use super::token::{Token, TokenError};
use super::window::Windows;
use crate::limiter::{NonceLedger, Redeemed};
use arc_swap::ArcSwap;
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// The ledger's scope for spent nonces.
pub const SCOPE: &str = "privacy_pass";

/// Checks tokens of the configured issuers and spends them.
pub struct Redeemer {
    issuers: Vec<Arc<Issuer>>,
    windows: Windows,
    ledger: Arc<dyn NonceLedger>,
    live: ArcSwap<Live>,
}

/// The challenges of one window, issuer by issuer (in the order of `issuers`).
#[derive(Debug)]
struct Live {
    window: u64,
    /// The digests a token may answer: the current window's challenge, the previous one's.
    digests: Vec<[[u8; 32]; 2]>,
    /// The current challenge in base64url.
    challenges: Vec<String>,
}

impl Redeemer {
    /// A redeemer of `issuers`' tokens for challenges of `windows`, spending nonces in
    /// `ledger`.
    pub fn new(issuers: Vec<Arc<Issuer>>, windows: Windows, ledger: Arc<dyn NonceLedger>) -> Self {
        let live = ArcSwap::from_pointee(Live::of(&issuers, &windows, 0));
        Self {
            issuers,
            windows,
            ledger,
            live,
        }
    }

    /// The issuers, as configured.
    pub fn issuers(&self) -> &[Arc<Issuer>] {
        &self.issuers
    }

    /// The windows of the challenges.
    pub fn windows(&self) -> &Windows {
        &self.windows
    }

    /// Redeems the token of `header_value` (an `Authorization` value) at `now_ms`.
    pub async fn redeem(&self, header_value: &[u8], now_ms: u64) -> Redemption {
        let (issuer, nonce) = match self.check(header_value, now_ms) {
            Ok(valid) => valid,
            Err(refused) => return refused,
        };
        let until_ms = self.windows.remembered_until(now_ms);
        let id = spent_id(&nonce);
        match self.ledger.redeem(SCOPE, &id, now_ms, until_ms).await {
            Ok(Redeemed::First) => Redemption::Redeemed { issuer },
            Ok(Redeemed::Replayed) => Redemption::Replayed { issuer },
            Err(cause) => Redemption::Unavailable { issuer, cause },
        }
    }

    /// Every check but the spent set's: the issuer and the nonce of a valid token.
    fn check(&self, header_value: &[u8], now_ms: u64) -> Result<(Arc<str>, [u8; 32]), Redemption> {
        let token = Token::from_authorization(header_value).map_err(|e| Redemption::Invalid {
            issuer: None,
            why: match e {
                TokenError::WrongType(_) => Invalid::WrongType,
                TokenError::OtherScheme | TokenError::Malformed => Invalid::Malformed,
            },
        })?;
        let live = self.live(now_ms);
        let mut answers_none_of = None;
        for (issuer, digests) in self.issuers.iter().zip(&live.digests) {
            let signed = issuer.with_key(&token.token_key_id, |key| {
                digests
                    .contains(&token.challenge_digest)
                    .then(|| key.verify(&token.token_input(), &token.authenticator))
            });
            let invalid = |why| Redemption::Invalid {
                issuer: Some(issuer.name().clone()),
                why,
            };
            match signed {
                None => continue,
                Some(None) => {
                    answers_none_of = answers_none_of.or(Some(invalid(Invalid::BadChallenge)))
                }
                Some(Some(true)) => return Ok((issuer.name().clone(), token.nonce)),
                Some(Some(false)) => return Err(invalid(Invalid::BadSignature)),
            }
        }
        Err(answers_none_of.unwrap_or(Redemption::UnknownKey))
    }

    /// What a challenge answer made at `now_ms` offers: one [`Offer`] per issuer that has a
    /// key (an issuer whose directory was never read has none).
    pub fn challenges(&self, now_ms: u64) -> Vec<Offer> {
        let live = self.live(now_ms);
        self.issuers
            .iter()
            .zip(&live.challenges)
            .filter_map(|(issuer, challenge)| {
                Some(Offer {
                    issuer: issuer.name().clone(),
                    challenge: challenge.clone(),
                    token_key: issuer.offered_key()?.token_key().to_owned(),
                })
            })
            .collect()
    }

    /// The challenges of the window at `now_ms`, made again when the window has turned.
    fn live(&self, now_ms: u64) -> Arc<Live> {
        let window = self.windows.window_at(now_ms);
        let live = self.live.load_full();
        if live.window == window {
            return live;
        }
        let fresh = Arc::new(Live::of(&self.issuers, &self.windows, window));
        self.live.store(fresh.clone());
        fresh
    }
}

impl Live {
    fn of(issuers: &[Arc<Issuer>], windows: &Windows, window: u64) -> Self {
        let current = windows.context_of(window);
        let previous = windows.context_of(window.saturating_sub(1));
        let (mut digests, mut challenges) = (Vec::new(), Vec::new());
        for issuer in issuers {
            let now = issuer.challenge(current);
            digests.push([now.digest(), issuer.challenge(previous).digest()]);
            challenges.push(now.to_base64url());
        }
        Self {
            window,
            digests,
            challenges,
        }
    }
}

impl std::fmt::Debug for Redeemer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redeemer")
            .field("issuers", &self.issuers)
            .field("windows", &self.windows)
            .finish_non_exhaustive()
    }
}

/// The id a nonce is spent under: the first 16 bytes of its SHA-256 (the ledger's ids are
/// 128 bits; a client choosing nonces cannot aim at another's id).
pub fn spent_id(nonce: &[u8; 32]) -> [u8; 16] {
    let digest = Sha256::digest(nonce);
    let mut id = [0u8; 16];
    id.copy_from_slice(&digest[..16]);
    id
}

#[cfg(test)]
mod tests;
