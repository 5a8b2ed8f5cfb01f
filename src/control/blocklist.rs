//! Addresses and networks refused on another system's word (CrowdSec's decisions), held as
//! they come (a range is never expanded into addresses) and indexed by prefix length, so a
//! lookup costs one hash probe per distinct length held, whatever the number of entries.

use crate::identity::NetworkIndex;
use ipnet::IpNet;
use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::Arc;

/// What a blocked client gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Remedy {
    /// The throttled answer (429 and `Retry-After`) instead of 403.
    Throttle,
    /// The banned answer (403), as an operator's ban.
    Ban,
    /// A challenge for a page load (a pass answers it); the banned answer for anything else.
    Challenge,
}

impl Remedy {
    /// Its name in config and in the `remedy` label (`ban`, `throttle`).
    pub fn word(self) -> &'static str {
        match self {
            Remedy::Ban => "ban",
            Remedy::Throttle => "throttle",
            Remedy::Challenge => "challenge",
        }
    }
}

/// One entry: a network (one address is a /32 or /128) refused until a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The entry's number at its source (CrowdSec's decision id).
    pub id: u64,
    /// Whom it refuses.
    pub net: IpNet,
    /// What they get.
    pub remedy: Remedy,
    /// When it ends, Unix milliseconds.
    pub expires_at_ms: u64,
    /// Why, for the log line (CrowdSec's scenario); never in an answer.
    pub reason: Arc<str>,
}

/// Every entry in force, indexed for the request path.
#[derive(Debug, Default, Clone)]
pub struct Blocklist {
    by_id: HashMap<u64, Block>,
    /// Entry ids by when they end, so ending them costs nothing while none is due.
    by_end: BTreeSet<(u64, u64)>,
    /// Entry ids by network.
    nets: NetworkIndex<Vec<u64>>,
}

impl Blocklist {
    /// How many entries are held.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether nothing is held (the request path then skips the list).
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Adds `block`, replacing an entry with the same id.
    pub fn insert(&mut self, block: Block) {
        self.remove(block.id);
        match self.nets.get_mut(block.net) {
            Some(ids) => ids.push(block.id),
            None => {
                self.nets.insert(block.net, vec![block.id]);
            }
        }
        self.by_end.insert((block.expires_at_ms, block.id));
        self.by_id.insert(block.id, block);
    }

    /// Removes entry `id`; whether it was held.
    pub fn remove(&mut self, id: u64) -> bool {
        let Some(block) = self.by_id.remove(&id) else {
            return false;
        };
        self.by_end.remove(&(block.expires_at_ms, id));
        if let Some(ids) = self.nets.get_mut(block.net) {
            ids.retain(|held| *held != id);
            if ids.is_empty() {
                self.nets.remove(block.net);
            }
        }
        true
    }

    /// Drops every entry ended by `now_ms`; how many.
    pub fn expire(&mut self, now_ms: u64) -> usize {
        let mut ended = 0;
        while let Some(&(end, id)) = self.by_end.first() {
            if end > now_ms {
                break;
            }
            self.remove(id);
            ended += 1;
        }
        ended
    }

    /// The entry refusing `ip` at `now_ms`, if any: a ban before a throttle, then the one
    /// lasting longest.
    pub fn find(&self, ip: IpAddr, now_ms: u64) -> Option<&Block> {
        self.nets
            .containing(ip)
            .flatten()
            .filter_map(|id| self.by_id.get(id))
            .filter(|b| b.expires_at_ms > now_ms)
            .max_by_key(|b| (b.remedy, b.expires_at_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_remedy_is_a_label_shown_at_zero() {
        let words = [Remedy::Ban, Remedy::Throttle, Remedy::Challenge].map(Remedy::word);
        assert_eq!(words, crate::telemetry::BLOCK_REMEDIES);
    }

    fn block(id: u64, net: &str, remedy: Remedy, expires_at_ms: u64) -> Block {
        Block {
            id,
            net: net.parse().unwrap(),
            remedy,
            expires_at_ms,
            reason: Arc::from("test"),
        }
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn addresses_and_ranges_refuse_what_they_hold_until_they_end() {
        let mut list = Blocklist::default();
        list.insert(block(1, "203.0.113.7/32", Remedy::Ban, 1_000));
        list.insert(block(2, "198.51.100.0/24", Remedy::Throttle, 2_000));
        list.insert(block(3, "2001:db8::/48", Remedy::Ban, 3_000));
        assert_eq!(list.find(ip("203.0.113.7"), 0).map(|b| b.id), Some(1));
        assert_eq!(list.find(ip("203.0.113.8"), 0), None);
        assert_eq!(list.find(ip("198.51.100.200"), 0).map(|b| b.id), Some(2));
        assert_eq!(
            list.find(ip("::ffff:198.51.100.1"), 0).map(|b| b.id),
            Some(2)
        );
        assert_eq!(list.find(ip("2001:db8:0:1::9"), 0).map(|b| b.id), Some(3));
        assert_eq!(list.find(ip("203.0.113.7"), 1_000), None, "ended");
        assert_eq!(list.expire(1_500), 1);
        assert_eq!(list.len(), 2);
    }

    #[test]
    fn a_ban_beats_a_throttle_and_removing_one_decision_keeps_the_other() {
        let mut list = Blocklist::default();
        list.insert(block(1, "10.0.0.1/32", Remedy::Throttle, 9_000));
        list.insert(block(2, "10.0.0.0/8", Remedy::Ban, 5_000));
        list.insert(block(3, "10.0.0.1/32", Remedy::Ban, 4_000));
        assert_eq!(list.find(ip("10.0.0.1"), 0).map(|b| b.id), Some(2));
        assert!(list.remove(2));
        assert_eq!(list.find(ip("10.0.0.1"), 0).map(|b| b.id), Some(3));
        assert!(list.remove(3));
        assert_eq!(list.find(ip("10.0.0.1"), 0).map(|b| b.id), Some(1));
        assert!(!list.remove(3), "removing twice changes nothing");
        assert!(list.remove(1));
        assert!(list.is_empty() && list.nets.is_empty());
        assert!(list.by_end.is_empty());
    }

    #[test]
    fn replacing_an_entry_by_id_moves_it() {
        let mut list = Blocklist::default();
        list.insert(block(7, "10.0.0.1/32", Remedy::Ban, 9_000));
        list.insert(block(7, "10.0.0.2/32", Remedy::Ban, 9_000));
        assert_eq!(list.find(ip("10.0.0.1"), 0), None);
        assert_eq!(list.find(ip("10.0.0.2"), 0).map(|b| b.id), Some(7));
        assert_eq!(list.len(), 1);
    }
}
