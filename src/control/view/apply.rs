//! How a change is applied to a [`ControlView`]: entries gone are taken out of every index,
//! entries added put in, so a view with one change more shares the rest with the view before.

use super::{keep_longest, Applied, BanHit, ControlView};
use crate::control::change::Change;
use crate::control::entry::{Ban, BanTarget, Entry, Override};
use crate::identity::{Identity, SourceSpec};
use crate::limiter::PolicyKey;
use crate::policy::{Limits, Rate, Size};
use ipnet::IpNet;
use std::sync::Arc;

impl ControlView {
    /// Applies `change`: entries gone first, then those added.
    pub fn apply(&mut self, change: &Change) {
        for id in &change.gone {
            self.remove(*id);
        }
        for entry in &change.added {
            self.remove(entry.id());
            match entry {
                Entry::Ban(ban) => self.add_ban(ban),
                Entry::Override(o) => self.add_override(o),
            }
        }
    }

    fn add_ban(&mut self, ban: &Ban) {
        let hit = BanHit {
            id: ban.id,
            expires_at_ms: ban.expires_at_ms,
        };
        let indexed = match &ban.target {
            BanTarget::Cidr { value } => self.ban_net(value, hit),
            BanTarget::Caller { source, caller } => self.ban_caller(source, caller, hit),
        };
        if indexed {
            self.bans.insert(ban.id, ban.clone());
        }
    }

    fn add_override(&mut self, o: &Override) {
        let size = match o.quota {
            Some(0) => None,
            Some(quota) => Some(Size::Quota(quota)),
            None => o
                .rate
                .parse::<Rate>()
                .ok()
                .and_then(|rate| Limits::new(o.capacity, rate).ok())
                .map(|limits| Size::Bucket(Arc::new(limits))),
        };
        let (Some(size), Some(caller)) = (size, Identity::from_hex(&o.caller)) else {
            log::warn!("override {} cannot be read; it is not applied", o.id);
            return;
        };
        let applied = Arc::new(Applied {
            id: o.id,
            size,
            expires_at_ms: o.expires_at_ms,
        });
        let slot = (PolicyKey::new(&o.policy).id(), caller);
        if self.overrides.get(&slot).is_some_and(|kept| kept.id > o.id) {
            return;
        }
        if let Some(replaced) = self.overrides.insert(slot, applied) {
            self.listed_overrides.remove(&replaced.id);
        }
        self.listed_overrides.insert(o.id, o.clone());
    }

    /// Removes entry `id`, if held.
    fn remove(&mut self, id: u64) {
        if let Some(ban) = self.bans.remove(&id) {
            match &ban.target {
                BanTarget::Cidr { value } => self.unban_net(value, id),
                BanTarget::Caller { source, caller } => self.unban_caller(source, caller, id),
            }
        }
        if let Some(o) = self.listed_overrides.remove(&id) {
            if let Some(caller) = Identity::from_hex(&o.caller) {
                let slot = (PolicyKey::new(&o.policy).id(), caller);
                if self.overrides.get(&slot).is_some_and(|kept| kept.id == id) {
                    self.overrides.remove(&slot);
                }
            }
        }
    }

    /// Indexes a network ban; whether `text` named a network.
    fn ban_net(&mut self, text: &str, hit: BanHit) -> bool {
        let Ok(net) = text.parse::<IpNet>() else {
            log::warn!("ban {} names no network; it is not applied", hit.id);
            return false;
        };
        let longer = self.nets.get(net).is_some_and(|held| !hit.outlasts(held));
        if !longer {
            self.nets.insert(net, hit);
        }
        true
    }

    fn unban_net(&mut self, text: &str, id: u64) {
        let Ok(net) = text.parse::<IpNet>() else {
            return;
        };
        if self.nets.get(net).is_some_and(|hit| hit.id == id) {
            self.nets.remove(net);
        }
    }

    /// Indexes a caller ban; whether it named a source and a caller.
    fn ban_caller(&mut self, source: &str, caller: &str, hit: BanHit) -> bool {
        let (Ok(spec), Some(caller)) = (source.parse::<SourceSpec>(), Identity::from_hex(caller))
        else {
            log::warn!("ban {} names no caller; it is not applied", hit.id);
            return false;
        };
        match self.sources.iter_mut().find(|(held, _)| *held == spec) {
            Some((_, bans)) => *bans += 1,
            None => self.sources.push((spec, 1)),
        }
        keep_longest(&mut self.callers, caller, hit);
        true
    }

    fn unban_caller(&mut self, source: &str, caller: &str, id: u64) {
        let (Ok(spec), Some(caller)) = (source.parse::<SourceSpec>(), Identity::from_hex(caller))
        else {
            return;
        };
        if self.callers.get(&caller).is_some_and(|hit| hit.id == id) {
            self.callers.remove(&caller);
        }
        if let Some(at) = self.sources.iter().position(|(held, _)| *held == spec) {
            self.sources[at].1 -= 1;
            if self.sources[at].1 == 0 {
                self.sources.remove(at);
            }
        }
    }
}
