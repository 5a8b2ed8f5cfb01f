//! The spelling rule: cookie, header and query values trimmed and unquoted alike.

use super::*;
use http::HeaderValue;

fn cookies(header: &'static str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(COOKIE, HeaderValue::from_static(header));
    headers
}

#[test]
fn cookie_spellings_share_one_bucket() {
    for header in [
        "sid=dave",
        "sid= dave",
        "sid=dave ",
        "sid=\"dave\"",
        "sid = \"dave\" ",
        "a=1; sid=\t dave\t; b=2",
        "a=1;sid=dave",
    ] {
        let headers = cookies(header);
        assert_eq!(
            cookie_value(&headers, "sid"),
            Some(&b"dave"[..]),
            "{header}"
        );
    }
}

#[test]
fn cookie_quotes_and_inner_bytes_are_otherwise_kept() {
    let value = |header| cookie_value(&cookies(header), "sid").map(<[u8]>::to_vec);
    assert_eq!(value("sid=\"\""), Some(vec![]), "empty once unquoted");
    assert_eq!(
        value("sid=\""),
        Some(b"\"".to_vec()),
        "a lone quote is not a pair"
    );
    assert_eq!(value("sid=\"da ve\""), Some(b"da ve".to_vec()));
    assert_eq!(
        value("sid=\"\"dave\"\""),
        Some(b"\"dave\"".to_vec()),
        "one pair"
    );
    assert_eq!(
        value("sid=\" dave\""),
        Some(b" dave".to_vec()),
        "inside the quotes"
    );
    assert_eq!(value("sid=a=b"), Some(b"a=b".to_vec()));
    assert_eq!(value("xsid=dave; sidx=dave"), None);
    assert_eq!(value("sid"), None);
}

fn api_key(value: &'static str) -> Option<Vec<u8>> {
    let mut headers = HeaderMap::new();
    headers.insert("x-api-key", HeaderValue::from_static(value));
    let key = Source::Header(HeaderName::from_static("x-api-key"));
    let req = Request::new(&headers, None, None, None);
    let value = key.value(&req, &IpFolding::default()).ok()?;
    value.map(Cow::into_owned)
}

#[test]
fn header_and_query_values_are_trimmed() {
    assert_eq!(api_key("dave"), Some(b"dave".to_vec()));
    assert_eq!(api_key("\tdave "), Some(b"dave".to_vec()));
    assert_eq!(api_key("da ve"), Some(b"da ve".to_vec()));
    assert_eq!(
        api_key("\"dave\""),
        Some(b"\"dave\"".to_vec()),
        "only cookies unquote"
    );
    assert_eq!(api_key("  "), None, "blank is absent");
    for query in ["p=dave", "p=+dave+", "p=%20dave%09", "p=%0Adave%0D"] {
        assert_eq!(query_value(query, "p").as_deref(), Some("dave"), "{query}");
    }
    assert_eq!(query_value("p=da%20ve", "p").as_deref(), Some("da ve"));
    assert_eq!(query_value("p=+", "p").as_deref(), Some(""), "then absent");
}
