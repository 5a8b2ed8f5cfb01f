//! Which requests a policy applies to: host, path prefix or regex, and method.

use http::Method;
use regex::Regex;
use std::fmt;

/// The parts of a request a route looks at.
#[derive(Debug, Clone, Copy)]
pub struct RouteFacts<'a> {
    /// The request method.
    pub method: &'a Method,
    /// The host the request is for, lowercase, without a port.
    pub host: Option<&'a str>,
    /// The URI path, in its normal form ([`super::normalize_path`]): the proxy rewrites the
    /// target before deciding, so no spelling of a path escapes a route.
    pub path: &'a str,
}

/// A policy's `match`: every condition given must hold; none given matches everything.
#[derive(Debug, Clone, Default)]
pub struct Route {
    /// Exact host, compared case-insensitively, port ignored.
    pub host: Option<String>,
    /// The path must start with this.
    pub path_prefix: Option<String>,
    /// The path must match this regular expression.
    pub path_regex: Option<Regex>,
    /// The method must be one of these (all when empty).
    pub methods: Vec<Method>,
}

impl PartialEq for Route {
    fn eq(&self, other: &Self) -> bool {
        self.host == other.host
            && self.path_prefix == other.path_prefix
            && self.path_regex.as_ref().map(Regex::as_str)
                == other.path_regex.as_ref().map(Regex::as_str)
            && self.methods == other.methods
    }
}

impl Route {
    /// Whether a request with these facts is on this route.
    pub fn matches(&self, req: &RouteFacts<'_>) -> bool {
        let host_ok = self
            .host
            .as_deref()
            .is_none_or(|h| req.host.is_some_and(|rh| rh.eq_ignore_ascii_case(h)));
        let prefix_ok = self
            .path_prefix
            .as_deref()
            .is_none_or(|p| req.path.starts_with(p));
        let regex_ok = self
            .path_regex
            .as_ref()
            .is_none_or(|r| r.is_match(req.path));
        let method_ok = self.methods.is_empty() || self.methods.contains(req.method);
        host_ok && prefix_ok && regex_ok && method_ok
    }

    /// Whether this route matches every request.
    pub fn is_everything(&self) -> bool {
        self.host.is_none()
            && self.path_prefix.is_none()
            && self.path_regex.is_none()
            && self.methods.is_empty()
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_everything() {
            return f.write_str("every request");
        }
        let mut parts = Vec::new();
        if !self.methods.is_empty() {
            let methods: Vec<&str> = self.methods.iter().map(Method::as_str).collect();
            parts.push(methods.join("|"));
        }
        if let Some(host) = &self.host {
            parts.push(format!("host {host}"));
        }
        if let Some(prefix) = &self.path_prefix {
            parts.push(format!("path {prefix}*"));
        }
        if let Some(regex) = &self.path_regex {
            parts.push(format!("path ~ {}", regex.as_str()));
        }
        f.write_str(&parts.join(" "))
    }
}

/// The host of a request: the `Host` header or the URI's authority, lowercase, port removed.
pub fn request_host(uri: &http::Uri, host_header: Option<&http::HeaderValue>) -> Option<String> {
    let raw = match host_header.and_then(|h| h.to_str().ok()) {
        Some(h) => h,
        None => uri.host()?,
    };
    let without_port = match raw.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !host.ends_with(':') => {
            host
        }
        _ => raw,
    };
    Some(without_port.trim_end_matches('.').to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(method: &'a Method, host: Option<&'a str>, path: &'a str) -> RouteFacts<'a> {
        RouteFacts { method, host, path }
    }

    #[test]
    fn every_given_condition_must_hold() {
        let route = Route {
            host: Some("api.example.com".into()),
            path_prefix: Some("/sendCaptcha".into()),
            path_regex: None,
            methods: vec![Method::POST],
        };
        let post = Method::POST;
        assert!(route.matches(&facts(&post, Some("API.example.com"), "/sendCaptcha/sms")));
        assert!(!route.matches(&facts(
            &Method::GET,
            Some("api.example.com"),
            "/sendCaptcha"
        )));
        assert!(!route.matches(&facts(&post, Some("www.example.com"), "/sendCaptcha")));
        assert!(!route.matches(&facts(&post, None, "/sendCaptcha")));
        assert!(!route.matches(&facts(&post, Some("api.example.com"), "/login")));
        assert!(Route::default().matches(&facts(&Method::GET, None, "/")));
    }

    #[test]
    fn regexes_match_paths() {
        let route = Route {
            path_regex: Some(Regex::new("^/users/[0-9]+$").unwrap()),
            ..Route::default()
        };
        assert!(route.matches(&facts(&Method::GET, None, "/users/42")));
        assert!(!route.matches(&facts(&Method::GET, None, "/users/x")));
    }

    #[test]
    fn hosts_lose_their_port_and_case() {
        let uri: http::Uri = "/x".parse().unwrap();
        let host = |h: &'static str| request_host(&uri, Some(&http::HeaderValue::from_static(h)));
        assert_eq!(
            host("API.Example.com:8080").as_deref(),
            Some("api.example.com")
        );
        assert_eq!(host("[::1]:8080").as_deref(), Some("[::1]"));
        assert_eq!(host("example.com.").as_deref(), Some("example.com"));
        let absolute: http::Uri = "http://Other.org:81/x".parse().unwrap();
        assert_eq!(request_host(&absolute, None).as_deref(), Some("other.org"));
    }
}
