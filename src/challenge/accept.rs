//! Whether a request's `Accept` headers take an HTML page: a browser's and curl's do, a feed
//! reader's and an API client's do not. Read without allocating: it runs on every request to
//! a challenged route.

use http::{header::ACCEPT, HeaderMap};

/// Feed types: a request naming one is a feed reader's, whatever else it accepts.
const FEED_TYPES: [&str; 5] = [
    "application/rss+xml",
    "application/atom+xml",
    "application/feed+json",
    "application/rss",
    "application/rdf+xml",
];

/// Plain XML: a feed reader's when HTML is not named too (browsers name both).
const XML_TYPES: [&str; 2] = ["application/xml", "text/xml"];

/// The HTML types.
const HTML_TYPES: [&str; 2] = ["text/html", "application/xhtml+xml"];

/// Wildcards that take HTML (curl and wget send `*/*`).
const WILDCARDS: [&str; 3] = ["*/*", "*", "text/*"];

/// What a request's `Accept` headers name, by kind (entries with q = 0 count as unnamed).
#[derive(Debug, Default)]
struct Accepted {
    /// Any entry at all, even with q = 0.
    listed: bool,
    html: bool,
    feed: bool,
    xml: bool,
    wildcard: bool,
    /// A type that is none of the above (`application/json`, `image/*`).
    other: bool,
}

/// Whether the `Accept` headers take an HTML page: absent or empty; naming no feed type and
/// HTML; or naming nothing but wildcards. Plain XML without HTML counts as a feed.
pub(super) fn accepts_a_page(headers: &HeaderMap) -> bool {
    let mut accepted = Accepted::default();
    for value in headers.get_all(ACCEPT) {
        for entry in value.as_bytes().split(|&b| b == b',') {
            accepted.add(entry);
        }
    }
    if !accepted.listed {
        return true;
    }
    if accepted.feed || (accepted.xml && !accepted.html) {
        return false;
    }
    accepted.html || (accepted.wildcard && !accepted.other)
}

impl Accepted {
    /// Notes one `type/subtype; params` entry.
    fn add(&mut self, entry: &[u8]) {
        let mut parts = entry.split(|&b| b == b';');
        let media = parts.next().unwrap_or_default().trim_ascii();
        if media.is_empty() {
            return;
        }
        self.listed = true;
        if parts.any(is_q_zero) {
            return;
        }
        let is_one_of = |names: &[&str]| {
            names
                .iter()
                .any(|name| media.eq_ignore_ascii_case(name.as_bytes()))
        };
        if is_one_of(&HTML_TYPES) {
            self.html = true;
        } else if is_one_of(&FEED_TYPES) {
            self.feed = true;
        } else if is_one_of(&XML_TYPES) {
            self.xml = true;
        } else if is_one_of(&WILDCARDS) {
            self.wildcard = true;
        } else {
            self.other = true;
        }
    }
}

/// Whether a media-type parameter is `q=0` (or `q=0.000`): not acceptable at all.
pub(super) fn is_q_zero(parameter: &[u8]) -> bool {
    let Some(eq) = parameter.iter().position(|&b| b == b'=') else {
        return false;
    };
    let (name, value) = (&parameter[..eq], &parameter[eq + 1..]);
    if !name.trim_ascii().eq_ignore_ascii_case(b"q") {
        return false;
    }
    match value.trim_ascii() {
        [b'0'] => true,
        [b'0', b'.', decimals @ ..] => decimals.iter().all(|&b| b == b'0'),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn accepts(values: &[&str]) -> bool {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(ACCEPT, HeaderValue::from_str(value).unwrap());
        }
        accepts_a_page(&headers)
    }

    #[test]
    fn browsers_and_command_line_clients_take_a_page() {
        let chromium = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,\
                        image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7";
        let firefox = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
        let safari = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
        let lynx = "text/html, text/plain, text/sgml, */*;q=0.01";
        for browser in [chromium, firefox, safari, lynx] {
            assert!(accepts(&[browser]), "{browser}");
        }
        assert!(accepts(&["*/*"]), "curl and wget");
        assert!(accepts(&[]), "no Accept");
        assert!(accepts(&[""]), "an empty Accept");
        assert!(accepts(&["text/*"]));
        assert!(
            accepts(&["TEXT/HTML; Charset=UTF-8"]),
            "case-insensitive, with parameters"
        );
    }

    #[test]
    fn feed_readers_are_never_shown_a_page() {
        let miniflux = "application/rss+xml, application/rdf+xml;q=0.9, \
                        application/atom+xml;q=0.9, application/xml;q=0.8, text/xml;q=0.8, */*;q=0.1";
        let freshrss = "application/atom+xml, application/rss+xml, application/rdf+xml;q=0.9, \
                        application/xml;q=0.8, text/xml;q=0.8, text/html;q=0.7, \
                        unknown/unknown;q=0.1, application/unknown;q=0.1, */*;q=0.1";
        let feedly_like =
            "application/atom+xml,application/rss+xml,application/xml;q=0.9,*/*;q=0.8";
        let json_feed = "application/feed+json, application/json;q=0.9";
        for reader in [
            miniflux,
            freshrss,
            feedly_like,
            json_feed,
            "application/rss",
            "text/xml",
        ] {
            assert!(!accepts(&[reader]), "{reader}");
        }
        assert!(
            !accepts(&["application/xml, */*"]),
            "XML without HTML is a feed"
        );
        assert!(
            !accepts(&["text/html", "application/atom+xml"]),
            "headers are joined"
        );
    }

    #[test]
    fn api_calls_and_other_types_are_not_pages() {
        let fetch_json = "application/json, text/plain, */*";
        for api in [
            fetch_json,
            "application/json",
            "image/*",
            "image/avif,image/webp,*/*;q=0.8",
        ] {
            assert!(!accepts(&[api]), "{api}");
        }
    }

    #[test]
    fn q_zero_takes_a_type_back() {
        assert!(!accepts(&["text/html;q=0, application/json"]));
        assert!(!accepts(&["text/html; q=0.000"]));
        assert!(accepts(&["text/html; q=0.001"]));
        assert!(
            accepts(&["text/html, application/rss+xml;q=0"]),
            "a feed type refused"
        );
        assert!(!accepts(&["*/*;q=0"]), "nothing acceptable");
        assert!(accepts(&["*/*;Q=0.5"]));
    }

    #[test]
    fn q_zero_is_read_from_any_parameter_position() {
        assert!(is_q_zero(b" q=0"));
        assert!(is_q_zero(b"Q = 0."));
        assert!(!is_q_zero(b"q=0.5"));
        assert!(!is_q_zero(b"v=0"));
        assert!(!is_q_zero(b"q"));
    }
}
