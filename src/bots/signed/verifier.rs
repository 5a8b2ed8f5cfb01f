//! [`SignedAgents`]: whether a request's Web Bot Auth signature holds, under keys written in
//! the config or published in an allow-listed agent's directory (fetched in the background: a
//! request whose agent's keys are not known yet is unfinished, never held), current, and its
//! nonce never seen before across the fleet. Counts `floodgate_signed_requests_total`.

use super::agent::{agent_of, Agent};
use super::directory::ring_of;
use super::fetcher::Fetcher;
use super::timing::current;
use super::{Message, SignedSettings};
use crate::identity::{BotClaim, Category, Proof, Verification};
use crate::limiter::{NonceLedger, Redeemed};
use crate::telemetry::{SignedMetrics, SignedResult};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use web_bot_auth::keyring::KeyRing;
use web_bot_auth::{ImplementationError, WebBotAuthVerifier};

/// The scope of signatures' nonces in the ledger.
pub const NONCE_SCOPE: &str = "signature";
/// The name of a signed request's agent when the signature names none Floodgate knows.
pub const UNKNOWN_AGENT: &str = "unknown";

/// Verifies signed requests.
pub struct SignedAgents {
    settings: SignedSettings,
    /// Keys written in the config, by agent.
    configured: HashMap<Arc<str>, Arc<KeyRing>>,
    /// The agent of each key written in the config, by key id.
    owners: HashMap<String, Arc<str>>,
    /// `None` when no agent may be fetched, or the fetcher could not start.
    fetcher: Option<Arc<Fetcher>>,
    nonces: Arc<dyn NonceLedger>,
    metrics: SignedMetrics,
}

/// Where a signature's key was found.
enum Keys {
    /// In the keys of the agent named.
    Found(Arc<str>, Arc<KeyRing>),
    /// Not (yet) known: the agent named, if any.
    Unknown(Arc<str>),
}

impl SignedAgents {
    /// Verification as `settings` say, remembering nonces in `nonces`; the directories
    /// already fetched by `previous` are kept when its agents and CA are the same.
    pub fn new(
        settings: &SignedSettings,
        previous: Option<&SignedAgents>,
        nonces: Arc<dyn NonceLedger>,
        metrics: SignedMetrics,
    ) -> Self {
        let same = |p: &&SignedAgents| {
            p.settings.agents == settings.agents && p.settings.ca_file == settings.ca_file
        };
        let fetcher = match previous.filter(same) {
            Some(previous) => previous.fetcher.clone(),
            None => fetcher(settings, &metrics),
        };
        let mut by_agent: HashMap<Arc<str>, Vec<_>> = HashMap::new();
        for key in &settings.keys {
            by_agent
                .entry(key.agent.clone())
                .or_default()
                .push(&key.jwk);
        }
        let owners = settings
            .keys
            .iter()
            .map(|k| (k.jwk.b64_thumbprint(), k.agent.clone()))
            .collect();
        let configured = by_agent
            .into_iter()
            .map(|(agent, keys)| (agent, Arc::new(ring_of(keys))))
            .collect();
        Self {
            settings: settings.clone(),
            configured,
            owners,
            fetcher,
            nonces,
            metrics,
        }
    }

    /// The signed agent `message` claims to be and how the claim fared at `now_ms` (Unix ms;
    /// `now` the same instant), or `None` when it offers no Web Bot Auth signature.
    pub async fn verify(
        &self,
        message: &Message<'_>,
        now_ms: u64,
        now: Instant,
    ) -> Option<BotClaim> {
        if !message.offers_signature() {
            return None;
        }
        let (agent, verification) = self.judge(message, now_ms, now).await;
        self.metrics.requests.inc(match verification {
            Verification::Verified(_) => SignedResult::Verified,
            Verification::Failed => SignedResult::Failed,
            _ => SignedResult::Unfinished,
        });
        Some(BotClaim {
            name: agent.clone(),
            operator: agent,
            claimed: Category::SignedAgent,
            verification,
        })
    }

