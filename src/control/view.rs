//! The control state indexed for the request path: is this request banned (by its address's
//! networks, or as a caller of a source some ban names), and does this caller have an override
//! under this policy. Built once per change, read by every request without a lock.

use super::change::Change;
use super::entry::{in_force, Ban, Contents, Override};
use crate::identity::{Identity, IdentityKey, IpFolding, NetworkIndex, Request, SourceSpec};
use crate::policy::Size;
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
    /// The caller's limits while it lasts (its policy's refill is given them when applied).
    pub size: Size,
    /// When it ends, Unix milliseconds; never for `None`.
    pub expires_at_ms: Option<u64>,
}

/// The bans and overrides in force, indexed. Its maps are persistent (`imbl`): a view with
/// one change more shares everything else with the view before it, so applying a change costs
/// what it changes however many entries are held.
#[derive(Debug, Default, Clone)]
pub struct ControlView {
    /// Banned networks.
    nets: NetworkIndex<BanHit>,
    /// Banned callers by digest, and the sources that name them (with how many bans each).
    callers: imbl::HashMap<Identity, BanHit>,
    sources: Vec<(SourceSpec, usize)>,
    /// Overrides by (policy number, caller).
    overrides: imbl::HashMap<(u64, Identity), Arc<Applied>>,
    /// The entries, by id, for listing and for removing by id.
    bans: imbl::OrdMap<u64, Ban>,
    listed_overrides: imbl::OrdMap<u64, Override>,
}

impl ControlView {
    /// The view of `contents`; entries that cannot be read are skipped and logged.
    pub fn new(contents: Contents) -> Self {
        let mut view = Self::default();
        view.apply(&Change {
            added: Contents::entries(contents),
            ..Change::default()
        });
        view
    }

    /// Every ban, by id (expired ones included until the ledger drops them).
    pub fn bans(&self) -> &imbl::OrdMap<u64, Ban> {
        &self.bans
    }

    /// Every override, by id (the same).
    pub fn overrides(&self) -> &imbl::OrdMap<u64, Override> {
        &self.listed_overrides
    }

    /// Whether nothing is banned or overridden (the request path then skips the view).
    pub fn is_empty(&self) -> bool {
        self.nets.is_empty() && self.callers.is_empty() && self.overrides.is_empty()
    }

    /// Whether any ban is held.
    pub fn has_bans(&self) -> bool {
        !self.nets.is_empty() || !self.callers.is_empty()
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
        let by_caller = self.sources.iter().filter_map(|(spec, _)| {
            let caller = spec.identity(req, folding, key).ok()??;
            let hit = self.callers.get(&caller)?;
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
        self.nets
            .containing(ip)
            .filter(|hit| in_force(hit.expires_at_ms, now_ms))
            .copied()
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
fn keep_longest<K: std::hash::Hash + Eq + Clone>(
    map: &mut imbl::HashMap<K, BanHit>,
    key: K,
    hit: BanHit,
) {
    let entry = map.entry(key).or_insert(hit);
    if hit.outlasts(entry) {
        *entry = hit;
    }
}

mod apply;
#[cfg(test)]
mod tests;
