//! CrowdSec's decisions as the Local API streams them, as Floodgate keeps them (with an end in
//! time instead of a duration), and as blocklist entries.

use crate::control::{Block, Remedy};
use ipnet::IpNet;
use serde::{Deserialize, Deserializer, Serialize};
use std::net::IpAddr;
use std::sync::Arc;

/// One answer of `GET /v1/decisions/stream`: decisions ended or deleted since the last pull,
/// and new ones. LAPI 1.4 sends an empty list as `null`.
#[derive(Debug, Default, Deserialize)]
pub struct Pulled {
    /// Decisions to drop (ended, or deleted with `cscli`).
    #[serde(default, deserialize_with = "null_as_empty")]
    pub deleted: Vec<LapiDecision>,
    /// Decisions to apply.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub new: Vec<LapiDecision>,
}

/// A decision as LAPI sends it.
#[derive(Debug, Clone, Deserialize)]
pub struct LapiDecision {
    /// Its number at LAPI.
    pub id: u64,
    /// How long it still lasts, as Go writes durations (`3h59m58.8s`, `-104ms`).
    pub duration: String,
    /// Who made it (`crowdsec`, `cscli`, `CAPI`, `lists`).
    #[serde(default)]
    pub origin: String,
    /// Why (the scenario).
    #[serde(default)]
    pub scenario: String,
    /// What `value` is (`Ip`, `Range`).
    pub scope: String,
    /// The remediation (`ban`, `captcha`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// The address or range.
    pub value: String,
}

/// A decision as the fleet keeps it (in Redis, or in this process).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Held {
    /// Its number at LAPI.
    pub id: u64,
    /// The address or range.
    pub value: String,
    /// The remediation (`ban`, `captcha`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// Why (the scenario).
    pub scenario: String,
    /// When it ends, Unix milliseconds.
    pub expires_at_ms: u64,
}

impl LapiDecision {
    /// The decision kept from `now_ms` on; `None` when it already ended or its duration
    /// cannot be read.
    pub fn held(&self, now_ms: u64) -> Option<Held> {
        let left = go_duration_ms(&self.duration)?;
        (left > 0).then(|| Held {
            id: self.id,
            value: self.value.clone(),
            kind: self.kind.clone(),
            scenario: self.scenario.clone(),
            expires_at_ms: now_ms.saturating_add(left as u64),
        })
    }
}

impl Held {
    /// The blocklist entry: `ban` bans, `captcha` does what `on_captcha` says (the challenge
    /// by default), `throttle` throttles, and any other remediation bans, as CrowdSec's
    /// own components fall back to. `None` when the value is no address or range.
    pub fn block(&self, on_captcha: Remedy) -> Option<Block> {
        let net = match self.value.parse::<IpAddr>() {
            Ok(ip) => IpNet::from(ip.to_canonical()),
            Err(_) => self.value.parse::<IpNet>().ok()?,
        };
        let remedy = match self.kind.to_ascii_lowercase().as_str() {
            "captcha" => on_captcha,
            "throttle" => Remedy::Throttle,
            _ => Remedy::Ban,
        };
        Some(Block {
            id: self.id,
            net,
            remedy,
            expires_at_ms: self.expires_at_ms,
            reason: Arc::from(format!("crowdsec:{}", self.scenario)),
        })
    }
}

fn null_as_empty<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<LapiDecision>, D::Error> {
    Ok(Option::<Vec<LapiDecision>>::deserialize(d)?.unwrap_or_default())
}

/// Milliseconds in a Go duration (`1h2m3.5s`, `-104.4ms`, `250us`), rounded toward zero.
pub fn go_duration_ms(text: &str) -> Option<i64> {
    let (sign, mut rest) = match text.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, text.strip_prefix('+').unwrap_or(text)),
    };
    match rest {
        "" => return None,
        "0" => return Some(0),
        _ => {}
    }
    let mut total_ms = 0.0_f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&n| n > 0)?;
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let ms_per_unit = match &rest[..unit_len] {
            "h" => 3_600_000.0,
            "m" => 60_000.0,
            "s" => 1_000.0,
            "ms" => 1.0,
            "us" | "µs" | "μs" => 0.001,
            "ns" => 0.000_001,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total_ms += number * ms_per_unit;
    }
    Some((sign * total_ms) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_are_read_as_lapi_writes_them() {
        assert_eq!(go_duration_ms("3h59m58.839862394s"), Some(14_398_839));
        assert_eq!(go_duration_ms("29.839864201s"), Some(29_839));
        assert_eq!(go_duration_ms("-104.426132ms"), Some(-104));
        assert_eq!(go_duration_ms("-5m34.58751153s"), Some(-334_587));
        assert_eq!(go_duration_ms("1h"), Some(3_600_000));
        assert_eq!(go_duration_ms("250us"), Some(0));
        assert_eq!(go_duration_ms("0"), Some(0));
        for bad in ["", "h", "5", "5x", "1h-2m", "--1s"] {
            assert_eq!(go_duration_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_stream_answer_with_null_lists_is_empty_and_decisions_become_entries() {
        let empty: Pulled = serde_json::from_str(r#"{"deleted":null,"new":null}"#).unwrap();
        assert!(empty.deleted.is_empty() && empty.new.is_empty());
        let text = r#"{"deleted":[],"new":[
            {"duration":"1m","id":2,"origin":"cscli","scenario":"s","scope":"Range","type":"ban","value":"198.51.100.0/24"},
            {"duration":"2s","id":3,"origin":"crowdsec","scenario":"crowdsecurity/http-probing","scope":"Ip","type":"captcha","value":"2001:db8::7"},
            {"duration":"-1s","id":4,"origin":"cscli","scenario":"s","scope":"Ip","type":"ban","value":"192.0.2.1"}]}"#;
        let pulled: Pulled = serde_json::from_str(text).unwrap();
        let held: Vec<Held> = pulled.new.iter().filter_map(|d| d.held(1_000)).collect();
        assert_eq!(held.len(), 2, "the ended one is not kept");
        assert_eq!(held[0].expires_at_ms, 61_000);
        let range = held[0].block(Remedy::Ban).unwrap();
        assert_eq!(
            (range.net.to_string().as_str(), range.remedy),
            ("198.51.100.0/24", Remedy::Ban)
        );
        let captcha = held[1].block(Remedy::Throttle).unwrap();
        assert_eq!(captcha.remedy, Remedy::Throttle);
        assert_eq!(&*captcha.reason, "crowdsec:crowdsecurity/http-probing");
        let odd = Held {
            value: "FR".into(),
            ..held[0].clone()
        };
        assert_eq!(odd.block(Remedy::Ban), None);
    }
}