    /// The agent `message`'s signature names and whether it holds.
    async fn judge(
        &self,
        message: &Message<'_>,
        now_ms: u64,
        now: Instant,
    ) -> (Arc<str>, Verification) {
        let parsed = match WebBotAuthVerifier::parse(message) {
            Ok(parsed) => parsed,
            // A covered component this view cannot give (`@scheme`): not checkable.
            Err(ImplementationError::LookupError(_)) => {
                return (unknown(), Verification::Unfinished)
            }
            Err(_) => return (unknown(), Verification::Failed),
        };
        let agent = agent_of(parsed.get_signature_agents());
        let label = parsed.get_parsed_label();
        let details = &label.base.parameters.details;
        // Only an agent the config knows is named before its signature holds: any other name is
        // the client's to choose, and would be a fresh bucket and log value each time.
        let named = agent
            .as_ref()
            .filter(|a| self.knows(&a.authority))
            .map_or_else(unknown, |a| a.authority.clone());
        let (Some(created), Some(expires), Some(keyid)) =
            (details.created, details.expires, details.keyid.clone())
        else {
            return (named, Verification::Failed);
        };
        let now_secs = i64::try_from(now_ms / 1000).unwrap_or(i64::MAX);
        let Ok(until) = current(created, expires, now_secs) else {
            return (named, Verification::Failed);
        };
        let (agent, ring) = match self.keys(agent.as_ref(), &keyid, now) {
            Keys::Found(agent, ring) => (agent, ring),
            Keys::Unknown(agent) => return (agent, Verification::Unfinished),
        };
        let nonce = nonce_id(details.nonce.as_deref(), &label.signature);
        if parsed.verify(&ring, Some(keyid)).is_err() {
            return (agent, Verification::Failed);
        }
        // Remembered a second past the last one the signature is good in, so it cannot be
        // replayed in its last second.
        let until_ms = u64::try_from(until)
            .unwrap_or(0)
            .saturating_add(1)
            .saturating_mul(1000)
            .max(now_ms + 1000);
        match self
            .nonces
            .redeem(NONCE_SCOPE, &nonce, now_ms, until_ms)
            .await
        {
            Ok(Redeemed::First) => (agent, Verification::Verified(Proof::Signature)),
            Ok(Redeemed::Replayed) => (agent, Verification::Failed),
            Err(e) => {
                log::warn!("signed agent {agent}: the nonce ledger did not answer: {e}");
                (agent, Verification::Unfinished)
            }
        }
    }

    /// The keys holding `keyid`: the configured keys of the agent named (or, when none is
    /// named, of the key's owner), else its directory's, when it may be fetched.
    fn keys(&self, agent: Option<&Agent>, keyid: &String, now: Instant) -> Keys {
        let Some(agent) = agent else {
            return match self.owners.get(keyid) {
                Some(owner) => self.configured_keys(owner, keyid),
                None => Keys::Unknown(unknown()),
            };
        };
        if let found @ Keys::Found(..) = self.configured_keys(&agent.authority, keyid) {
            return found;
        }
        match &self.fetcher {
            Some(fetcher) if agent.https && self.settings.fetches(&agent.authority) => {
                let found = fetcher.keys(&agent.authority, now);
                match found.keys {
                    Some(ring) if ring.get(keyid).is_some() => {
                        Keys::Found(agent.authority.clone(), ring)
                    }
                    Some(_) => {
                        fetcher.refresh(&agent.authority, now);
                        Keys::Unknown(agent.authority.clone())
                    }
                    None => Keys::Unknown(agent.authority.clone()),
                }
            }
            _ => Keys::Unknown(match self.knows(&agent.authority) {
                true => agent.authority.clone(),
                false => unknown(),
            }),
        }
    }

    /// Whether the config names `authority`: among `agents`, or with keys of its own.
    fn knows(&self, authority: &str) -> bool {
        self.settings.fetches(authority) || self.configured.contains_key(authority)
    }

    /// `agent`'s configured keys, if they hold `keyid`.
    fn configured_keys(&self, agent: &Arc<str>, keyid: &String) -> Keys {
        match self.configured.get(agent) {
            Some(ring) if ring.get(keyid).is_some() => Keys::Found(agent.clone(), ring.clone()),
            _ => Keys::Unknown(agent.clone()),
        }
    }
}

/// The fetcher `settings` need, if any agent may be fetched.
fn fetcher(settings: &SignedSettings, metrics: &SignedMetrics) -> Option<Arc<Fetcher>> {
    if settings.agents.is_empty() {
        return None;
    }
    match Fetcher::new(settings.ca_file.as_deref(), metrics.clone()) {
        Ok(fetcher) => Some(Arc::new(fetcher)),
        Err(e) => {
            log::warn!("signed agents' directories cannot be fetched ({e}): their signatures stay unverified");
            None
        }
    }
}

/// What identifies a signature in the nonce ledger: a digest of its `nonce`, else of the
/// signature itself.
fn nonce_id(nonce: Option<&str>, signature: &[u8]) -> [u8; 16] {
    let hash = blake3::hash(nonce.map_or(signature, str::as_bytes));
    let mut id = [0; 16];
    id.copy_from_slice(&hash.as_bytes()[..16]);
    id
}

fn unknown() -> Arc<str> {
    Arc::from(UNKNOWN_AGENT)
}
