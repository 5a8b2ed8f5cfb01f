//! A Privacy Pass issuer and client for tests, token type 0x0002 (RFC 9578 §6): an RSA-2048
//! key (the fixtures in tests/fixtures/privacy_pass/), its `token-key` in the RFC 9578 §6.5
//! form, its directory's JSON, and real tokens for a challenge (blinded, blind-signed and
//! finalized with RFC 9474's RSABSSA-SHA384-PSS-Deterministic, as an attested client gets
//! them). Written without Floodgate's code, so it checks Floodgate's reading of the RFCs.
//!
//! Included by the integration tests that use it (`#[path = "common/issuer.rs"] mod issuer;`)
//! and by the unit tests of `src/privacy_pass/`.
#![allow(dead_code, unreachable_pub)]

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use blind_rsa_signatures::{DefaultRng, Options, PublicKey, SecretKey};
use sha2::{Digest, Sha256};

/// The token type of publicly verifiable tokens (Blind RSA 2048).
pub const TOKEN_TYPE: u16 = 0x0002;

/// The fixture key `a`, PKCS#8 PEM.
pub const KEY_A: &str = include_str!("../fixtures/privacy_pass/issuer_a.pem");
/// The fixture key `b`, PKCS#8 PEM (another issuer, or `a`'s successor).
pub const KEY_B: &str = include_str!("../fixtures/privacy_pass/issuer_b.pem");

/// An issuer's key pair.
pub struct TestIssuer {
    secret: SecretKey,
    public: PublicKey,
    spki: Vec<u8>,
}

/// A token's fields, to be signed as they are (wrong ones included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    pub token_type: u16,
    pub nonce: [u8; 32],
    pub challenge_digest: [u8; 32],
    pub token_key_id: [u8; 32],
}

impl TestIssuer {
    /// The issuer of fixture key `a`.
    pub fn a() -> Self {
        Self::from_pem(KEY_A)
    }

    /// The issuer of fixture key `b`.
    pub fn b() -> Self {
        Self::from_pem(KEY_B)
    }

    /// The issuer of a PEM private key (PKCS#8 or PKCS#1).
    pub fn from_pem(pem: &str) -> Self {
        let secret = SecretKey::from_pem(pem).expect("an RSA private key");
        let public = secret.public_key().expect("its public key");
        let spki = public
            .to_spki(Some(&Options::default()))
            .expect("the RFC 9578 SPKI");
        Self {
            secret,
            public,
            spki,
        }
    }

    /// The SPKI DER (id-RSASSA-PSS, SHA-384, MGF1-SHA-384, salt 48).
    pub fn spki(&self) -> &[u8] {
        &self.spki
    }

    /// The `token-key` text: base64url of the SPKI, unpadded.
    pub fn token_key(&self) -> String {
        URL_SAFE_NO_PAD.encode(&self.spki)
    }

    /// The key's id: SHA-256 of the SPKI.
    pub fn key_id(&self) -> [u8; 32] {
        Sha256::digest(&self.spki).into()
    }

    /// A token answering `challenge` (the base64url `challenge` of a `WWW-Authenticate`), with
    /// a fresh nonce: what a client presents.
    pub fn mint(&self, challenge: &str) -> Vec<u8> {
        let challenge = URL_SAFE_NO_PAD
            .decode(challenge.trim_end_matches('='))
            .expect("a base64url challenge");
        self.sign(Fields {
            token_type: TOKEN_TYPE,
            nonce: fresh_nonce(),
            challenge_digest: Sha256::digest(&challenge).into(),
            token_key_id: self.key_id(),
        })
    }

    /// A token of exactly these fields, signed by the blind flow (the issuer never sees them):
    /// RSABSSA-SHA384-PSS-Deterministic is SHA-384 with a 48-byte salt (the default options)
    /// and no message randomizer.
    pub fn sign(&self, fields: Fields) -> Vec<u8> {
        let (input, options) = (token_input(&fields), Options::default());
        let blinded = self
            .public
            .blind(&mut DefaultRng, input, false, &options)
            .expect("blinded");
        let blind_signature = self
            .secret
            .blind_sign(&mut DefaultRng, &blinded.blind_msg, &options)
            .expect("blind-signed");
        let signature = self
            .public
            .finalize(&blind_signature, &blinded.secret, None, input, &options)
            .expect("finalized: a signature the key verifies");
        let mut token = input.to_vec();
        token.extend_from_slice(&signature.0);
        token
    }
}

/// `token_type ‖ nonce ‖ challenge_digest ‖ token_key_id`: what the authenticator signs.
pub fn token_input(fields: &Fields) -> [u8; 98] {
    let mut input = [0u8; 98];
    input[..2].copy_from_slice(&fields.token_type.to_be_bytes());
    input[2..34].copy_from_slice(&fields.nonce);
    input[34..66].copy_from_slice(&fields.challenge_digest);
    input[66..98].copy_from_slice(&fields.token_key_id);
    input
}

/// 32 random bytes.
pub fn fresh_nonce() -> [u8; 32] {
    let mut nonce = [0u8; 32];
    getrandom::fill(&mut nonce).expect("randomness");
    nonce
}

/// The `Authorization` value presenting `token`.
pub fn authorization(token: &[u8]) -> String {
    format!("PrivateToken token=\"{}\"", URL_SAFE_NO_PAD.encode(token))
}

/// A TokenChallenge's bytes (RFC 9577 §2.1), encoded here independently of Floodgate.
pub fn challenge_bytes(issuer: &str, context: &[u8], origin_info: &str) -> Vec<u8> {
    let mut out = TOKEN_TYPE.to_be_bytes().to_vec();
    out.extend_from_slice(&(issuer.len() as u16).to_be_bytes());
    out.extend_from_slice(issuer.as_bytes());
    out.push(context.len() as u8);
    out.extend_from_slice(context);
    out.extend_from_slice(&(origin_info.len() as u16).to_be_bytes());
    out.extend_from_slice(origin_info.as_bytes());
    out
}

/// The `(challenge, token-key)` pairs of `WWW-Authenticate` values, for every `PrivateToken`
/// challenge among them (quoted parameters, as Floodgate writes them).
pub fn challenges_of<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<(String, String)> {
    let param = |value: &str, name: &str| {
        let start = value.find(&format!("{name}=\""))? + name.len() + 2;
        let end = value[start..].find('"')? + start;
        Some(value[start..end].to_owned())
    };
    values
        .into_iter()
        .filter(|v| v.trim_start().starts_with("PrivateToken "))
        .filter_map(|v| Some((param(v, "challenge")?, param(v, "token-key")?)))
        .collect()
}

/// A directory's JSON (RFC 9578 §4) listing `keys`, each with its `not-before` (Unix
/// seconds) if any.
pub fn directory_json(keys: &[(&TestIssuer, Option<u64>)]) -> String {
    let keys: Vec<String> = keys
        .iter()
        .map(|(issuer, not_before)| {
            let not_before = not_before.map_or(String::new(), |s| format!(", \"not-before\": {s}"));
            format!(
                "{{\"token-type\": 2, \"token-key\": \"{}\"{not_before}}}",
                issuer.token_key()
            )
        })
        .collect();
    format!(
        "{{\"issuer-request-uri\": \"https://issuer.example/token-request\", \"token-keys\": [{}]}}",
        keys.join(", ")
    )
}
