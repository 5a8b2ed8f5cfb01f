//! The control state indexed for the request path: is this request banned (by its address's
//! networks, or as a caller of a source some ban names), and does this caller have an override
//! under this policy. Built once per change, read by every request without a lock.

use super::entry::{in_force, BanTarget, Contents};
use crate::identity::{Identity, IdentityKey, IpFolding, Request, SourceSpec};
use crate::limiter::PolicyKey;
use crate::policy::{Limits, Rate};
use ipnet::IpNet;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

/// A ban that refuses a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BanHit {
    /// The ban's number.
    pub id: u64,
    /// When it ends, Unix milliseconds; never for `None`.
    pub expires_at_ms: Option<u64>,
}

impl BanHit {
    /// Whether `self` refuses for longer than `other`.
    fn outlasts(&self, other: &BanHit) -> bool {
        match (self.expires_at_ms, other.expires_at_ms) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(a), Some(b)) => a > b,
        }
    }
}

/// An override as the gate applies it.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The override's number.
    pub id: u64,
    /// The caller's limits while it lasts.
    pub limits: Limits,
    /// When it ends, Unix milliseconds; never for `None`.
    pub expires_at_ms: Option<u64>,
}

/// The bans and overrides in force, indexed.
#[derive(Debug, Default)]
pub struct ControlView {
    /// Banned networks by (network address, prefix length).
    nets: HashMap<(IpAddr, u8), BanHit>,
    /// The prefix lengths `nets` holds, per family.
    v4_lengths: Vec<u8>,
    v6_lengths: Vec<u8>,
    /// Banned callers by digest, and the sources that name them.
    callers: HashMap<Identity, BanHit>,
    sources: Vec<SourceSpec>,
    /// Overrides by (policy number, caller).
    overrides: HashMap<(u64, Identity), Arc<Applied>>,
    /// What the view was built from, for listing.
    contents: Contents,
}

impl ControlView {
    /// The view of `contents`; entries that cannot be read are skipped and logged.
    pub fn new(contents: Contents) -> Self {
        let mut view = Self::default();
        for ban in &contents.bans {
            let hit = BanHit {
                id: ban.id,
                expires_at_ms: ban.expires_at_ms,
            };
            match &ban.target {
                BanTarget::Cidr { value } => view.ban_net(value, hit),
                BanTarget::Caller { source, caller } => view.ban_caller(source, caller, hit),
            }
        }
        for o in &contents.overrides {
            let limits = match o.quota {
                Some(quota) => Limits::quota(quota).ok(),
                None => o
                    .rate
                    .parse::<Rate>()
                    .ok()
                    .and_then(|rate| Limits::new(o.capacity, rate).ok()),
            };
            let (Some(limits), Some(caller)) = (limits, Identity::from_hex(&o.caller)) else {
                log::warn!("override {} cannot be read; it is not applied", o.id);
                continue;
            };
            let applied = Arc::new(Applied {
                id: o.id,
                limits,
                expires_at_ms: o.expires_at_ms,
            });
            let slot = (PolicyKey::new(&o.policy).id(), caller);
            match view.overrides.get(&slot) {
                Some(kept) if kept.id > o.id => {}
                _ => {
                    view.overrides.insert(slot, applied);
                }
            }
        }
        view.contents = contents;
        view
    }

    /// Every entry the view was built from (expired ones included until the ledger drops
    /// them).
    pub fn contents(&self) -> &Contents {
        &self.contents
    }

    /// Whether nothing is banned or overridden (the request path then skips the view).
    pub fn is_empty(&self) -> bool {
        self.nets.is_empty() && self.callers.is_empty() && self.overrides.is_empty()
    }

    /// Whether any ban is held.
    pub fn has_bans(&self) -> bool {
        !self.nets.is_empty() || !self.callers.is_empty()
    }

    fn ban_net(&mut self, text: &str, hit: BanHit) {
        let Ok(net) = text.parse::<IpNet>() else {
            log::warn!("ban {} names no network; it is not applied", hit.id);
            return;
        };
        let net = net.trunc();
        let lengths = match net {
            IpNet::V4(_) => &mut self.v4_lengths,
            IpNet::V6(_) => &mut self.v6_lengths,
        };
        if !lengths.contains(&net.prefix_len()) {
            lengths.push(net.prefix_len());
        }
        keep_longest(&mut self.nets, (net.addr(), net.prefix_len()), hit);
    }

    fn ban_caller(&mut self, source: &str, caller: &str, hit: BanHit) {
        let (Ok(spec), Some(caller)) = (source.parse::<SourceSpec>(), Identity::from_hex(caller))
        else {
            log::warn!("ban {} names no caller; it is not applied", hit.id);
            return;
        };
        if !self.sources.contains(&spec) {
            self.sources.push(spec);
        }
        keep_longest(&mut self.callers, caller, hit);
    }

    /// The ban refusing `req` at `now_ms`, if any: the one that lasts longest. Callers are
    /// identified as the proxy identifies them (`folding`, digests keyed by `key`).
    pub fn ban_for(
        &self,
        req: &Request<'_>,
        folding: &IpFolding,
        key: &IdentityKey,
        now_ms: u64,
    ) -> Option<BanHit> {
        let by_net = req.client_ip.and_then(|ip| self.net_ban(ip, now_ms));
        let by_caller = self.sources.iter().filter_map(|spec| {
            let value = spec.value(req, folding).ok()??;
            let hit = self.callers.get(&Identity::of(key, spec.tag(), &value))?;
            in_force(hit.expires_at_ms, now_ms).then_some(*hit)
        });
        by_net.into_iter().chain(by_caller).reduce(longest)
    }

    /// The ban of `caller` (as a source some ban names identified it), in force at `now_ms`.
    pub fn caller_ban(&self, caller: Identity, now_ms: u64) -> Option<BanHit> {
        let hit = self.callers.get(&caller)?;
        in_force(hit.expires_at_ms, now_ms).then_some(*hit)
    }

    /// The ban of a network holding `ip`, in force at `now_ms`.
    pub fn net_ban(&self, ip: IpAddr, now_ms: u64) -> Option<BanHit> {
        let ip = ip.to_canonical();
        let lengths = match ip {
            IpAddr::V4(_) => &self.v4_lengths,
            IpAddr::V6(_) => &self.v6_lengths,
        };
        lengths
            .iter()
            .filter_map(|&len| {
                let net = IpNet::new(ip, len).ok()?.trunc();
                let hit = self.nets.get(&(net.addr(), len))?;
                in_force(hit.expires_at_ms, now_ms).then_some(*hit)
            })
            .reduce(longest)
    }

    /// The override of `caller` under policy number `policy`, in force at `now_ms`.
    pub fn override_for(
        &self,
        policy: u64,
        caller: Identity,
        now_ms: u64,
    ) -> Option<&Arc<Applied>> {
        self.overrides
            .get(&(policy, caller))
            .filter(|o| in_force(o.expires_at_ms, now_ms))
    }
}

/// Of two bans, the one that lasts longer.
fn longest(a: BanHit, b: BanHit) -> BanHit {
    if b.outlasts(&a) {
        b
    } else {
        a
    }
}

/// Keeps under `key` whichever of the held ban and `hit` lasts longer.
fn keep_longest<K: std::hash::Hash + Eq>(map: &mut HashMap<K, BanHit>, key: K, hit: BanHit) {
    let entry = map.entry(key).or_insert(hit);
    if hit.outlasts(entry) {
        *entry = hit;
    }
}

#[cfg(test)]
mod tests;
