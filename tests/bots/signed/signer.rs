//! A signing agent made by the test: an Ed25519 key of its own, its key directory (a JWKS),
//! and requests signed with web-bot-auth's signer or with PyPI's `http-message-signatures`
//! (`sign.py`).

use crate::common::pytools::python;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ed25519_dalek::SigningKey;
use indexmap::IndexMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use web_bot_auth::components::{
    CoveredComponent, DerivedComponent, HTTPField, HTTPFieldParametersSet,
};
use web_bot_auth::keyring::{Algorithm, Thumbprintable};
use web_bot_auth::message_signatures::{MessageSigner, UnsignedMessage};

/// Header fields to send.
pub type Headers = Vec<(String, String)>;

/// An agent and its key.
pub struct Signer {
    seed: [u8; 32],
}

impl Signer {
    /// An agent with a fresh random key.
    pub fn new() -> Self {
        let mut seed = [0; 32];
        getrandom::fill(&mut seed).expect("random seed");
        Self { seed }
    }

    fn key(&self) -> SigningKey {
        SigningKey::from_bytes(&self.seed)
    }

    /// The key as a JWK.
    pub fn jwk(&self) -> Thumbprintable {
        Thumbprintable::OKP {
            crv: "Ed25519".into(),
            x: URL_SAFE_NO_PAD.encode(self.key().verifying_key().as_bytes()),
        }
    }

    /// The key's id: its JWK thumbprint.
    pub fn keyid(&self) -> String {
        self.jwk().b64_thumbprint()
    }

    /// Writes the agent's key directory (a JWKS with this key) to `path`.
    pub fn write_directory(&self, path: &Path) {
        let set = serde_json::json!({ "keys": [self.jwk()] });
        std::fs::write(path, set.to_string()).expect("directory file");
    }

    /// A request to `authority` signed with web-bot-auth, naming `agent` (a URL).
    pub fn sign(&self, authority: &str, agent: &str) -> Headers {
        let mut unsigned = Unsigned {
            authority: authority.to_owned(),
            agent: format!("\"{agent}\""),
            input: String::new(),
            signature: String::new(),
        };
        MessageSigner {
            keyid: self.keyid(),
            nonce: nonce(),
            tag: "web-bot-auth".into(),
        }
        .generate_signature_headers_content(
            &mut unsigned,
            Duration::from_secs(60),
            Algorithm::Ed25519,
            &self.seed,
        )
        .expect("signed");
        vec![
            ("signature-agent".into(), unsigned.agent),
            ("signature-input".into(), unsigned.input),
            ("signature".into(), unsigned.signature),
        ]
    }

    /// A request to `authority` signed with PyPI's `http-message-signatures`, naming `agent`.
    pub fn sign_in_python(&self, authority: &str, agent: &str) -> Headers {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bots/signed/sign.py");
        let seed: String = self.seed.iter().map(|b| format!("{b:02x}")).collect();
        let url = format!("http://{authority}/");
        let out = Command::new(python())
            .arg(script)
            .args([&seed, &self.keyid(), &url, agent, &nonce()])
            .output()
            .expect("python runs");
        assert!(
            out.status.success(),
            "sign.py: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let headers: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&out.stdout).expect("sign.py prints JSON");
        headers
            .into_iter()
            .map(|(k, v)| (k, v.as_str().unwrap_or_default().to_owned()))
            .collect()
    }
}

/// A fresh random nonce, base64.
fn nonce() -> String {
    let mut bytes = [0; 32];
    getrandom::fill(&mut bytes).expect("random nonce");
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A request to sign, covering `@authority` and `signature-agent`.
struct Unsigned {
    authority: String,
    agent: String,
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
                self.authority.clone(),
            ),
            (CoveredComponent::HTTP(agent), self.agent.clone()),
        ])
    }

    fn register_header_contents(&mut self, input: String, signature: String) {
        self.input = format!("sig1={input}");
        self.signature = format!("sig1={signature}");
    }
}
