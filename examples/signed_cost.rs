//! What verifying a signed request costs with its agent's keys known (issue 59: at most 50 µs
//! of CPU): requests signed beforehand with web-bot-auth's signer, each with its own nonce,
//! verified one after another on one thread (the nonce ledger in memory); prints the median
//! and the 99th percentile. `cargo run --release --example signed_cost [requests]`.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ed25519_dalek::SigningKey;
use floodgate::bots::signed::{ConfiguredKey, Message, SignedAgents, SignedSettings};
use floodgate::limiter::MemoryNonces;
use floodgate::telemetry::SignedMetrics;
use http::{HeaderMap, Method, Uri};
use indexmap::IndexMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use web_bot_auth::components::{
    CoveredComponent, DerivedComponent, HTTPField, HTTPFieldParametersSet,
};
use web_bot_auth::keyring::{Algorithm, Thumbprintable};
use web_bot_auth::message_signatures::{MessageSigner, UnsignedMessage};

const SITE: &str = "site.example";
const AGENT: &str = "\"https://agent.example\"";

struct Unsigned {
    input: String,
    signature: String,
}

impl UnsignedMessage for Unsigned {
    fn fetch_components_to_cover(&self) -> IndexMap<CoveredComponent, String> {
        let agent = HTTPField {
            name: "signature-agent".into(),
            parameters: HTTPFieldParametersSet(vec![]),
        };
        IndexMap::from_iter([
            (
                CoveredComponent::Derived(DerivedComponent::Authority { req: false }),
                SITE.to_owned(),
            ),
            (CoveredComponent::HTTP(agent), AGENT.to_owned()),
        ])
    }

    fn register_header_contents(&mut self, input: String, signature: String) {
        self.input = format!("sig1={input}");
        self.signature = format!("sig1={signature}");
    }
}

fn signed(seed: &[u8; 32], keyid: &str, n: usize) -> HeaderMap {
    let mut unsigned = Unsigned {
        input: String::new(),
        signature: String::new(),
    };
    MessageSigner {
        keyid: keyid.to_owned(),
        nonce: format!("nonce-{n}"),
        tag: "web-bot-auth".into(),
    }
    .generate_signature_headers_content(
        &mut unsigned,
        Duration::from_secs(300),
        Algorithm::Ed25519,
        seed,
    )
    .expect("signed");
    let mut headers = HeaderMap::new();
    headers.insert("host", SITE.parse().expect("value"));
    headers.insert("user-agent", "Mozilla/5.0 (agent)".parse().expect("value"));
    headers.insert("signature-agent", AGENT.parse().expect("value"));
    headers.insert("signature-input", unsigned.input.parse().expect("value"));
    headers.insert("signature", unsigned.signature.parse().expect("value"));
    headers
}

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let seed = [7u8; 32];
    let jwk = Thumbprintable::OKP {
        crv: "Ed25519".into(),
        x: URL_SAFE_NO_PAD.encode(SigningKey::from_bytes(&seed).verifying_key().as_bytes()),
    };
    let keyid = jwk.b64_thumbprint();
    let settings = SignedSettings {
        agents: vec![],
        ca_file: None,
        keys: vec![ConfiguredKey {
            agent: Arc::from("agent.example"),
            jwk,
        }],
    };
    let nonces = Arc::new(MemoryNonces::default());
    let agents = SignedAgents::new(&settings, None, nonces, SignedMetrics::default());
    let requests: Vec<HeaderMap> = (0..count).map(|n| signed(&seed, &keyid, n)).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let (method, uri) = (Method::GET, Uri::from_static("/page"));
    let now_ms = floodgate::clock::wall_now_us() / 1000;
    let mut took: Vec<Duration> = runtime.block_on(async {
        let mut took = Vec::with_capacity(count);
        for headers in &requests {
            let message = Message::new(&method, &uri, headers);
            let started = Instant::now();
            let claim = agents.verify(&message, now_ms, Instant::now()).await;
            took.push(started.elapsed());
            assert!(claim.is_some_and(|c| c.verified()), "verified");
        }
        took
    });
    took.sort_unstable();
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
    println!(
        "verified {count} signed requests (keys known): median {:.1} µs, p99 {:.1} µs",
        at(0.5),
        at(0.99)
    );
}
