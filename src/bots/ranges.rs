//! A crawler's published address ranges: the JSON file Google, Bing and OpenAI publish
//! (`{"creationTime": …, "prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix": …}]}`)
//! or a plain JSON array of CIDR strings, kept as sorted, disjoint prefixes so that a lookup
//! is one binary search.

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use serde_json::Value;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// The address ranges a crawler publishes, IPv4 and IPv6.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ranges {
    /// Disjoint IPv4 prefixes, sorted.
    v4: Vec<Ipv4Net>,
    /// Disjoint IPv6 prefixes, sorted.
    v6: Vec<Ipv6Net>,
    /// How many prefixes the file listed.
    prefixes: usize,
}

/// Why a ranges file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RangesError {
    /// The text is not JSON.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The JSON is neither `{"prefixes": [...]}` nor an array of strings.
    #[error("{0}")]
    Shape(String),
    /// An entry is not an address or CIDR prefix.
    #[error("{at}: `{text}` is not a CIDR prefix ({reason})")]
    BadCidr {
        /// Where in the document (`prefixes[3].ipv4Prefix`, `[2]`).
        at: String,
        /// The text found there.
        text: String,
        /// What the parser said.
        reason: String,
    },
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file was read but its content is wrong.
    #[error("{}: {source}", path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: Box<RangesError>,
    },
}

impl Ranges {
    /// Reads the published format (`prefixes` of `ipv4Prefix`/`ipv6Prefix` objects; other keys
    /// such as `creationTime` are ignored) or a plain array of CIDR strings. A bare address
    /// counts as a prefix of one address.
    pub fn parse(json: &str) -> Result<Ranges, RangesError> {
        let value: Value = serde_json::from_str(json)?;
        let entries = entries(&value)?;
        let mut nets = Vec::with_capacity(entries.len());
        for (at, text) in entries {
            nets.push(of_its_family(&at, cidr(&at, text)?)?);
        }
        Ok(Self::from_nets(&nets))
    }

    /// Reads and parses `path`; the error names the file.
    pub fn load(path: &Path) -> Result<Ranges, RangesError> {
        let text = std::fs::read_to_string(path).map_err(|source| RangesError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text).map_err(|source| RangesError::InFile {
            path: path.to_owned(),
            source: Box::new(source),
        })
    }

    /// Whether `ip` (an IPv4-mapped IPv6 address counts as its IPv4 address) is in a range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match ip.to_canonical() {
            IpAddr::V4(ip) => within(&self.v4, ip, |n| n.network(), |n| n.contains(&ip)),
            IpAddr::V6(ip) => within(&self.v6, ip, |n| n.network(), |n| n.contains(&ip)),
        }
    }

    /// How many prefixes were listed.
    pub fn len(&self) -> usize {
        self.prefixes
    }

    /// Whether no prefix was listed.
    pub fn is_empty(&self) -> bool {
        self.prefixes == 0
    }

    fn from_nets(nets: &[IpNet]) -> Self {
        let mut v4 = Vec::new();
        let mut v6 = Vec::new();
        for net in nets {
            match net {
                IpNet::V4(n) => v4.push(*n),
                IpNet::V6(n) => v6.push(*n),
            }
        }
        // Overlapping and adjacent prefixes joined; the result is sorted and disjoint.
        let (mut v4, mut v6) = (Ipv4Net::aggregate(&v4), Ipv6Net::aggregate(&v6));
        v4.sort_unstable();
        v6.sort_unstable();
        Self {
            v4,
            v6,
            prefixes: nets.len(),
        }
    }
}

/// The prefix strings of a document, each with where it stood.
fn entries(value: &Value) -> Result<Vec<(String, &Value)>, RangesError> {
    match value {
        Value::Array(items) => Ok(items
            .iter()
            .enumerate()
            .map(|(i, item)| (format!("[{i}]"), item))
            .collect()),
        Value::Object(map) => match map.get("prefixes") {
            Some(Value::Array(items)) => items.iter().enumerate().map(prefix_entry).collect(),
            Some(_) => Err(shape("`prefixes` is not an array")),
            None => Err(shape(
                "expected {\"prefixes\": [{\"ipv4Prefix\": …}, …]} or an array of CIDR strings",
            )),
        },
        _ => Err(shape(
            "expected {\"prefixes\": [...]} or an array of CIDR strings",
        )),
    }
}

