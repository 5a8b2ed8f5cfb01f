//! A decision explained: what one request came to and why, kept compact (digests, shared
//! names, fingerprints as their fixed-size types) and turned into JSON only when asked
//! ([`Record::to_json`]) or shipped to the fleet.

use super::step::{Overloaded, Step};
use super::Reference;
use crate::identity::{BotClaim, H2Fp, Identity, Ja4, Proof, Verification};
use crate::telemetry::RequestDecision;
use serde_json::{json, Value};
use smallvec::SmallVec;
use std::sync::Arc;

/// The most bytes of the request's path a record keeps.
pub const MAX_PATH: usize = 256;

/// One request's decision, explained.
#[derive(Debug, Clone)]
pub struct Record {
    /// The request id it is found under.
    pub reference: Reference,
    /// When the request arrived (milliseconds since the epoch).
    pub at_ms: u64,
    /// The request's method.
    pub method: http::Method,
    /// The request's path (its first [`MAX_PATH`] bytes).
    pub path: Box<str>,
    /// The pool the request's route sends it to, when it went that far.
    pub route: Option<Arc<str>>,
    /// The policies that matched and were checked, in order, each with its outcome.
    pub steps: SmallVec<[Step; 1]>,
    /// The caller as the deciding policy named them.
    pub caller: Option<Caller>,
    /// The deciding bucket's state.
    pub bucket: Option<Bucket>,
    /// The crawler the request claimed, and how the claim fared.
    pub bot: Option<Box<BotClaim>>,
    /// The client's TLS fingerprint.
    pub ja4: Option<Ja4>,
    /// The client's HTTP/2 fingerprint.
    pub h2fp: Option<H2Fp>,
    /// The request's bot score and the signals behind it, where it was worked out.
    pub score: Option<crate::identity::Score>,
    /// The digest of the good pass the request carried.
    pub pass: Option<Identity>,
    /// What was known of the verified credentials the request carried (`[identity.verify]`).
    pub proof: Option<crate::identity::ProofState>,
    /// Whether a Privacy Pass token earned the request its pass (`via: "privacy_pass"`).
    pub privacy_pass: bool,
    /// What the site's robots.txt said of the crawler's request (`[robots]`).
    pub robots: Option<Box<crate::identity::RobotsFact>>,
    /// What overload protection made of the request, when its pool is watched.
    pub overload: Option<Overloaded>,
    /// The blocklist entry's reason (CrowdSec's scenario), when it refused.
    pub blocked_by: Option<Arc<str>>,
    /// The final decision, the access log's (`None`: answered before any, a bad head).
    pub decision: Option<RequestDecision>,
    /// The status the client got (0: none was written).
    pub status: u16,
}

/// The caller a policy's bucket belongs to: the identity source that named them and their
/// digest (never the raw value).
#[derive(Debug, Clone)]
pub struct Caller {
    /// The source (`header:x-api-key`, `ip`…), or `None` for the anonymous caller.
    pub source: Option<Arc<str>>,
    /// The caller's digest.
    pub digest: Identity,
}

/// The deciding bucket, before and after the request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    /// Its capacity (a quota's tokens per period).
    pub capacity: u64,
    /// Tokens the request cost.
    pub cost: u64,
    /// Tokens before the request.
    pub before: f64,
    /// Tokens after it (the same when refused: nothing was taken).
    pub after: f64,
    /// Seconds to wait when refused.
    pub retry_after_s: Option<u64>,
}

impl Record {
    /// The record as the control API shows it, from `instance`.
    pub fn to_json(&self, instance: &str) -> Value {
        json!({
            "ref": self.reference.to_string(),
            "at_ms": self.at_ms,
            "instance": instance,
            "method": self.method.as_str(),
            "path": &*self.path,
            "route": self.route.as_deref(),
            "policies": self.steps.iter().map(|s| json!({
                "policy": &*s.policy,
                "outcome": s.said.word(),
                "remaining": s.remaining.map(round),
            })).collect::<Vec<_>>(),
            "identity": self.caller.as_ref().map(|c| json!({
                "source": c.source.as_deref().unwrap_or("anonymous"),
                "digest": c.digest.hex(),
            })),
            "bucket": self.bucket.map(bucket_json),
            "bot": self.bot.as_deref().map(bot_json),
            "ja4": self.ja4.map(|j| j.to_string()),
            "h2fp": self.h2fp.as_ref().map(H2Fp::as_str),
            "score": self.score.map(|s| s.value),
            "signals": self.score.map(|s| s.signals.iter().map(|s| s.word()).collect::<Vec<_>>()),
            "pass": self.pass.map(|p| p.hex()),
            "via": self.privacy_pass.then_some("privacy_pass"),
            "proof": self.proof.map(|p| p.word()),
            "robots": self.robots.as_ref().map(|r| json!({
                "crawler": &*r.crawler,
                "verdict": r.verdict.word(),
                "crawl_delay": r.crawl_delay,
            })),
            "overload": self.overload.map(|o| json!({
                "priority": o.priority.word(),
                "admission": o.admission.word(),
            })),
            "blocked_by": self.blocked_by.as_deref(),
            "decision": self.decision.map_or("", RequestDecision::label),
            "status": self.status,
        })
    }

