//! Every label vocabulary, as enums: each has `ALL` (label order, so counters can be resolved
//! once into arrays indexed by the variant) and `label()`.

/// A closed set of label values.
pub trait Vocabulary: Copy + 'static {
    /// Every value, in label order.
    const ALL: &'static [Self];
    /// The label value.
    fn label(self) -> &'static str;
    /// The position in `ALL`.
    fn index(self) -> usize;
}

/// Declares a label enum with its variants' label values, `ALL` and `label()`.
macro_rules! vocabulary {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $label:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)+
        }

        impl $name {
            /// Every value, in label order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// How many values there are: the length of arrays indexed by the variant.
            pub const COUNT: usize = $name::ALL.len();

            /// The label value.
            pub fn label(self) -> &'static str {
                match self {
                    $($name::$variant => $label,)+
                }
            }
        }

        impl Vocabulary for $name {
            const ALL: &'static [Self] = $name::ALL;
            fn label(self) -> &'static str {
                $name::label(self)
            }
            fn index(self) -> usize {
                self as usize
            }
        }
    };
}

vocabulary! {
    /// What one policy made of a request: its outcome as that policy saw it (the `decision`
    /// label of `floodgate_requests_total`, a label the dashboards know; in the code a
    /// "decision" is the gate's whole record of a request).
    PolicyOutcome {
        /// The request passed.
        Allowed => "allowed",
        /// This policy's bucket was short and the request was refused.
        Throttled => "throttled",
        /// This policy's bucket had the tokens, but another policy refused the request, so
        /// nothing was taken here.
        ThrottledByOther => "throttled_by_other",
        /// This shadow policy's bucket was short; the request was let through.
        ShadowThrottled => "shadow_throttled",
        /// The store could not decide.
        Error => "error",
        /// This `deny` policy matched and refused the request (403, no bucket touched).
        Denied => "denied",
        /// This `deny` policy in shadow mode matched; the request went on.
        ShadowDenied => "shadow_denied",
        /// This `allow` policy matched and the request skipped every limit.
        AllowedByRule => "allowed_by_rule",
        /// This `allow` policy in shadow mode matched; the limits still applied.
        ShadowAllowed => "shadow_allowed",
        /// This `challenge` policy matched a page load without a good pass: it got the
        /// challenge page.
        Challenged => "challenged",
        /// This `challenge` policy in shadow mode would have challenged the request.
        ShadowChallenged => "shadow_challenged",
    }
}

vocabulary! {
    /// What became of a request, by one name: the access log's `decision` word, the decision
    /// record's `decision` (`GET /v1/decisions/{ref}`), the span's `floodgate.decision` and the
    /// `decision` label of `floodgate_decisions_total`. (Each policy's own view of the request
    /// is a [`PolicyOutcome`].)
    RequestDecision {
        /// Every enforcing bucket paid: forwarded.
        Allowed => "allowed",
        /// A bucket, a blocklist throttle, `max_in_flight` or a cost above the capacity
        /// refused it (429).
        Throttled => "throttled",
        /// No enforcing policy applied: forwarded.
        Unlimited => "unlimited",
        /// On the allow-list: forwarded.
        Allowlisted => "allowlisted",
        /// On the deny-list (403).
        Denylisted => "denylisted",
        /// Banned by an operator or the blocklist (403).
        Banned => "banned",
        /// Caught by the robots.txt trap (403).
        Trapped => "trapped",
        /// Refused by a `deny` policy (403).
        Denied => "denied",
        /// Let past the limits by an `allow` policy: forwarded.
        AllowedByRule => "allowed_by_rule",
        /// A bearer token did not verify (401).
        InvalidToken => "invalid_token",
        /// A verified source was sent twice (400).
        AmbiguousCredential => "ambiguous_credential",
        /// A revoked credential refused at the edge (403).
        KeyRefused => "key_refused",
        /// A cost header was malformed or too large (400).
        BadCost => "bad_cost",
        /// The store failed; the request was let through.
        StoreError => "store_error",
        /// The store failed; the request was refused (503).
        StoreUnavailable => "store_unavailable",
        /// Answered with the challenge page.
        Challenged => "challenged",
        /// Forwarded by the gate, then shed: the backend was overloaded (503).
        Shed => "shed",
        /// A pass was issued: a challenge's solution earned it, or a Privacy Pass token did
        /// (then the request goes on).
        PassIssued => "pass_issued",
        /// A challenge's solution was wrong, stale or replayed: a new page.
        SolutionRefused => "solution_refused",
        /// A solution's nonce did not open here: sent back.
        NonceRefused => "nonce_refused",
        /// Not a solution (400, 405).
        SolutionMalformed => "solution_malformed",
        /// No challenge page or pass could be made (503).
        ChallengeUnavailable => "challenge_unavailable",
        /// `/robots.txt`, answered from Floodgate's copy.
        RobotsTxt => "robots_txt",
    }
}

