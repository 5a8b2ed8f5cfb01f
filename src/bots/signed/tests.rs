//! Signed requests made here with web-bot-auth's signer, verified under configured keys with
//! the time as an argument.

use super::{ConfiguredKey, Message, SignedAgents, SignedSettings};
use crate::identity::{Category, Proof, Verification};
use crate::limiter::MemoryNonces;
use crate::telemetry::SignedMetrics;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ed25519_dalek::SigningKey;
use http::{HeaderMap, Method, Uri};
use indexmap::IndexMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use web_bot_auth::components::{
    CoveredComponent, DerivedComponent, HTTPField, HTTPFieldParametersSet,
};
use web_bot_auth::keyring::{Algorithm, Thumbprintable};
use web_bot_auth::message_signatures::{MessageSigner, UnsignedMessage};

/// A request to sign: its authority and `Signature-Agent`; the headers the signer gave.
struct Unsigned {
    authority: String,
    agent: Option<String>,
    input: String,
    signature: String,
}

impl UnsignedMessage for Unsigned {
    fn fetch_components_to_cover(&self) -> IndexMap<CoveredComponent, String> {
        let mut covered = IndexMap::new();
        covered.insert(
            CoveredComponent::Derived(DerivedComponent::Authority { req: false }),
            self.authority.clone(),
        );
        if let Some(agent) = &self.agent {
            let field = HTTPField {
                name: "signature-agent".into(),
                parameters: HTTPFieldParametersSet(vec![]),
            };
            covered.insert(CoveredComponent::HTTP(field), agent.clone());
        }
        covered
    }

    fn register_header_contents(&mut self, input: String, signature: String) {
        self.input = format!("sig1={input}");
        self.signature = format!("sig1={signature}");
    }
}

fn jwk(key: &SigningKey) -> Thumbprintable {
    Thumbprintable::OKP {
        crv: "Ed25519".into(),
        x: URL_SAFE_NO_PAD.encode(key.verifying_key().as_bytes()),
    }
}

/// The headers of a request to `authority` signed with `key`, naming `agent`.
fn signed(key: &SigningKey, authority: &str, agent: Option<&str>, nonce: &str) -> HeaderMap {
    let mut unsigned = Unsigned {
        authority: authority.into(),
        agent: agent.map(|a| format!("\"{a}\"")),
        input: String::new(),
        signature: String::new(),
    };
    MessageSigner {
        keyid: jwk(key).b64_thumbprint(),
        nonce: nonce.into(),
        tag: "web-bot-auth".into(),
    }
    .generate_signature_headers_content(
        &mut unsigned,
        Duration::from_secs(60),
        Algorithm::Ed25519,
        &key.to_bytes(),
    )
    .unwrap();
    let mut headers = HeaderMap::new();
    headers.insert("host", authority.parse().unwrap());
    headers.insert("signature-input", unsigned.input.parse().unwrap());
    headers.insert("signature", unsigned.signature.parse().unwrap());
    if let Some(agent) = unsigned.agent {
        headers.insert("signature-agent", agent.parse().unwrap());
    }
    headers
}

fn agents(keys: &[(&str, &SigningKey)], fetched: &[&str]) -> SignedAgents {
    let settings = SignedSettings {
        agents: fetched.iter().map(|a| Arc::from(*a)).collect(),
        ca_file: None,
        keys: keys
            .iter()
            .map(|(agent, key)| ConfiguredKey {
                agent: Arc::from(*agent),
                jwk: jwk(key),
            })
            .collect(),
    };
    let nonces = Arc::new(MemoryNonces::default());
    SignedAgents::new(&settings, None, nonces, SignedMetrics::default())
}

use crate::clock::wall_now_ms as now_ms;

async fn verify(agents: &SignedAgents, headers: &HeaderMap, at_ms: u64) -> (String, Verification) {
    let (method, uri) = (Method::GET, Uri::from_static("/page"));
    let message = Message::new(&method, &uri, headers);
    let claim = agents
        .verify(&message, at_ms, Instant::now())
        .await
        .unwrap();
    assert_eq!(claim.claimed, Category::SignedAgent);
    (claim.name.to_string(), claim.verification)
}

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

#[tokio::test]
async fn a_signature_under_a_configured_key_is_verified_once() {
    let (key, now) = (key(1), now_ms());
    let agents = agents(&[("bot.example", &key)], &[]);
    let headers = signed(&key, "site.example", None, "n-1");
    let verified = Verification::Verified(Proof::Signature);
    assert_eq!(
        verify(&agents, &headers, now).await,
        ("bot.example".into(), verified)
    );
    assert_eq!(
        verify(&agents, &headers, now).await.1,
        Verification::Failed,
        "a replay is refused"
    );
    let named = signed(&key, "site.example", Some("https://bot.example"), "n-2");
    assert_eq!(
        verify(&agents, &named, now).await,
        ("bot.example".into(), verified)
    );
}

#[tokio::test]
async fn tampered_stale_and_future_signatures_fail() {
    let (key, now) = (key(2), now_ms());
    let agents = agents(&[("bot.example", &key)], &[]);
    let mut tampered = signed(&key, "site.example", None, "t-1");
    tampered.insert("host", "other.example".parse().unwrap());
    assert_eq!(
        verify(&agents, &tampered, now).await.1,
        Verification::Failed
    );
    let mut forged = signed(&key, "site.example", None, "t-2");
    forged.insert(
        "signature",
        format!("sig1=:{}:", "A".repeat(86) + "==").parse().unwrap(),
    );
    assert_eq!(verify(&agents, &forged, now).await.1, Verification::Failed);
    let headers = signed(&key, "site.example", None, "t-3");
    let expired = now + 120_000;
    assert_eq!(
        verify(&agents, &headers, expired).await.1,
        Verification::Failed
    );
    let before = now - 60_000;
    assert_eq!(
        verify(&agents, &headers, before).await.1,
        Verification::Failed
    );
    let uncovered = signed(&key, "site.example", None, "t-4");
    let mut added = uncovered.clone();
    added.insert(
        "signature-agent",
        "\"https://bot.example\"".parse().unwrap(),
    );
    assert_eq!(
        verify(&agents, &added, now).await.1,
        Verification::Failed,
        "a Signature-Agent the signature does not cover"
    );
}

#[tokio::test]
async fn unknown_keys_and_agents_are_unfinished_never_verified() {
    let (known, stranger, now) = (key(3), key(4), now_ms());
    let agents = agents(&[("bot.example", &known)], &[]);
    let unknown = signed(&stranger, "site.example", None, "u-1");
    assert_eq!(
        verify(&agents, &unknown, now).await.1,
        Verification::Unfinished
    );
    let elsewhere = signed(
        &stranger,
        "site.example",
        Some("https://127.0.0.1:9"),
        "u-2",
    );
    assert_eq!(
        verify(&agents, &elsewhere, now).await,
        (
            super::verifier::UNKNOWN_AGENT.into(),
            Verification::Unfinished
        ),
        "an agent not allow-listed is never fetched, nor named: its name is the client's"
    );
    let (method, uri) = (Method::GET, Uri::from_static("/"));
    assert!(agents
        .verify(
            &Message::new(&method, &uri, &HeaderMap::new()),
            now,
            Instant::now()
        )
        .await
        .is_none());
}
