//! The request being decided, as the asking proxy describes it: its method, target and host
//! from the forwarding headers nginx, Caddy, Traefik and Envoy send, and its client from the
//! forwarding header `identity.ip` names, read as from a trusted proxy. Nothing in the check
//! request's own query may steer the decision (Caddy appends the client's query to it).

use crate::gate::reply::echo;
use http::header::{HeaderMap, HeaderName, HOST};
use http::Method;
use std::borrow::Cow;

/// `X-Forwarded-Method` (Caddy, Traefik), then `X-Original-Method` (the nginx snippet).
const METHOD_HEADERS: [&str; 2] = ["x-forwarded-method", "x-original-method"];
/// `X-Forwarded-Uri` (Caddy, Traefik), then `X-Original-URI` (the nginx snippet).
const URI_HEADERS: [&str; 2] = ["x-forwarded-uri", "x-original-uri"];
/// Envoy's `ext_authz` (HTTP mode) asks for `<prefix><original path>` with the original
/// method: this prefix is taken off.
pub const ENVOY_PREFIX: &str = "/check";

/// The facts of the request being decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// Its method.
    pub method: Method,
    /// Its path, as sent (normalised by the caller).
    pub path: String,
    /// Its query string, without `?`.
    pub query: Option<String>,
    /// Its host header value, if any.
    pub host: Option<String>,
}

/// Why the request being decided cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FactsError {
    /// A method header that is not a method.
    #[error("`{0}` is not a request method")]
    Method(String),
    /// A target that is not an origin-form path.
    #[error("the request target `{0}` is not a path")]
    Target(String),
}

/// The request a check request from a proxy asks about: `method` and `target` are the check
/// request's own, `headers` its headers.
pub fn asked(method: &Method, target: &str, headers: &HeaderMap) -> Result<Asked, FactsError> {
    let method = match first(headers, &METHOD_HEADERS) {
        Some(text) => {
            Method::from_bytes(text.as_bytes()).map_err(|_| FactsError::Method(echo(text)))?
        }
        None => method.clone(),
    };
    let original: Cow<'_, str> = match first(headers, &URI_HEADERS) {
        Some(uri) => Cow::Borrowed(uri),
        // Envoy: the check request's own target, under the prefix.
        None => match target.strip_prefix(ENVOY_PREFIX) {
            Some(rest) if rest.is_empty() || rest.starts_with('?') => {
                Cow::Owned(format!("/{rest}"))
            }
            Some(rest) if rest.starts_with('/') => Cow::Borrowed(rest),
            _ => Cow::Borrowed(target),
        },
    };
    let (path, query) = match original.split_once('?') {
        Some((path, query)) => (path, Some(query.to_owned())),
        None => (original.as_ref(), None),
    };
    if !path.starts_with('/') {
        return Err(FactsError::Target(echo(&original)));
    }
    let host = first(headers, &["x-forwarded-host"])
        .or_else(|| headers.get(HOST).and_then(|h| h.to_str().ok()))
        .map(str::to_owned);
    Ok(Asked {
        method,
        path: path.to_owned(),
        query,
        host,
    })
}

/// The first of `names` present in `headers` with a non-empty text value.
fn first<'h>(headers: &'h HeaderMap, names: &[&'static str]) -> Option<&'h str> {
    names.iter().find_map(|name| {
        let name = HeaderName::from_static(name);
        headers
            .get(&name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn nginx_caddy_traefik_and_envoy_each_say_what_is_asked() {
        // nginx: the subrequest is a GET; the snippet sets the original method and URI.
        let nginx = asked(
            &Method::GET,
            "/fg",
            &headers(&[
                ("x-original-method", "POST"),
                ("x-original-uri", "/api/a?key=1"),
                ("host", "shop"),
            ]),
        )
        .unwrap();
        assert_eq!(nginx.method, Method::POST);
        assert_eq!(
            (nginx.path.as_str(), nginx.query.as_deref()),
            ("/api/a", Some("key=1"))
        );
        assert_eq!(nginx.host.as_deref(), Some("shop"));
        // Caddy and Traefik: X-Forwarded-*; Caddy's appended query on the check URI is ignored.
        let caddy = asked(
            &Method::GET,
            "/fg?key=forged",
            &headers(&[
                ("x-forwarded-method", "PUT"),
                ("x-forwarded-uri", "/b"),
                ("x-forwarded-host", "api"),
            ]),
        )
        .unwrap();
        assert_eq!(
            (caddy.method, caddy.path.as_str(), caddy.query),
            (Method::PUT, "/b", None)
        );
        assert_eq!(caddy.host.as_deref(), Some("api"));
        // Envoy: the original method, the original path under /check.
        let envoy = asked(&Method::DELETE, "/check/c/d?x=1", &HeaderMap::new()).unwrap();
        assert_eq!(
            (envoy.method, envoy.path.as_str()),
            (Method::DELETE, "/c/d")
        );
        assert_eq!(envoy.query.as_deref(), Some("x=1"));
        assert_eq!(
            asked(&Method::GET, "/check", &HeaderMap::new())
                .unwrap()
                .path,
            "/"
        );
    }

    #[test]
    fn unreadable_facts_are_refused() {
        let bad_method = headers(&[("x-forwarded-method", "GE T")]);
        assert!(matches!(
            asked(&Method::GET, "/", &bad_method),
            Err(FactsError::Method(_))
        ));
        let bad_uri = headers(&[("x-forwarded-uri", "http:/x")]);
        assert!(matches!(
            asked(&Method::GET, "/", &bad_uri),
            Err(FactsError::Target(_))
        ));
    }

    #[test]
    fn an_error_echoes_at_most_256_bytes_of_the_request() {
        use crate::gate::reply::MAX_ECHO;
        let long = "x".repeat(60_000);
        let e = asked(&Method::GET, &long, &HeaderMap::new())
            .map(|_| ())
            .unwrap_err();
        let FactsError::Target(echoed) = &e else {
            panic!("{e:?}")
        };
        assert!(
            echoed.len() <= MAX_ECHO && echoed.ends_with('…'),
            "{}",
            echoed.len()
        );
        assert_eq!(echo("/short"), "/short");
        let wide = echo(&"é".repeat(300));
        assert!(wide.len() <= MAX_ECHO && wide.starts_with("éé"), "{wide}");
    }
}
