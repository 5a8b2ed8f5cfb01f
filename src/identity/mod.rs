//! Who is calling: a request's facts → an [`Identity`], from an ordered list of sources.
//!
//! The first source that yields a non-empty value wins. The value never leaves this module in
//! the clear: it is hashed with a secret [`IdentityKey`] (keyed BLAKE3, with the source's name
//! as a prefix so that equal values from different sources stay apart) into a 128-bit digest,
//! which is what stores, logs and the offenders view see; without the key, a digest cannot be
//! matched to a value by hashing candidates. A request no source identifies shares one
//! `anonymous` identity, so dropping every identifying header earns no fresh bucket.

mod access;
mod client_ip;
mod digest;
mod facts;
mod h2fp;
mod jwt;
mod jwt_time;
mod named;
mod net_index;
mod network;
mod pass;
mod proven;
mod robots;
mod score;
mod sender_source;
mod source;
mod source_error;
mod spelling;
mod traits;

pub use access::{parse_network, Access, AccessRules, Rule, RuleError};
pub use client_ip::{
    forwarded_hops, Client, ClientIpResolver, ForwardingHeader, ForwardingHeaderError,
};
pub use facts::{Fact, RequestFacts};
pub use floodgate_limiter::{Identity, IdentityKey, IdentityKeyError, MIN_SECRET_LEN};
pub use h2fp::{BadH2Fp, H2Fp, H2fpDeclined, MAX_H2FP_LEN};
pub use jwt::{Claims, JwtConfigError, JwtSettings, JwtVerifier, KeySource, TokenError};
pub use named::{NamedCaller, NamedCallerError};
pub use net_index::NetworkIndex;
pub use network::Network;
pub use pass::{
    Bind, Challenge, ChallengeKind, Pass, PassId, Reach, DEFAULT_DIFFICULTY, MAX_DIFFICULTY,
};
use proven::PartsProof;
pub use proven::{Credential, Credentials, ProofState, Provenance};
pub use robots::{RobotsFact, RobotsVerdict, Trapped, UnknownVerdict};
pub use score::{Score, Signal, Signals, UnknownSignal, MAX_SCORE};
pub use sender_source::SenderSource;
pub use source::{cookie_value, IpFolding, Source, SourceSpec, MAX_VALUE_LEN};
pub use source_error::SourceError;
pub use spelling::is_underscore_spelling;
pub use traits::{
    BadCountry, BadJa4, BotClaim, Category, Country, Ja4, Proof, Traits, UnknownCategory,
    Verification,
};

use http::header::{HeaderMap, AUTHORIZATION};
use std::fmt;
use std::net::IpAddr;
use std::sync::OnceLock;

/// The bearer token of a request, verified at most once.
#[derive(Debug)]
pub enum TokenState {
    /// No `Authorization: Bearer` header.
    Absent,
    /// A token was presented and did not verify.
    Invalid(TokenError),
    /// A verified token's claims.
    Valid(Claims),
}

/// What a request with no known traits shows.
static NO_TRAITS: Traits = Traits {
    asn: None,
    country: None,
    bot: None,
    ja4: None,
    h2fp: None,
    h2fp_declined: None,
    score: None,
    robots: None,
};

/// The parts of a request that identity sources read.
pub struct Request<'a> {
    /// The request's headers.
    pub headers: &'a HeaderMap,
    /// The raw query string, without `?`.
    pub query: Option<&'a str>,
    /// The client address (the peer, or the nearest untrusted forwarded hop).
    pub client_ip: Option<IpAddr>,
    verifier: Option<&'a JwtVerifier>,
    token: OnceLock<TokenState>,
    facts: RequestFacts<'a>,
    traits: &'a Traits,
    pass: Option<&'a Pass>,
    reach: Reach,
    /// What knows which credentials are proven (`[identity.verify]`), if any source is verified.
    provenance: Option<&'a dyn Provenance>,
    /// The verified sources' values, read on first use.
    credentials: OnceLock<Credentials>,
    /// The robots.txt trap's ban in force for the sender, if any.
    trapped: Option<Trapped>,
}

impl<'a> Request<'a> {
    /// The facts of one request; `verifier` checks its bearer token if a source needs it.
    pub fn new(
        headers: &'a HeaderMap,
        query: Option<&'a str>,
        client_ip: Option<IpAddr>,
        verifier: Option<&'a JwtVerifier>,
    ) -> Self {
        Self {
            headers,
            query,
            client_ip,
            verifier,
            token: OnceLock::new(),
            facts: RequestFacts::default(),
            traits: &NO_TRAITS,
            pass: None,
            reach: Reach::NotAPage,
            provenance: None,
            credentials: OnceLock::new(),
            trapped: None,
        }
    }

    /// The request with the robots.txt trap's ban in force for its sender, if any.
    pub fn with_trapped(mut self, trapped: Option<Trapped>) -> Self {
        self.trapped = trapped;
        self
    }

    /// The robots.txt trap's ban in force for the request's sender, if any.
    pub fn trapped(&self) -> Option<Trapped> {
        self.trapped
    }

