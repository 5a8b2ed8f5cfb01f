//! Privacy Pass at the challenge: every challenge answer offers each trusted issuer's
//! challenge (`WWW-Authenticate: PrivateToken challenge="…", token-key="…"`, RFC 9577 §2.1),
//! and a request carrying a token (`Authorization: PrivateToken token="…"`) that redeems earns
//! the pass a solved challenge would — one that answers every challenge, bound to the network
//! when any challenging policy asks for that — counted by issuer and result. Issuers' keys
//! from a directory are read on a thread of this config's own.

use crate::bots::dns::Background;
use crate::clock::Clock;
use crate::identity::{Bind, Challenge, ChallengeKind, IdentityKey};
use crate::limiter::NonceLedger;
use crate::privacy_pass::directory::{DirectorySettings, Fetcher, Following};
use crate::privacy_pass::{
    DirectorySource, IssuerKey, PrivacyPassSettings, Redeemer, Redemption, Windows, DEFAULT_WINDOW,
};
use crate::telemetry::PrivacyPassCounters;
use http::HeaderValue;
use std::sync::Arc;
use tokio::sync::watch;

/// The policy number a Privacy Pass's pass is made for: none in particular (it answers
/// every challenge).
pub const PRIVACY_PASS_POLICY: u64 = u64::MAX;

/// Why the issuers could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TokensError {
    /// An issuer's challenge cannot be made of its name and origins.
    #[error("issuer {0}: {1}")]
    Issuer(String, String),
    /// The thread or client reading issuers' directories could not start.
    #[error("issuers' directories cannot be read: {0}")]
    Directories(String),
}

/// What tokens are redeemed with: the spent set their nonces go into, and the clock issuers'
/// directory keys come into force by.
pub struct Redeeming {
    /// Where spent nonces are kept (the fleet's on the Redis store).
    pub ledger: Arc<dyn NonceLedger>,
    /// What directory keys' `not-before` is compared with.
    pub clock: Clock,
}

/// The trusted issuers under one config.
pub struct Tokens {
    redeemer: Redeemer,
    /// The challenge a token's pass answers.
    challenge: Challenge,
    counters: PrivacyPassCounters,
    /// The directories followed while this config runs (dropped with it).
    directories: Vec<Following>,
    _shutdown: watch::Sender<bool>,
    _background: Option<Background>,
}

impl Tokens {
    /// The issuers of `settings` (their challenges naming `origins` unless they name their
    /// own), with redemption contexts keyed by `key` (the fleet's), spent nonces kept and
    /// directory keys in force as `redeeming` says, passes bound as `bind`, counted into
    /// `counters`. An issuer whose directory
    /// `previous` (the config reloaded) followed starts with the keys it had there, so a
    /// reload while the directory is down keeps them, and one while it is up offers them
    /// before its first read.
    pub fn new(
        settings: &PrivacyPassSettings,
        origins: &[String],
        key: &IdentityKey,
        redeeming: Redeeming,
        bind: Bind,
        counters: PrivacyPassCounters,
        previous: Option<&Tokens>,
    ) -> Result<Self, TokensError> {
        let (shutdown, watching) = watch::channel(false);
        let mut issuers = Vec::new();
        let mut directories = Vec::new();
        let mut background = None;
        for one in &settings.issuers {
            let issuer = one
                .issuer(origins)
                .map_err(|e| TokensError::Issuer(one.issuer.clone(), e.to_string()))?;
            let issuer = Arc::new(issuer);
            counters.show(issuer.name());
            if let Some(source) = one.directory() {
                let thread = match &mut background {
                    Some(thread) => thread,
                    None => background.insert(start()?),
                };
                let fetcher = Fetcher::new(DirectorySettings {
                    refresh: source.refresh,
                    clock: redeeming.clock.clone(),
                    ..DirectorySettings::default()
                })
                .map_err(|e| TokensError::Directories(e.to_string()))?;
                if let Some(keys) = previous.and_then(|p| p.directory_keys(issuer.name(), source)) {
                    issuer.set_keys(keys);
                }
                let _inside = thread.handle().enter();
                let url = source.url.clone();
                directories.push(fetcher.follow(issuer.clone(), url, watching.clone()));
            }
            issuers.push(issuer);
        }
        let windows = Windows::from_identity_key(key, DEFAULT_WINDOW);
        Ok(Self {
            redeemer: Redeemer::new(issuers, windows, redeeming.ledger),
            challenge: Challenge {
                kind: ChallengeKind::PrivacyPass,
                bind,
            },
            counters,
            directories,
            _shutdown: shutdown,
            _background: background,
        })
    }

    /// The `WWW-Authenticate` values a challenge answer carries at `now_ms`, one per issuer
    /// with a key.
    pub fn offers(&self, now_ms: u64) -> Vec<HeaderValue> {
        self.redeemer
            .challenges(now_ms)
            .iter()
            .filter_map(|offer| HeaderValue::from_str(&offer.www_authenticate()).ok())
            .collect()
    }

    /// Whether the token in the `Authorization` value `authorization` redeems at `now_ms`
    /// (counted either way; anything but a redemption is the challenge again).
    pub async fn redeem(&self, authorization: &[u8], now_ms: u64) -> bool {
        let redemption = self.redeemer.redeem(authorization, now_ms).await;
        let issuer = redemption.issuer().map(|i| &**i);
        self.counters.count(issuer, redemption.result_word());
        match &redemption {
            Redemption::Redeemed { .. } => true,
            Redemption::Unavailable { cause, .. } => {
                log::warn!("a Privacy Pass token was refused: the spent set failed: {cause}");
                false
            }
            _ => false,
        }
    }

    /// The challenge a redeemed token's pass answers.
    pub fn challenge(&self) -> Challenge {
        self.challenge
    }

    /// The keys in force of issuer `name`, if its keys come from the directory of `source`.
    fn directory_keys(&self, name: &str, source: &DirectorySource) -> Option<Vec<IssuerKey>> {
        self.directories
            .iter()
            .find(|d| &**d.issuer().name() == name && *d.url() == source.url)
            .map(|d| d.issuer().keys().to_vec())
    }
}

fn start() -> Result<Background, TokensError> {
    Background::start("floodgate-ppass").map_err(|e| TokensError::Directories(e.to_string()))
}
