//! Where an issuer's directory is read: an `https://` URL, or `http://` on a loopback address
//! (a test issuer, a sidecar), never plain HTTP across a network, where anyone on the path
//! could hand Floodgate their own keys.

use reqwest::Url;
use std::net::IpAddr;

/// The directory's path under an issuer's origin (RFC 9578 §4).
pub const WELL_KNOWN: &str = "/.well-known/private-token-issuer-directory";

/// A directory URL that may be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectoryUrl(Url);

/// Why a directory URL is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not a URL with a host.
    #[error("is not a URL: {0:?}")]
    NotUrl(String),
    /// Neither https, nor http on a loopback address.
    #[error("must be https (or http on a loopback address such as 127.0.0.1), not {0:?}")]
    NotHttps(String),
    /// User name or password in the URL.
    #[error("must not carry a user name or password")]
    Credentials,
}

impl DirectoryUrl {
    /// Reads `text`: `https://…`, or `http://` with a host of 127.0.0.0/8, `[::1]` or
    /// `localhost`.
    pub fn parse(text: &str) -> Result<Self, UrlError> {
        let url = Url::parse(text.trim()).map_err(|_| UrlError::NotUrl(text.to_owned()))?;
        let allowed = match (url.scheme(), url.host_str()) {
            ("https", Some(_)) => true,
            ("http", Some(host)) => is_loopback(host),
            _ => false,
        };
        if !allowed {
            return Err(UrlError::NotHttps(text.to_owned()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlError::Credentials);
        }
        Ok(Self(url))
    }

    /// The URL.
    pub fn url(&self) -> &Url {
        &self.0
    }
}

impl std::fmt::Display for DirectoryUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Whether `host` (as a URL writes it: an IPv6 address in brackets) is this machine.
fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => bare.eq_ignore_ascii_case("localhost"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_anywhere_and_http_on_loopback_only() {
        let taken = [
            "https://issuer.example/.well-known/private-token-issuer-directory",
            "https://203.0.113.9:8443/d",
            "http://127.0.0.1:9000/.well-known/private-token-issuer-directory",
            "http://127.8.9.10/d",
            "http://[::1]:8080/d",
            "http://localhost:8080/d",
        ];
        for text in taken {
            let url = DirectoryUrl::parse(text).unwrap();
            assert_eq!(url.url().as_str(), text, "{text}");
        }
        let refused = [
            "http://issuer.example/d",
            "http://10.0.0.1/d",
            "http://[::2]/d",
            "http://127.0.0.1.example/d",
            "ftp://127.0.0.1/d",
            "file:///etc/keys",
        ];
        for text in refused {
            let error = DirectoryUrl::parse(text);
            assert_eq!(error, Err(UrlError::NotHttps(text.to_owned())), "{text}");
        }
        assert_eq!(
            DirectoryUrl::parse("issuer.example/d"),
            Err(UrlError::NotUrl("issuer.example/d".to_owned()))
        );
        assert_eq!(
            DirectoryUrl::parse("https://u:p@issuer.example/d"),
            Err(UrlError::Credentials)
        );
    }
}
