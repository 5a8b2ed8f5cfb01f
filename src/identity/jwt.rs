//! Verified bearer tokens: a JWT's claims are believed only after its signature (with a
//! configured key and an allowed algorithm), its expiry and not-before times, and its issuer
//! and audience (when configured) all check out. `alg: none` is never accepted, and a key only
//! verifies algorithms of its own family, so an RSA public key can never serve as an HMAC secret.

use super::jwt_time::in_time;
use crate::clock::Clock;
use jsonwebtoken::errors::Error;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use std::time::Duration;

/// A verified token's claims.
pub type Claims = Map<String, Value>;

/// Where the verification keys come from.
#[derive(Clone)]
pub enum KeySource {
    /// An HMAC secret (HS256/384/512).
    Secret(Vec<u8>),
    /// A PEM public key: RSA, EC or Ed25519.
    PublicKeyPem(Vec<u8>),
    /// A JSON Web Key Set; tokens pick their key by `kid`.
    Jwks(String),
}

/// What `[identity.jwt]` configures.
#[derive(Clone)]
pub struct JwtSettings {
    /// Algorithms a token may use (the allow-list).
    pub algorithms: Vec<Algorithm>,
    /// The verification keys.
    pub keys: KeySource,
    /// Required `iss`, if any.
    pub issuer: Option<String>,
    /// Required `aud`, if any.
    pub audience: Option<String>,
    /// Clock skew tolerated on `exp` and `nbf`.
    pub leeway: Duration,
}

/// Why the JWT settings cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtConfigError {
    /// The key could not be read as the algorithms require.
    #[error("cannot read the key for {0:?}: {1}")]
    BadKey(Vec<Algorithm>, String),
    /// The algorithms do not fit the key.
    #[error("algorithms {0:?} do not fit the key ({1})")]
    WrongFamily(Vec<Algorithm>, &'static str),
    /// No algorithm is allowed.
    #[error("`algorithms` must list at least one algorithm")]
    NoAlgorithms,
    /// The JWKS holds no usable key.
    #[error("the JWKS has no key usable with {0:?}")]
    NoUsableKey(Vec<Algorithm>),
}

/// Why a presented token was not believed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// No configured key matches the token's `kid`.
    #[error("no key matches the token")]
    UnknownKey,
    /// The token is malformed, badly signed, expired, not yet valid, or for someone else.
    #[error("invalid token: {0}")]
    Invalid(String),
}

#[derive(Clone)]
struct VerifyingKey {
    kid: Option<String>,
    key: DecodingKey,
    validation: Validation,
}

/// Verifies tokens against the configured keys, their `exp` and `nbf` against its clock.
#[derive(Clone)]
pub struct JwtVerifier {
    keys: Vec<VerifyingKey>,
    /// Clock skew tolerated on `exp` and `nbf`, in seconds.
    leeway_s: u64,
    clock: Clock,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JwtVerifier({} keys)", self.keys.len())
    }
}

fn family_name(family: jsonwebtoken::AlgorithmFamily) -> &'static str {
    use jsonwebtoken::AlgorithmFamily::*;
    match family {
        Hmac => "HMAC secret",
        Rsa => "RSA key",
        Ec => "EC key",
        Ed => "Ed25519 key",
    }
}

impl JwtVerifier {
    /// A verifier for `settings`, refusing algorithm lists that do not fit the keys.
    pub fn new(settings: &JwtSettings) -> Result<Self, JwtConfigError> {
        let algorithms = &settings.algorithms;
        let first = *algorithms.first().ok_or(JwtConfigError::NoAlgorithms)?;
        let bad_key = |e: jsonwebtoken::errors::Error| {
            JwtConfigError::BadKey(algorithms.clone(), e.to_string())
        };
        let keys = match &settings.keys {
            KeySource::Secret(secret) => vec![(None, DecodingKey::from_secret(secret))],
            KeySource::PublicKeyPem(pem) => {
                use jsonwebtoken::AlgorithmFamily::*;
                let key = match first.family() {
                    Rsa => DecodingKey::from_rsa_pem(pem),
                    Ec => DecodingKey::from_ec_pem(pem),
                    Ed => DecodingKey::from_ed_pem(pem),
                    Hmac => {
                        return Err(JwtConfigError::WrongFamily(
                            algorithms.clone(),
                            "a public key",
                        ))
                    }
                }
                .map_err(bad_key)?;
                vec![(None, key)]
            }
            KeySource::Jwks(json) => {
                let set: JwkSet = serde_json::from_str(json)
                    .map_err(|e| JwtConfigError::BadKey(algorithms.clone(), e.to_string()))?;
                set.keys
                    .iter()
                    .filter_map(|jwk| {
                        Some((jwk.common.key_id.clone(), DecodingKey::from_jwk(jwk).ok()?))
                    })
                    .collect()
            }
        };
        let is_jwks = matches!(settings.keys, KeySource::Jwks(_));
        let mut verifying = Vec::new();
        for (kid, key) in keys {
            let fitting: Vec<Algorithm> = algorithms
                .iter()
                .copied()
                .filter(|a| a.family() == key.family())
                .collect();
            if fitting.len() != algorithms.len() && !is_jwks {
                return Err(JwtConfigError::WrongFamily(
                    algorithms.clone(),
                    family_name(key.family()),
                ));
            }
            if fitting.is_empty() {
                continue;
            }
            verifying.push(VerifyingKey {
                kid,
                key,
                validation: validation(settings, fitting),
            });
        }
        if verifying.is_empty() {
            return Err(JwtConfigError::NoUsableKey(algorithms.clone()));
        }
        Ok(Self {
            keys: verifying,
            leeway_s: settings.leeway.as_secs(),
            clock: Clock::System,
        })
    }

