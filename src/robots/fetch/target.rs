//! Whose robots.txt is read and where: a configured host and the backend that serves it. A
//! redirect is followed only to the same backend: its `Location` is read as the host's
//! (`<scheme>://<host>/robots.txt` is the base of a relative one) and, when it names the
//! host or the backend's own address (whatever its scheme or port), its path and query are
//! asked of the backend again, still with the host's `Host`.

use super::Unavailable;
use http::HeaderValue;
use reqwest::Url;

/// The path every fetch starts from.
const ROBOTS_PATH: &str = "/robots.txt";

/// One host's robots.txt at its backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    host: String,
    host_header: HeaderValue,
    backend: Url,
    /// `<backend scheme>://<host>/robots.txt`: how the backend sees the request.
    seen_as: Url,
}

/// Why a host and backend cannot be read from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The backend is not an `http://` or `https://` URL with a host.
    #[error("backend {0:?} is not an http:// or https:// address")]
    Backend(String),
    /// The host is not a valid `Host` header (`name` or `name:port`).
    #[error("host {0:?} is not a host name")]
    Host(String),
}

impl Target {
    /// `host`'s robots.txt at `backend` (`http://address:port` or `https://…`; its path is
    /// ignored), fetched with `Host: host`.
    pub fn new(host: &str, backend: &str) -> Result<Self, TargetError> {
        let backend_error = || TargetError::Backend(backend.to_owned());
        let backend = Url::parse(backend).map_err(|_| backend_error())?;
        if !matches!(backend.scheme(), "http" | "https") || backend.host_str().is_none() {
            return Err(backend_error());
        }
        let host_error = || TargetError::Host(host.to_owned());
        let host_header = HeaderValue::from_str(host).map_err(|_| host_error())?;
        let seen_as = Url::parse(&format!("{}://{host}{ROBOTS_PATH}", backend.scheme()))
            .ok()
            .filter(|u| u.path() == ROBOTS_PATH && u.username().is_empty())
            .ok_or_else(host_error)?;
        Ok(Self {
            host: host.to_owned(),
            host_header,
            backend,
            seen_as,
        })
    }

    /// The configured host.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The backend's address, as given.
    pub fn backend(&self) -> &Url {
        &self.backend
    }

    /// The `Host` header sent.
    pub(super) fn host_header(&self) -> &HeaderValue {
        &self.host_header
    }

    /// The first request: the backend's `/robots.txt`, and how the backend sees it.
    pub(super) fn first(&self) -> Hop {
        Hop {
            seen_as: self.seen_as.clone(),
            url: self.on_backend(&self.seen_as),
        }
    }

    /// The request a redirect from `from` to `location` leads to, if it stays on the backend.
    pub(super) fn redirect(&self, from: &Hop, location: &str) -> Result<Hop, Unavailable> {
        let seen_as = from
            .seen_as
            .join(location)
            .map_err(|_| Unavailable::Redirect(location.to_owned()))?;
        let here = |host: Option<&str>| host.is_some() && host == seen_as.host_str();
        if !matches!(seen_as.scheme(), "http" | "https")
            || !(here(self.seen_as.host_str()) || here(self.backend.host_str()))
        {
            return Err(Unavailable::Redirect(location.to_owned()));
        }
        Ok(Hop {
            url: self.on_backend(&seen_as),
            seen_as,
        })
    }

    /// `seen_as`'s path and query on the backend.
    fn on_backend(&self, seen_as: &Url) -> Url {
        let mut url = self.backend.clone();
        url.set_path(seen_as.path());
        url.set_query(seen_as.query());
        url.set_fragment(None);
        url
    }
}

/// One request of a fetch: where it goes, and the URL the backend takes it for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Hop {
    /// The host's view (the base of the next `Location`).
    pub(super) seen_as: Url,
    /// The backend's address with that path and query.
    pub(super) url: Url,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target::new("Example.com", "http://127.0.0.1:8080").unwrap()
    }

    fn after(location: &str) -> Result<String, Unavailable> {
        let t = target();
        t.redirect(&t.first(), location)
            .map(|hop| hop.url.to_string())
    }

    #[test]
    fn the_first_request_is_the_backends_robots_txt_with_the_hosts_name() {
        let t = Target::new("example.com:8443", "https://10.0.0.1:9443/app/").unwrap();
        assert_eq!(t.first().url.as_str(), "https://10.0.0.1:9443/robots.txt");
        assert_eq!(t.host_header(), "example.com:8443");
        assert_eq!(t.host(), "example.com:8443");
    }

    #[test]
    fn a_redirect_on_the_host_or_the_backend_is_asked_of_the_backend() {
        let on_backend = "http://127.0.0.1:8080/";
        assert_eq!(after("/r.txt").unwrap(), format!("{on_backend}r.txt"));
        assert_eq!(
            after("r.txt?x=1#y").unwrap(),
            format!("{on_backend}r.txt?x=1")
        );
        assert_eq!(
            after("https://EXAMPLE.com:444/a").unwrap(),
            format!("{on_backend}a")
        );
        assert_eq!(
            after("http://127.0.0.1:9/b").unwrap(),
            format!("{on_backend}b")
        );
    }

    #[test]
    fn a_redirect_elsewhere_is_not_followed() {
        for location in [
            "http://other.example/robots.txt",
            "//evil/",
            "ftp://example.com/",
        ] {
            assert_eq!(
                after(location),
                Err(Unavailable::Redirect(location.to_owned())),
                "{location}"
            );
        }
    }

    #[test]
    fn bad_hosts_and_backends_are_refused() {
        for backend in ["127.0.0.1:8080", "ftp://a/", "not a url", "unix:/run/x"] {
            assert_eq!(
                Target::new("a", backend),
                Err(TargetError::Backend(backend.to_owned())),
                "{backend}"
            );
        }
        for host in ["a/b", "a b", "", "user@a", "a\n"] {
            assert_eq!(
                Target::new(host, "http://b"),
                Err(TargetError::Host(host.to_owned())),
                "{host:?}"
            );
        }
    }
}
