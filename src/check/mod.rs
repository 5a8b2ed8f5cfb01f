//! The decision endpoint: nginx (`auth_request`), Caddy (`forward_auth`), Traefik
//! (`forwardAuth`) and Envoy (`ext_authz`, HTTP mode) ask it before forwarding, and it answers
//! with the same gate, identities, policies, store and metrics as Floodgate's own proxy:
//! `200` with `RateLimit` headers to allow (Envoy takes anything else as a denial), `429` with
//! `Retry-After`, the RateLimit headers and the problem body to throttle, `403` for bans and
//! the deny-list, `401` for a bad token; every answer `Cache-Control: no-store`.
//!
//! A repeated check (`check.dedupe_header`, `replays.rs`) is answered again only for the same
//! request id, facts and callers' identity digests.
//!
//! Only peers in `check.trusted` may state a request's facts (`facts.rs`); the client address
//! is read from the forwarding header `identity.ip` names, with those peers trusted. A
//! decision never sees the response, so what a request owes afterwards (its `max_in_flight`
//! slot, a `count_status` / `settle_header` reservation) ends with the decision: the slot is
//! given back at once and the reservation is kept as charged.

mod facts;
mod per_decider;
mod replays;

pub use facts::{asked, Asked, FactsError, ENVOY_PREFIX};
pub use replays::{replay_key, Answer, ReplayKey, Replays, MAX_REPLAYS, REPLAY_WINDOW};

use crate::bots::Message;
use crate::gate::reply::{problem_body, with_ref, Refusal, Reply, PROBLEM_JSON};
use crate::gate::{Decider, Gate, HttpFacts, InForce, Seen};
use crate::identity::{ClientIpResolver, Request};
use crate::policy::{normalize_path, request_host, RouteFacts};
use async_trait::async_trait;
use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, Response};
use ipnet::IpNet;
use per_decider::{Made, PerDecider};
use pingora::apps::http_app::ServeHttp;
use pingora::protocols::http::ServerSession;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

/// `[check]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckSettings {
    /// The listener proxies ask.
    pub listen: SocketAddr,
    /// The peers that may ask (state a request's facts).
    pub trusted: Vec<IpNet>,
    /// A request id header the asking proxy sets itself: repeated checks of one request are
    /// answered once.
    pub dedupe_header: Option<HeaderName>,
}

/// Answers check requests.
pub struct CheckApp {
    in_force: Arc<dyn InForce>,
    settings: CheckSettings,
    replays: Replays,
    /// The decider's client address resolver with the asking proxies trusted too, made once
    /// per decider.
    resolver: PerDecider<Decider, ClientIpResolver>,
}

impl CheckApp {
    /// A decision endpoint deciding with the decider `in_force`.
    pub fn new(in_force: Arc<dyn InForce>, settings: CheckSettings) -> Self {
        Self {
            in_force,
            settings,
            replays: Replays::default(),
            resolver: PerDecider::default(),
        }
    }

    /// What the check request in `session` gets.
    async fn answer(&self, session: &ServerSession) -> Arc<Answer> {
        let peer = session
            .client_addr()
            .and_then(|a| a.as_inet().map(|a| a.ip().to_canonical()));
        if !peer.is_some_and(|ip| self.settings.trusted.iter().any(|n| n.contains(&ip))) {
            return problem(
                403,
                "Only the proxies in check.trusted may ask for decisions.",
            );
        }
        let req = session.req_header();
        let target = req.uri.path_and_query().map_or("/", |p| p.as_str());
        let asked = match asked(&req.method, target, &req.headers) {
            Ok(asked) => asked,
            Err(e) => return problem(400, &e.to_string()),
        };
        let Ok(path) = normalize_path(&asked.path) else {
            return problem(400, "The request's path has no normal form.");
        };
        let decider = self.in_force.decider();
        let client_ip = self.resolver(&decider).resolve(peer, &req.headers);
        let host = asked.host.as_deref().and_then(|h| {
            let value = HeaderValue::from_str(h).ok()?;
            request_host(&http::Uri::from_static("/"), Some(&value))
        });
        let target = signed_target(&asked);
        let facts = HttpFacts {
            message: Message {
                method: &asked.method,
                uri: &target,
                authority: asked.host.as_deref(),
                headers: &req.headers,
            },
            query: asked.query.as_deref(),
            client_ip,
            // The asking proxy is trusted (`check.trusted`): the JA4 it tells in
            // `identity.ja4_header` is believed, as the proxy believes a trusted proxy's. It
            // terminated the client's connection, so nothing else of it is seen here.
            seen: Seen {
                trusted_peer: true,
                ..Seen::default()
            },
            route: RouteFacts {
                method: &asked.method,
                host: host.as_deref(),
                path: &path,
            },
        };
        // No robots.txt verdict: `[robots]` is the proxy's own.
        let traits = decider.sender(&facts, |_| None, false).await;
        let request = facts.request(&decider, &traits);
        let gate = decider.gate();
        let replay = self.replay_key(&req.headers, &asked, client_ip, || callers(gate, &request));
        if let Some(answer) = replay.and_then(|key| self.replays.get(&key, Instant::now())) {
            return answer;
        }
        let mut decision = gate.decide(&request, &facts.route).await;
        // The response is never seen here: slots go back now, reservations stay charged.
        drop(decision.outcome.take_aftercare());
        let reply = decider.reply(&decision.outcome, traits.bot.as_ref());
        let answer = Arc::new(answered(reply));
        if let Some(key) = replay {
            self.replays.put(key, answer.clone(), Instant::now());
        }
        answer
    }

