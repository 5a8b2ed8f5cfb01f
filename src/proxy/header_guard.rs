//! The headers a request may not repeat and whose underscore spellings never reach the backend
//! (see `hygiene`), worked out once per snapshot from the config: what Floodgate decides on
//! (`Host`, `User-Agent`, `Authorization`, every `header:` identity source, global or a
//! policy's) and what it tells the backend or believes from trusted proxies (the forwarding
//! headers, the request id, the JA4, HTTP/2 fingerprint and score headers); and the two
//! questions asked of a request's headers (`hygiene` hands them on).

use crate::identity::is_underscore_spelling;
use http::header::{AUTHORIZATION, COOKIE, HOST, USER_AGENT};
use http::{HeaderMap, HeaderName};
use smallvec::SmallVec;

/// The forwarding headers Floodgate always sets toward the backend.
const FORWARDING: [HeaderName; 3] = [
    HeaderName::from_static("x-forwarded-for"),
    HeaderName::from_static("x-forwarded-proto"),
    HeaderName::from_static("x-forwarded-host"),
];

/// The headers held to one line, and those whose underscore spellings are removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderGuard {
    /// Held to one line: `Host`, `User-Agent`, `Authorization` and the identity sources'.
    single: Vec<HeaderName>,
    /// Whose underscore spellings go (only names with a `-` have one).
    spelled: Vec<HeaderName>,
}

impl HeaderGuard {
    /// The guard of a config whose identity sources read the headers `read`, and which sets
    /// (or believes from trusted proxies) the headers `told`.
    pub fn new(read: &[HeaderName], told: &[HeaderName]) -> Self {
        let mut single = vec![HOST, USER_AGENT, AUTHORIZATION];
        // HTTP/2 splits `Cookie` into lines of its own (RFC 9113 section 8.2.3).
        single.extend(read.iter().filter(|name| **name != COOKIE).cloned());
        let mut spelled: Vec<HeaderName> = [USER_AGENT]
            .into_iter()
            .chain(read.iter().cloned())
            .chain(told.iter().cloned())
            .chain(FORWARDING)
            .filter(|name| name.as_str().contains('-'))
            .collect();
        for list in [&mut single, &mut spelled] {
            list.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
            list.dedup();
        }
        Self { single, spelled }
    }

    /// The first header held to one line that `headers` repeat, if any.
    pub fn repeated(&self, headers: &HeaderMap) -> Option<&HeaderName> {
        self.single.iter().find(|name| repeated(headers, name))
    }

    /// The names in `headers` that are underscore spellings of a guarded header: a look at
    /// each name for a `_`, and no more for a request that has none.
    pub fn underscore_spellings(&self, headers: &HeaderMap) -> SmallVec<[HeaderName; 2]> {
        headers
            .keys()
            .filter(|key| key.as_str().contains('_'))
            .filter(|key| {
                self.spelled
                    .iter()
                    .any(|name| is_underscore_spelling(key.as_str(), name.as_str()))
            })
            .cloned()
            .collect()
    }
}

/// Whether header `name` has more than one line in `headers` (HTTP/2's split `Cookie` is the
/// one header that may, and is never asked about). A map with as many lines as names repeats
/// none, and is answered without a lookup: the usual request.
pub(crate) fn repeated(headers: &HeaderMap, name: &HeaderName) -> bool {
    headers.len() != headers.keys_len() && headers.get_all(name).iter().nth(1).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&'static str]) -> Vec<HeaderName> {
        list.iter().map(|n| HeaderName::from_static(n)).collect()
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(HeaderName::from_static(name), value.parse().unwrap());
        }
        map
    }

    #[test]
    fn decided_headers_and_identity_sources_are_held_to_one_line() {
        let guard = HeaderGuard::new(&names(&["x-api-key", "cookie"]), &[]);
        let two = |name| headers(&[(name, "a"), (name, "b")]);
        for name in ["user-agent", "authorization", "host", "x-api-key"] {
            assert_eq!(
                guard.repeated(&two(name)).map(HeaderName::as_str),
                Some(name)
            );
        }
        assert_eq!(
            guard.repeated(&two("cookie")),
            None,
            "HTTP/2 splits cookies"
        );
        assert_eq!(guard.repeated(&two("accept")), None);
        assert_eq!(guard.repeated(&headers(&[("user-agent", "a")])), None);
    }

    #[test]
    fn underscore_spellings_of_guarded_headers_are_found_and_others_left() {
        let guard = HeaderGuard::new(
            &names(&["x-api-key"]),
            &names(&["x-bot-score", "x-request-id", "via"]),
        );
        let sent = headers(&[
            ("x-bot-score", "0"),
            ("x_bot_score", "0"),
            ("x-bot_score", "0"),
            ("x_api_key", "k"),
            ("user_agent", "u"),
            ("x_forwarded_for", "1.2.3.4"),
            ("x_request_id", "r"),
            ("x_other_thing", "o"),
            ("x_bot_scor", "o"),
        ]);
        let mut found: Vec<String> = guard
            .underscore_spellings(&sent)
            .iter()
            .map(|n| n.as_str().to_owned())
            .collect();
        found.sort();
        let expected = [
            "user_agent",
            "x-bot_score",
            "x_api_key",
            "x_bot_score",
            "x_forwarded_for",
            "x_request_id",
        ];
        assert_eq!(found, expected);
        assert!(guard
            .underscore_spellings(&headers(&[("x-bot-score", "1")]))
            .is_empty());
    }
}
