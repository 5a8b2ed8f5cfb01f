//! What to do with a request, and what to call it in the access log.

use crate::identity::Identity;
use bytes::Bytes;
use http::HeaderValue;
use pingora::http::ResponseHeader;
use std::sync::Arc;

/// Forward or answer.
pub enum Action {
    /// Forward it, adding these `RateLimit-Policy` and `RateLimit` values to the response.
    Pass(Option<RateLimitHeaders>),
    /// Answer it with this response.
    Refuse(Box<ResponseHeader>, Bytes),
}

/// The `RateLimit-Policy` and `RateLimit` values for an allowed response.
pub struct RateLimitHeaders {
    /// `RateLimit-Policy`.
    pub policy: HeaderValue,
    /// `RateLimit`.
    pub ratelimit: HeaderValue,
}

/// The decision about a request.
pub struct Verdict {
    /// What happens to it.
    pub action: Action,
    /// A short word for the access log: `allowed`, `throttled`, `unlimited`, `allowlisted`,
    /// `denylisted`, `invalid_token`, `store_error`, `store_unavailable`.
    pub decision: &'static str,
    /// The policy that decided, if one did.
    pub policy: Option<Arc<str>>,
    /// The caller whose bucket decided, if one did.
    pub identity: Option<Identity>,
}

impl Verdict {
    /// Forward the request; no policy speaks for it.
    pub fn pass(decision: &'static str) -> Self {
        Verdict {
            action: Action::Pass(None),
            decision,
            policy: None,
            identity: None,
        }
    }

    /// Answer with `response`, or forward if it could not be built (logged).
    pub fn refuse(
        response: pingora::Result<(ResponseHeader, Bytes)>,
        decision: &'static str,
    ) -> Self {
        match response {
            Ok((header, body)) => Verdict {
                action: Action::Refuse(Box::new(header), body),
                decision,
                policy: None,
                identity: None,
            },
            Err(e) => {
                log::error!("could not build a refusal, letting the request through: {e}");
                Verdict::pass(decision)
            }
        }
    }

    /// The same verdict, naming the policy and the caller that decided.
    pub fn by(mut self, policy: &Arc<str>, identity: Identity) -> Self {
        self.policy = Some(policy.clone());
        self.identity = Some(identity);
        self
    }
}