    /// The client address resolver of `decider`, trusting the asking proxies too.
    fn resolver(&self, decider: &Arc<Decider>) -> Arc<Made<Decider, ClientIpResolver>> {
        self.resolver.get(decider, |decider| {
            let own = &decider.callers().client_ip;
            let mut trusted = own.trusted().to_vec();
            trusted.extend(self.settings.trusted.iter().copied());
            ClientIpResolver::new(trusted, own.header().clone())
        })
    }

    /// The replay key of this check, when `check.dedupe_header` is set and present: its id,
    /// the request's facts and the digests of its callers (made by `callers` only then).
    fn replay_key(
        &self,
        headers: &http::HeaderMap,
        asked: &Asked,
        client: Option<IpAddr>,
        callers: impl FnOnce() -> String,
    ) -> Option<ReplayKey> {
        let name = self.settings.dedupe_header.as_ref()?;
        let id = headers.get(name)?.as_bytes();
        let client = client.map(|ip| ip.to_string()).unwrap_or_default();
        let query = asked.query.as_deref().unwrap_or("");
        let host = asked.host.as_deref().unwrap_or("");
        let callers = callers();
        let facts = [
            asked.method.as_str(),
            host,
            &asked.path,
            query,
            &client,
            &callers,
        ];
        Some(replay_key(id, &facts))
    }
}

/// The target of the request being decided (its path and query), as a signature covers it;
/// `/` when it is no URI.
fn signed_target(asked: &Asked) -> http::Uri {
    let target = match &asked.query {
        Some(query) => format!("{}?{query}", asked.path),
        None => asked.path.clone(),
    };
    target
        .parse()
        .unwrap_or_else(|_| http::Uri::from_static("/"))
}

/// The digests of the callers `gate` finds in `request`: by `[identity] sources`, then by
/// each policy's own sources, so a request with another key (banned, say) never gets the
/// answer given to the first.
fn callers(gate: &Gate, request: &Request<'_>) -> String {
    let key = gate.digest_key();
    let own = gate.policies().filter_map(|p| p.limit()?.sources.as_ref());
    std::iter::once(gate.identity())
        .chain(own)
        .map(|chain| match chain.identify(request, key) {
            Ok(identity) => identity.hex(),
            Err(_) => "invalid".to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The answer a reply makes: allowed → exactly `200` with the RateLimit headers; refused →
/// the proxy's refusal (its status, problem body and headers).
fn answered(reply: Reply) -> Answer {
    match reply {
        Reply::Forward(headers) => {
            let mut list = Vec::new();
            if let Some(h) = headers {
                list.push((HeaderName::from_static("ratelimit-policy"), h.policy));
                list.push((HeaderName::from_static("ratelimit"), h.ratelimit));
            }
            Answer {
                status: 200,
                headers: list,
                body: Bytes::new(),
            }
        }
        Reply::Refuse(Refusal {
            status,
            headers,
            body,
        }) => {
            let content_type = (CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
            Answer {
                status,
                headers: std::iter::once(content_type).chain(headers).collect(),
                body,
            }
        }
    }
}

impl CheckApp {
    /// The body of `answer` to the check in `session`: a problem body carries the request's
    /// id (`check.dedupe_header`, when set and present) as `ref`, the reference a refused
    /// client quotes.
    fn referred(&self, session: &ServerSession, answer: &Answer) -> Vec<u8> {
        let problem = answer
            .headers
            .iter()
            .any(|(name, value)| name == CONTENT_TYPE && value == PROBLEM_JSON);
        let id = self.settings.dedupe_header.as_ref().and_then(|name| {
            let id = session.req_header().headers.get(name)?;
            id.to_str().ok().filter(|id| !id.is_empty())
        });
        match (problem, id) {
            (true, Some(id)) => with_ref(&answer.body, id).to_vec(),
            _ => answer.body.to_vec(),
        }
    }
}

/// A problem answer of the endpoint itself.
fn problem(status: u16, detail: &str) -> Arc<Answer> {
    Arc::new(Answer {
        status,
        headers: vec![(CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON))],
        body: problem_body(status, detail, serde_json::json!({})),
    })
}

#[async_trait]
impl ServeHttp for CheckApp {
    async fn response(&self, session: &mut ServerSession) -> Response<Vec<u8>> {
        let answer = self.answer(session).await;
        let body = self.referred(session, &answer);
        let mut response = Response::builder()
            .status(answer.status)
            .header(CACHE_CONTROL, "no-store")
            .header(CONTENT_LENGTH, body.len());
        for (name, value) in &answer.headers {
            response = response.header(name, value);
        }
        response.body(body).unwrap_or_default()
    }
}