    /// The same verifier, checking `exp` and `nbf` against `clock`.
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }

    /// The claims of `token` if it verifies.
    pub fn verify(&self, token: &str) -> Result<Claims, TokenError> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| TokenError::Invalid(e.to_string()))?;
        let mut candidates = self
            .keys
            .iter()
            .filter(|k| header.kid.is_none() || k.kid.is_none() || k.kid == header.kid)
            .peekable();
        if candidates.peek().is_none() {
            return Err(TokenError::UnknownKey);
        }
        let mut last = TokenError::UnknownKey;
        for key in candidates {
            match jsonwebtoken::decode::<Claims>(token, &key.key, &key.validation) {
                Ok(data) => {
                    let now_s = self.clock.now_s();
                    return match in_time(&data.claims, now_s, self.leeway_s) {
                        Ok(()) => Ok(data.claims),
                        Err(kind) => Err(TokenError::Invalid(Error::from(kind).to_string())),
                    };
                }
                Err(e) => last = TokenError::Invalid(e.to_string()),
            }
        }
        Err(last)
    }
}

fn validation(settings: &JwtSettings, algorithms: Vec<Algorithm>) -> Validation {
    let mut validation = Validation::new(algorithms[0]);
    validation.algorithms = algorithms;
    // `exp` and `nbf` are checked against the verifier's clock (`jwt_time.rs`), with the
    // leeway: jsonwebtoken would read the system's.
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = settings.audience.is_some();
    if let Some(aud) = &settings.audience {
        validation.set_audience(&[aud]);
    }
    if let Some(iss) = &settings.issuer {
        validation.set_issuer(&[iss]);
    }
    validation.set_required_spec_claims(&required_claims(settings));
    validation
}