    /// The request with what knows which of its credentials are proven.
    pub fn with_provenance(mut self, provenance: Option<&'a dyn Provenance>) -> Self {
        self.provenance = provenance;
        self
    }

    /// The request with what is known of its sender (its network, country, crawler claim).
    pub fn with_traits(mut self, traits: &'a Traits) -> Self {
        self.traits = traits;
        self
    }

    /// What is known of the request's sender.
    pub fn traits(&self) -> &'a Traits {
        self.traits
    }

    /// The request with the pass it carried (its signature, expiry and network checked) and
    /// whether a challenge page could reach its sender.
    pub fn with_pass(mut self, pass: Option<&'a Pass>, reach: Reach) -> Self {
        self.pass = pass;
        self.reach = reach;
        self
    }

    /// The good pass the request carried, if any.
    pub fn pass(&self) -> Option<&'a Pass> {
        self.pass
    }

    /// Whether a challenge page could reach the request's sender.
    pub fn reach(&self) -> Reach {
        self.reach
    }

    /// The bearer token, verified on first use.
    pub fn token(&self) -> &TokenState {
        self.token.get_or_init(|| {
            let Some(token) = bearer_token(self.headers) else {
                return TokenState::Absent;
            };
            match self.verifier {
                None => TokenState::Invalid(TokenError::UnknownKey),
                Some(verifier) => match verifier.verify(token) {
                    Ok(claims) => TokenState::Valid(claims),
                    Err(e) => TokenState::Invalid(e),
                },
            }
        })
    }
}

/// The token of an `Authorization: Bearer <token>` header, if there is one.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// What a chain does with a bearer token that is present but does not verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnInvalidToken {
    /// Answer 401.
    Reject,
    /// Ignore the token and try the next source.
    Next,
}

/// Why a request could not be identified.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    /// A bearer token was presented and did not verify.
    #[error("{0}")]
    InvalidToken(TokenError),
}

/// A caller and the source of its chain that named it: what a ban or override made from a
/// view of callers (the offenders) must name it under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identified<'c> {
    /// The caller's digest.
    pub identity: Identity,
    /// The source whose value it is the digest of; `None` for the anonymous caller no
    /// source named.
    pub source: Option<&'c SourceSpec>,
}

/// The ordered list of sources and how to read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityChain {
    /// Sources tried in order; the first that yields a value wins.
    pub sources: Vec<SourceSpec>,
    /// How the `ip` source groups addresses.
    pub ip: IpFolding,
    /// What an invalid bearer token earns.
    pub on_invalid_token: OnInvalidToken,
}

impl IdentityChain {
    /// A chain of `sources` with default folding that rejects invalid tokens.
    pub fn of(sources: Vec<SourceSpec>) -> Self {
        Self {
            sources,
            ip: IpFolding::default(),
            on_invalid_token: OnInvalidToken::Reject,
        }
    }

    /// The caller of `req`, its digest made with `key`.
    pub fn identify(
        &self,
        req: &Request<'_>,
        key: &IdentityKey,
    ) -> Result<Identity, IdentityError> {
        self.identified(req, key).map(|found| found.identity)
    }

    /// The caller of `req`, its digest made with `key`, and the source that named it.
    pub fn identified(
        &self,
        req: &Request<'_>,
        key: &IdentityKey,
    ) -> Result<Identified<'_>, IdentityError> {
        self.identified_among(req, key, |_| true)
    }

    /// As [`IdentityChain::identified`], trying only the sources `tried` accepts.
    pub fn identified_among(
        &self,
        req: &Request<'_>,
        key: &IdentityKey,
        tried: impl Fn(&SourceSpec) -> bool,
    ) -> Result<Identified<'_>, IdentityError> {
        for spec in self.sources.iter().filter(|spec| tried(spec)) {
            // A verified source names a caller only with a proven value: else the next one.
            match req.parts_proof(spec.parts()) {
                PartsProof::Unproven => continue,
                // A verified source alone: the credential's digest is the caller's.
                PartsProof::Proven(identity) if spec.parts().len() == 1 => {
                    let source = Some(spec);
                    return Ok(Identified { identity, source });
                }
                PartsProof::Proven(_) | PartsProof::NoneVerified => {}
            }
            match spec.identity(req, &self.ip, key) {
                Ok(Some(identity)) => {
                    let source = Some(spec);
                    return Ok(Identified { identity, source });
                }
                Ok(None) => {}
                Err(e) if self.on_invalid_token == OnInvalidToken::Reject => {
                    return Err(IdentityError::InvalidToken(e));
                }
                Err(_) => {}
            }
        }
        Ok(Identified {
            identity: Identity::anonymous(key),
            source: None,
        })
    }
}

impl fmt::Display for IdentityChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sources: Vec<String> = self.sources.iter().map(|s| s.to_string()).collect();
        write!(f, "{} → anonymous", sources.join(" → "))
    }
}

#[cfg(test)]
mod tests;