    /// Whether the request was refused (or shown the challenge page): not forwarded.
    pub fn refused(&self) -> bool {
        self.status >= 400 || self.decision == Some(RequestDecision::Challenged)
    }

    /// About how many bytes the record holds, itself and what it owns alone (shared names
    /// not counted): what [`super::Ring`] budgets per entry.
    pub fn size(&self) -> usize {
        let steps = match self.steps.spilled() {
            true => self.steps.capacity() * std::mem::size_of::<Step>(),
            false => 0,
        };
        std::mem::size_of::<Self>() + self.reference.heap_size() + self.path.len() + steps
    }
}

/// Tokens rounded to thousandths.
fn round(tokens: f64) -> f64 {
    (tokens * 1000.0).round() / 1000.0
}

/// A bucket's JSON.
fn bucket_json(bucket: Bucket) -> Value {
    json!({
        "capacity": bucket.capacity,
        "cost": bucket.cost,
        "tokens_before": round(bucket.before),
        "tokens_after": round(bucket.after),
        "retry_after_s": bucket.retry_after_s,
    })
}

/// A bot claim's JSON.
fn bot_json(bot: &BotClaim) -> Value {
    let verification = match bot.verification {
        Verification::Verified(Proof::Ranges) => "verified (published ranges)",
        Verification::Verified(Proof::ReverseDns) => "verified (reverse DNS)",
        Verification::Verified(Proof::Signature) => "verified (signature)",
        Verification::Unchecked => "unchecked",
        Verification::Unfinished => "unfinished",
        Verification::Failed => "failed",
    };
    json!({
        "name": &*bot.name,
        "operator": &*bot.operator,
        "claimed": bot.claimed.word(),
        "category": bot.category().word(),
        "verification": verification,
    })
}

/// `path` as a record keeps it: its first [`MAX_PATH`] bytes, cut at a character.
pub fn kept_path(path: &str) -> Box<str> {
    let mut end = path.len().min(MAX_PATH);
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    path[..end].into()
}

/// An allowed `GET` of `path` under reference `id` at `at_ms`, with nothing else known: the
/// record the tests here and in ring.rs keep.
#[cfg(test)]
pub(super) fn allowed(id: &str, at_ms: u64, path: &str) -> Record {
    Record {
        reference: Reference::parse(id).unwrap(),
        at_ms,
        method: http::Method::GET,
        path: kept_path(path),
        route: None,
        steps: SmallVec::new(),
        caller: None,
        bucket: None,
        bot: None,
        ja4: None,
        h2fp: None,
        score: None,
        pass: None,
        proof: None,
        privacy_pass: false,
        robots: None,
        overload: None,
        blocked_by: None,
        decision: Some(RequestDecision::Allowed),
        status: 200,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_small() {
        // What configuration.md says of `decisions.keep`: about 450 bytes an entry, its
        // 32-digit id and a short path included (and the ring's pointer, the Arc's counts).
        let fixed = std::mem::size_of::<Record>();
        assert!(fixed <= 400, "{fixed} bytes");
        let record = allowed("0123456789abcdef0123456789abcdef", 1, "/api/items/42");
        let json = record.to_json("i1");
        assert_eq!(json["ref"], "0123456789abcdef0123456789abcdef");
        assert_eq!(
            (&json["status"], &json["instance"]),
            (&200.into(), &"i1".into())
        );
        assert!(record.size() + 24 <= 460, "{}", record.size());
    }

    #[test]
    fn a_long_path_is_cut_at_a_character() {
        let path = "/".to_owned() + &"é".repeat(200);
        let kept = kept_path(&path);
        assert!(kept.len() <= MAX_PATH && kept.len() >= MAX_PATH - 1);
    }
}