vocabulary! {
    /// Why a request could not be proxied (`kind` of `floodgate_upstream_errors_total`).
    UpstreamErrorKind {
        /// No connection to a backend.
        Connect => "connect",
        /// A backend did not answer in time.
        Timeout => "timeout",
        /// Anything else that went wrong upstream.
        Other => "other",
        /// The backend failed after the response had started, so the client's response was
        /// aborted (never rewritten).
        Aborted => "aborted",
    }
}

pub use floodgate_limiter::StoreErrorKind;

// The store's error kinds are the limiter crate's; they are labels like every other here.
impl Vocabulary for StoreErrorKind {
    const ALL: &'static [Self] = &StoreErrorKind::ALL;
    fn label(self) -> &'static str {
        StoreErrorKind::label(self)
    }
    fn index(self) -> usize {
        self as usize
    }
}

vocabulary! {
    /// How a config reload ended (`result` of `floodgate_config_reloads_total`).
    ReloadResult {
        /// The new config serves.
        Success => "success",
        /// The file was refused; the running config stays.
        Failure => "failure",
    }
}

vocabulary! {
    /// Which access list a request was on (`list` of `floodgate_access_total`).
    AccessList {
        /// The allow-list: not limited.
        Allow => "allow",
        /// The deny-list: refused with 403.
        Deny => "deny",
    }
}

vocabulary! {
    /// Why a downstream connection was closed as soon as it was accepted (`reason` of
    /// `floodgate_connections_refused_total`).
    ConnectionRefusal {
        /// `server.max_connections` were open.
        Total => "total",
        /// `server.max_connections_per_ip` were open from the same client address.
        PerIp => "per_ip",
    }
}

vocabulary! {
    /// What settling a reservation did (`result` of `floodgate_settles_total`).
    SettleResult {
        /// Tokens were given back: a status not counted, or usage below the reservation.
        Refunded => "refunded",
        /// More was taken: usage above the reservation (the bucket may go into debt).
        Charged => "charged",
        /// The reservation stands: a counted status, usage equal to it, or no usage header.
        Kept => "kept",
        /// The store could not settle; the reservation stands.
        Failed => "failed",
    }
}

vocabulary! {
    /// What `max_delay` did (`result` of `floodgate_held_total`).
    HeldResult {
        /// The request was held until its tokens (or a slot) were there, then forwarded.
        Held => "held",
        /// The request was refused: `max_held` requests were already held.
        Overflow => "overflow",
    }
}

vocabulary! {
    /// A penalty event (`event` of `floodgate_penalties_total`).
    PenaltyEvent {
        /// A refusal started a block of `block_for`.
        Started => "started",
        /// A standing block refused a request.
        Refused => "refused",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_each_variant_at_its_own_index() {
        for (i, d) in PolicyOutcome::ALL.iter().enumerate() {
            assert_eq!(*d as usize, i);
        }
        for (i, k) in UpstreamErrorKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
        }
        for (i, k) in StoreErrorKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
        }
        assert_eq!(ReloadResult::Failure.label(), "failure");
        assert_eq!(AccessList::Deny.label(), "deny");
        assert_eq!(ConnectionRefusal::PerIp.label(), "per_ip");
    }
}

vocabulary! {
    /// How a pull of CrowdSec's decision stream ended (`result` of
    /// `floodgate_crowdsec_pulls_total`).
    PullResult {
        /// LAPI answered with the decisions.
        Ok => "ok",
        /// LAPI could not be reached, refused the key, or answered something unreadable.
        Error => "error",
    }
}

vocabulary! {
    /// How a signed request's signature fared (`result` of `floodgate_signed_requests_total`).
    SignedResult {
        /// Verified under a key the agent publishes or the config names.
        Verified => "verified",
        /// The signature does not hold: wrong, expired, from the future, or replayed.
        Failed => "failed",
        /// Not checkable now: the agent's keys are not known (yet), or the nonce ledger did not
        /// answer.
        Unfinished => "unfinished",
    }
}

vocabulary! {
    /// How a fetch of an agent's key directory ended (`result` of
    /// `floodgate_signed_directory_fetches_total`).
    FetchResult {
        /// The directory answered with usable keys.
        Ok => "ok",
        /// Unreachable, slow, too large, or unreadable.
        Error => "error",
    }
}
