//! Hosting and cloud networks: the shipped, dated `hosting.toml` with `[bots.score]
//! hosting_asns` added, looked up by binary search.

use serde::Deserialize;

/// The shipped list.
const SHIPPED: &str = include_str!("hosting.toml");

/// `hosting.toml` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    updated: String,
    #[allow(dead_code)]
    sources: Vec<String>,
    asns: Vec<u32>,
}

/// The networks whose addresses raise `hosting-network`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostingNetworks {
    /// When the shipped list was last edited.
    pub updated: String,
    /// Sorted, without repeats.
    asns: Vec<u32>,
}

impl HostingNetworks {
    /// The shipped list with `extra` added.
    pub fn shipped_and(extra: &[u32]) -> Self {
        let file: File = toml::from_str(SHIPPED).expect("the shipped hosting.toml is tested");
        let mut asns = file.asns;
        asns.extend_from_slice(extra);
        asns.sort_unstable();
        asns.dedup();
        Self {
            updated: file.updated,
            asns,
        }
    }

    /// Whether `asn` is a hosting or cloud network.
    pub fn contains(&self, asn: u32) -> bool {
        self.asns.binary_search(&asn).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_list_reads_and_takes_additions() {
        let networks = HostingNetworks::shipped_and(&[64500]);
        assert!(networks.contains(16509), "AWS");
        assert!(networks.contains(24940), "Hetzner");
        assert!(networks.contains(64500), "added");
        assert!(!networks.contains(3320), "Deutsche Telekom is no host");
        assert_eq!(networks.updated, "2026-11-28");
    }
}