/// One `{"ipv4Prefix": …}` or `{"ipv6Prefix": …}` object of `prefixes`.
fn prefix_entry((i, item): (usize, &Value)) -> Result<(String, &Value), RangesError> {
    if item.get("ipv4Prefix").is_some() && item.get("ipv6Prefix").is_some() {
        return Err(shape(&format!(
            "prefixes[{i}] has both `ipv4Prefix` and `ipv6Prefix`"
        )));
    }
    for key in ["ipv4Prefix", "ipv6Prefix"] {
        if let Some(text) = item.get(key) {
            return Ok((format!("prefixes[{i}].{key}"), text));
        }
    }
    Err(shape(&format!(
        "prefixes[{i}] has neither `ipv4Prefix` nor `ipv6Prefix`"
    )))
}

fn shape(message: &str) -> RangesError {
    RangesError::Shape(message.to_owned())
}

/// `net`, refused when the key at `at` names the other family (`ipv4Prefix` holding an IPv6
/// prefix).
fn of_its_family(at: &str, net: IpNet) -> Result<IpNet, RangesError> {
    let wrong = match net {
        IpNet::V4(_) => at.ends_with("ipv6Prefix"),
        IpNet::V6(_) => at.ends_with("ipv4Prefix"),
    };
    match wrong {
        true => Err(RangesError::BadCidr {
            at: at.to_owned(),
            text: net.to_string(),
            reason: "the other address family".to_owned(),
        }),
        false => Ok(net),
    }
}

/// A CIDR prefix (host bits cleared) or a bare address.
fn cidr(at: &str, value: &Value) -> Result<IpNet, RangesError> {
    let bad = |text: String, reason: String| RangesError::BadCidr {
        at: at.to_owned(),
        text,
        reason,
    };
    let Value::String(text) = value else {
        return Err(bad(value.to_string(), "not a string".to_owned()));
    };
    let text = text.trim();
    if let Ok(net) = text.parse::<IpNet>() {
        return Ok(net.trunc());
    }
    text.parse::<IpAddr>()
        .map(IpNet::from)
        .map_err(|e| bad(text.to_owned(), e.to_string()))
}

