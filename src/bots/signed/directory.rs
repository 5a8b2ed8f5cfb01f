//! An agent's key directory: `https://<agent>/.well-known/http-message-signatures-directory`,
//! a JSON Web Key Set (media type `application/http-message-signatures-directory+json`),
//! fetched with a short timeout, at most 64 KiB, never following a redirect; fresh for its
//! `Cache-Control: max-age` (bounded).

use crate::telemetry::Causes;
use std::path::Path;
use std::time::Duration;
use web_bot_auth::keyring::{KeyRing, Thumbprintable};

/// The directory's path under the agent's authority.
pub const WELL_KNOWN: &str = "/.well-known/http-message-signatures-directory";
/// The longest a fetch may take, connection included.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(2);
/// The largest directory read.
pub const MAX_BYTES: usize = 64 * 1024;
/// How long keys are fresh when the directory does not say.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(60 * 60);
/// The bounds put on the directory's `max-age`.
pub const MAX_AGE_BOUNDS: (Duration, Duration) =
    (Duration::from_secs(60), Duration::from_secs(24 * 60 * 60));

/// Why a directory could not be had.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DirectoryError {
    /// The HTTP client could not be made (the CA file unreadable or not PEM).
    #[error("cannot set up the HTTPS client: {0}")]
    Client(String),
    /// The connection or transfer failed, or took too long.
    #[error("download failed: {0}")]
    Download(String),
    /// The server answered something else than 200.
    #[error("answered {0}")]
    Status(u16),
    /// Larger than [`MAX_BYTES`].
    #[error("larger than {MAX_BYTES} bytes")]
    TooLarge,
    /// Not a JSON Web Key Set.
    #[error("not a JSON Web Key Set: {0}")]
    Unreadable(String),
    /// No Ed25519 key in it.
    #[error("holds no Ed25519 key")]
    NoKeys,
}

/// The client directories are fetched with: rustls with the public roots and `ca_file`'s
/// certificates, [`FETCH_TIMEOUT`], no redirects, no proxy.
pub(crate) fn client(ca_file: Option<&Path>) -> Result<reqwest::Client, DirectoryError> {
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .user_agent(concat!("floodgate/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(FETCH_TIMEOUT)
        .timeout(FETCH_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy();
    if let Some(path) = ca_file {
        let pem = std::fs::read(path)
            .map_err(|e| DirectoryError::Client(format!("{}: {e}", path.display())))?;
        for certificate in reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| DirectoryError::Client(format!("{}: {e}", path.display())))?
        {
            builder = builder.add_root_certificate(certificate);
        }
    }
    builder
        .build()
        .map_err(|e| DirectoryError::Client(Causes(&e).to_string()))
}

/// The keys `authority` publishes, and how long they are fresh.
pub(crate) async fn fetch(
    client: &reqwest::Client,
    authority: &str,
) -> Result<(KeyRing, Duration), DirectoryError> {
    let download =
        |e: reqwest::Error| DirectoryError::Download(Causes(&e.without_url()).to_string());
    let url = format!("https://{authority}{WELL_KNOWN}");
    let mut answer = client.get(url).send().await.map_err(download)?;
    if answer.status() != reqwest::StatusCode::OK {
        return Err(DirectoryError::Status(answer.status().as_u16()));
    }
    if answer
        .content_length()
        .is_some_and(|n| n > MAX_BYTES as u64)
    {
        return Err(DirectoryError::TooLarge);
    }
    let cache_control = answer
        .headers()
        .get(http::header::CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut body = Vec::new();
    while let Some(chunk) = answer.chunk().await.map_err(download)? {
        if body.len() + chunk.len() > MAX_BYTES {
            return Err(DirectoryError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok((keys_of(&body)?, max_age(cache_control.as_deref())))
}

/// The Ed25519 keys of a JSON Web Key Set, each under its thumbprint; keys of other kinds are
/// passed over.
pub(crate) fn keys_of(body: &[u8]) -> Result<KeyRing, DirectoryError> {
    #[derive(serde::Deserialize)]
    struct Set {
        keys: Vec<serde_json::Value>,
    }
    let set: Set =
        serde_json::from_slice(body).map_err(|e| DirectoryError::Unreadable(e.to_string()))?;
    let keys: Vec<Thumbprintable> = set
        .keys
        .into_iter()
        .filter_map(|key| serde_json::from_value(key).ok())
        .collect();
    let ring = ring_of(&keys);
    match keys.iter().any(|k| ring.get(&k.b64_thumbprint()).is_some()) {
        true => Ok(ring),
        false => Err(DirectoryError::NoKeys),
    }
}

/// A key ring of the Ed25519 keys among `keys`.
pub(crate) fn ring_of<'k>(keys: impl IntoIterator<Item = &'k Thumbprintable>) -> KeyRing {
    let mut ring = KeyRing::default();
    for key in keys {
        // Keys of other kinds, and the same key twice, are passed over.
        let _ = ring.try_import_jwk(key);
    }
    ring
}

/// How long a directory answered with `cache_control` is fresh: its `max-age`, within
/// [`MAX_AGE_BOUNDS`]; [`DEFAULT_MAX_AGE`] when it gives none; the least for `no-store` or
/// `no-cache`.
pub(crate) fn max_age(cache_control: Option<&str>) -> Duration {
    let (least, most) = MAX_AGE_BOUNDS;
    let Some(text) = cache_control else {
        return DEFAULT_MAX_AGE;
    };
    let mut seconds = None;
    for directive in text.split(',').map(|d| d.trim().to_ascii_lowercase()) {
        match directive.split_once('=') {
            Some(("max-age", value)) => seconds = value.trim_matches('"').parse::<u64>().ok(),
            None if directive == "no-store" || directive == "no-cache" => return least,
            _ => {}
        }
    }
    seconds.map_or(DEFAULT_MAX_AGE, |s| {
        Duration::from_secs(s).clamp(least, most)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8037's example Ed25519 public key, and its thumbprint.
    const KEY: &str =
        r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;
    const THUMBPRINT: &str = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k";

    #[test]
    fn the_ed25519_keys_of_a_set_are_kept_under_their_thumbprints() {
        let body =
            format!(r#"{{"keys":[{{"kty":"RSA","n":"AQAB","e":"AQAB"}},{{"kty":"XYZ"}},{KEY}]}}"#);
        let ring = keys_of(body.as_bytes()).unwrap();
        assert!(ring.get(&THUMBPRINT.to_owned()).is_some());
    }

    #[test]
    fn garbage_and_sets_without_ed25519_keys_are_refused() {
        for body in [
            "",
            "<html>",
            "{}",
            r#"{"keys":[]}"#,
            r#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"short"}]}"#,
        ] {
            assert!(keys_of(body.as_bytes()).is_err(), "{body}");
        }
    }

    #[test]
    fn max_age_is_honoured_within_bounds() {
        let secs = |text| max_age(text).as_secs();
        assert_eq!(secs(None), 3600);
        assert_eq!(secs(Some("public, max-age=600")), 600);
        assert_eq!(secs(Some("max-age=1")), 60);
        assert_eq!(secs(Some("max-age=99999999")), 86_400);
        assert_eq!(secs(Some("no-store")), 60);
        assert_eq!(secs(Some("max-age=oops")), 3600);
    }
}
