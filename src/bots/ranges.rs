//! A crawler's published address ranges: the JSON file Google, Bing and OpenAI publish
//! (`{"creationTime": …, "prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix": …}]}`)
//! or a plain JSON array of CIDR strings, kept as sorted, merged intervals so that a lookup is
//! one binary search.

use ipnet::IpNet;
use serde_json::Value;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// The address ranges a crawler publishes, IPv4 and IPv6.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ranges {
    /// Disjoint, sorted, inclusive intervals of IPv4 addresses.
    v4: Vec<(u32, u32)>,
    /// Disjoint, sorted, inclusive intervals of IPv6 addresses.
    v6: Vec<(u128, u128)>,
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
            nets.push(cidr(&at, text)?);
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
            IpAddr::V4(v4) => within(&self.v4, u32::from(v4)),
            IpAddr::V6(v6) => within(&self.v6, u128::from(v6)),
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
                IpNet::V4(n) => v4.push((u32::from(n.network()), u32::from(n.broadcast()))),
                IpNet::V6(n) => v6.push((u128::from(n.network()), u128::from(n.broadcast()))),
            }
        }
        Self {
            v4: merged(v4),
            v6: merged(v6),
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

/// Sorts and joins overlapping or adjacent intervals.
fn merged<T: Ord + Copy + num_like::Successor>(mut intervals: Vec<(T, T)>) -> Vec<(T, T)> {
    intervals.sort_unstable();
    let mut out: Vec<(T, T)> = Vec::with_capacity(intervals.len());
    for (start, end) in intervals {
        match out.last_mut() {
            Some(last) if last.1.successor().is_none_or(|next| start <= next) => {
                last.1 = last.1.max(end);
            }
            _ => out.push((start, end)),
        }
    }
    out
}

/// Whether `x` is in one of the sorted disjoint `intervals`.
fn within<T: Ord + Copy>(intervals: &[(T, T)], x: T) -> bool {
    // The first interval starting after x; the one before it is the only candidate.
    let after = intervals.partition_point(|&(start, _)| start <= x);
    after > 0 && x <= intervals[after - 1].1
}

mod num_like {
    /// The next value, if any (to join adjacent intervals).
    pub(super) trait Successor: Sized {
        fn successor(self) -> Option<Self>;
    }
    impl Successor for u32 {
        fn successor(self) -> Option<Self> {
            self.checked_add(1)
        }
    }
    impl Successor for u128 {
        fn successor(self) -> Option<Self> {
            self.checked_add(1)
        }
    }
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
    fn host_bits_and_overlaps_are_folded() {
        let ranges =
            Ranges::parse(r#"["10.0.0.5/8", "10.1.0.0/16", "11.0.0.0/8", "255.255.255.255/32"]"#)
                .unwrap();
        assert_eq!(
            ranges.v4,
            vec![
                (u32::from(ip4("10.0.0.0")), u32::from(ip4("11.255.255.255"))),
                (u32::MAX, u32::MAX)
            ]
        );
        assert!(ranges.contains(ip("255.255.255.255")));
        assert!(!ranges.contains(ip("254.0.0.0")));
        assert!(!ranges.contains(ip("9.255.255.255")));
        assert!(!ranges.contains(ip("12.0.0.0")));
    }

    fn ip4(text: &str) -> std::net::Ipv4Addr {
        text.parse().unwrap()
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