/// Whether `x` is in one of the sorted disjoint `nets` (as `ipnet`'s `aggregate` leaves them).
fn within<N: Copy, A: Ord>(
    nets: &[N],
    x: A,
    network: impl Fn(N) -> A,
    has: impl Fn(N) -> bool,
) -> bool {
    // The first net starting after x; the one before it is the only candidate.
    let after = nets.partition_point(|&net| network(net) <= x);
    after > 0 && has(nets[after - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    const GOOGLE: &str = r#"{"creationTime": "2026-11-20T14:46:09.000000",
        "prefixes": [{"ipv6Prefix": "2001:4860:4801:10::/64"},
                     {"ipv4Prefix": "66.249.64.0/27"},
                     {"ipv4Prefix": "66.249.64.32/27"},
                     {"ipv4Prefix": "66.249.79.0/27"}]}"#;

    #[test]
    fn the_published_format_is_read() {
        let ranges = Ranges::parse(GOOGLE).unwrap();
        assert_eq!(ranges.len(), 4);
        for inside in ["66.249.64.0", "66.249.64.31", "66.249.64.63", "66.249.79.7"] {
            assert!(ranges.contains(ip(inside)), "{inside}");
        }
        for outside in ["66.249.64.64", "66.249.63.255", "66.249.79.32", "10.0.0.1"] {
            assert!(!ranges.contains(ip(outside)), "{outside}");
        }
        assert!(ranges.contains(ip("2001:4860:4801:10::1")));
        assert!(!ranges.contains(ip("2001:4860:4801:11::1")));
        assert!(
            ranges.contains(ip("::ffff:66.249.64.5")),
            "an IPv4-mapped address is its IPv4 address"
        );
    }

    #[test]
    fn a_plain_array_of_cidrs_is_read() {
        let ranges = Ranges::parse(r#"["192.0.2.0/24", "2001:db8::/32", "198.51.100.7"]"#).unwrap();
        assert_eq!(ranges.len(), 3);
        assert!(ranges.contains(ip("192.0.2.200")));
        assert!(ranges.contains(ip("2001:db8:ffff::1")));
        assert!(ranges.contains(ip("198.51.100.7")));
        assert!(!ranges.contains(ip("198.51.100.8")));
        assert!(Ranges::parse("[]").unwrap().is_empty());
    }

    #[test]
    fn lookups_agree_with_a_scan_of_every_prefix() {
        // A small linear congruential generator: the same prefixes and probes every run.
        let mut state = 0x2545_f491_u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 32) as u32
        };
        let nets: Vec<IpNet> = (0..300)
            .map(|_| {
                let addr = std::net::Ipv4Addr::from(next() & 0x0fff_ffff);
                IpNet::V4(
                    Ipv4Net::new(addr, 12 + (next() % 21) as u8)
                        .unwrap()
                        .trunc(),
                )
            })
            .collect();
        let ranges = Ranges::from_nets(&nets);
        let mut hits = 0;
        for _ in 0..20_000 {
            let probe = IpAddr::from(std::net::Ipv4Addr::from(next() & 0x0fff_ffff));
            let scanned = nets.iter().any(|n| n.contains(&probe));
            assert_eq!(ranges.contains(probe), scanned, "{probe}");
            hits += usize::from(scanned);
        }
        assert!(
            hits > 100 && hits < 19_900,
            "{hits} hits: probes both in and out"
        );
    }

    #[test]
    fn host_bits_and_overlaps_are_folded() {
        let ranges =
            Ranges::parse(r#"["10.0.0.5/8", "10.1.0.0/16", "11.0.0.0/8", "255.255.255.255/32"]"#)
                .unwrap();
        let joined: Vec<Ipv4Net> = ["10.0.0.0/7", "255.255.255.255/32"]
            .iter()
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(ranges.v4, joined);
        assert_eq!(ranges.len(), 4, "the count is of the prefixes listed");
        assert!(ranges.contains(ip("255.255.255.255")));
        assert!(!ranges.contains(ip("254.0.0.0")));
        assert!(!ranges.contains(ip("9.255.255.255")));
        assert!(!ranges.contains(ip("12.0.0.0")));
    }

    #[test]
    fn a_bad_cidr_is_named_with_its_place() {
        let err = Ranges::parse(
            r#"{"prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv4Prefix": "66.249.64.0/33"}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("prefixes[1].ipv4Prefix: `66.249.64.0/33`"),
            "{err}"
        );
        let err = Ranges::parse(r#"["192.0.2.0/24", "googlebot"]"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("[1]: `googlebot` is not a CIDR prefix"),
            "{err}"
        );
        let err = Ranges::parse(r#"[42]"#).unwrap_err().to_string();
        assert!(
            err.contains("`42`") && err.contains("not a string"),
            "{err}"
        );
    }

    #[test]
    fn bad_json_and_bad_shapes_are_errors() {
        assert!(matches!(Ranges::parse("{"), Err(RangesError::Json(_))));
        for (json, says) in [
            (r#"{"creationTime": "x"}"#, "expected"),
            (r#"{"prefixes": 3}"#, "not an array"),
            (
                r#"{"prefixes": [{"prefix": "1.2.3.0/24"}]}"#,
                "prefixes[0] has neither",
            ),
            ("\"1.2.3.0/24\"", "expected"),
        ] {
            let err = Ranges::parse(json).unwrap_err().to_string();
            assert!(err.contains(says), "{json}: {err}");
        }
    }

    #[test]
    fn load_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("googlebot.json");
        std::fs::write(&path, r#"["not a cidr"]"#).unwrap();
        let err = Ranges::load(&path).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}: [0]:", path.display())),
            "{err}"
        );
        let missing = dir.path().join("missing.json");
        let err = Ranges::load(&missing).unwrap_err().to_string();
        assert!(err.starts_with(&missing.display().to_string()), "{err}");
        std::fs::write(&path, GOOGLE).unwrap();
        assert_eq!(Ranges::load(&path).unwrap().len(), 4);
    }
}