/// The claims a token must carry: `exp` always, and `iss` / `aud` when configured. jsonwebtoken
/// compares `iss` and `aud` only when the token has them, so a token without them would
/// otherwise pass an issuer or audience check.
fn required_claims(settings: &JwtSettings) -> Vec<&'static str> {
    let mut required = vec!["exp"];
    if settings.issuer.is_some() {
        required.push("iss");
    }
    if settings.audience.is_some() {
        required.push("aud");
    }
    required
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{encode, EncodingKey, Header};
    use serde_json::json;

    const SECRET: &[u8] = b"a-test-secret-of-enough-length-0123456789";

    use crate::clock::Clock;

    /// The time the tests' verifiers stand at, in Unix seconds.
    const NOW: u64 = 1_700_000_000;

    fn now() -> u64 {
        NOW
    }

    /// A verifier of `settings` whose clock stands at [`NOW`].
    fn verifier(settings: &JwtSettings) -> JwtVerifier {
        let clock = Clock::set_at(NOW * 1000);
        JwtVerifier::new(settings).unwrap().with_clock(clock)
    }

    fn hs_settings() -> JwtSettings {
        JwtSettings {
            algorithms: vec![Algorithm::HS256],
            keys: KeySource::Secret(SECRET.to_vec()),
            issuer: Some("auth".into()),
            audience: None,
            leeway: Duration::from_secs(5),
        }
    }

    fn token(alg: Algorithm, claims: serde_json::Value, secret: &[u8]) -> String {
        encode(
            &Header::new(alg),
            &claims,
            &EncodingKey::from_secret(secret),
        )
        .unwrap()
    }

    #[test]
    fn a_good_token_yields_its_claims() {
        let v = verifier(&hs_settings());
        let t = token(
            Algorithm::HS256,
            json!({"sub": "alice", "iss": "auth", "exp": now() + 60}),
            SECRET,
        );
        assert_eq!(v.verify(&t).unwrap()["sub"], "alice");
    }

    #[test]
    fn a_token_holds_until_its_exp_and_leeway_are_past_by_the_verifiers_clock() {
        let clock = Clock::set_at(NOW * 1000);
        let v = JwtVerifier::new(&hs_settings())
            .unwrap()
            .with_clock(clock.clone());
        let claims = json!({"sub": "a", "iss": "auth", "nbf": NOW + 10, "exp": NOW + 60});
        let t = token(Algorithm::HS256, claims, SECRET);
        assert!(v.verify(&t).is_err(), "not before 5 s of leeway before nbf");
        clock.advance(5_000);
        assert!(v.verify(&t).is_ok(), "within the leeway of nbf");
        clock.advance(60_000);
        assert!(v.verify(&t).is_ok(), "exp, within the leeway");
        clock.advance(1_000);
        let late = v.verify(&t);
        assert_eq!(late, Err(TokenError::Invalid("ExpiredSignature".into())));
    }

    #[test]
    fn forged_expired_early_foreign_and_unlisted_tokens_are_refused() {
        let v = verifier(&hs_settings());
        let good = json!({"sub": "a", "iss": "auth", "exp": now() + 60});
        assert!(v
            .verify(&token(
                Algorithm::HS256,
                good.clone(),
                b"another-secret-of-enough-length"
            ))
            .is_err());
        assert!(
            v.verify(&token(Algorithm::HS384, good, SECRET)).is_err(),
            "not in the allow-list"
        );
        let expired = json!({"sub": "a", "iss": "auth", "exp": now() - 60});
        assert!(v.verify(&token(Algorithm::HS256, expired, SECRET)).is_err());
        let early = json!({"sub": "a", "iss": "auth", "exp": now() + 600, "nbf": now() + 300});
        assert!(v.verify(&token(Algorithm::HS256, early, SECRET)).is_err());
        let foreign = json!({"sub": "a", "iss": "elsewhere", "exp": now() + 60});
        assert!(v.verify(&token(Algorithm::HS256, foreign, SECRET)).is_err());
        let no_exp = json!({"sub": "a", "iss": "auth"});
        assert!(v.verify(&token(Algorithm::HS256, no_exp, SECRET)).is_err());
    }

    #[test]
    fn jwt_issuer_and_audience_are_required_when_configured() {
        let mut settings = hs_settings();
        settings.audience = Some("api".into());
        let v = verifier(&settings);
        let exp = now() + 60;
        let sign = |claims| token(Algorithm::HS256, claims, SECRET);
        let good = json!({"sub": "a", "iss": "auth", "aud": "api", "exp": exp});
        assert_eq!(v.verify(&sign(good)).unwrap()["sub"], "a");
        let refused = [
            json!({"sub": "a", "aud": "api", "exp": exp}),
            json!({"sub": "a", "iss": "auth", "exp": exp}),
            json!({"sub": "a", "exp": exp}),
            json!({"sub": "a", "iss": null, "aud": "api", "exp": exp}),
            json!({"sub": "a", "iss": 7, "aud": "api", "exp": exp}),
            json!({"sub": "a", "iss": "auth", "aud": [], "exp": exp}),
        ];
        for claims in refused {
            assert!(v.verify(&sign(claims.clone())).is_err(), "{claims}");
        }
    }

    #[test]
    fn without_issuer_or_audience_configured_neither_is_required() {
        let mut settings = hs_settings();
        settings.issuer = None;
        let v = verifier(&settings);
        let bare = json!({"sub": "a", "exp": now() + 60});
        assert!(v.verify(&token(Algorithm::HS256, bare, SECRET)).is_ok());
    }

    #[test]
    fn alg_none_and_garbage_are_refused() {
        let v = verifier(&hs_settings());
        // {"alg":"none","typ":"JWT"} . {"sub":"admin","iss":"auth","exp":9999999999} . (empty)
        let none = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhZG1pbiIsImlzcyI6ImF1dGgiLCJleHAiOjk5OTk5OTk5OTl9.";
        assert!(v.verify(none).is_err());
        for garbage in ["", "a.b.c", "...", "not a token", "e30.e30.e30"] {
            assert!(v.verify(garbage).is_err(), "{garbage}");
        }
    }

    #[test]
    fn algorithms_must_fit_the_key() {
        let mut settings = hs_settings();
        settings.algorithms = vec![Algorithm::RS256];
        assert!(matches!(
            JwtVerifier::new(&settings),
            Err(JwtConfigError::WrongFamily(..))
        ));
        settings.algorithms = vec![];
        assert_eq!(
            JwtVerifier::new(&settings).unwrap_err(),
            JwtConfigError::NoAlgorithms
        );
    }
}
