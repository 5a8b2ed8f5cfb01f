//! Request ids: the one a request carries in `server.request_id_header`. Only a trusted
//! proxy's (`identity.ip.trusted_proxies`) is kept; every other request gets one Floodgate
//! makes, and the client's own goes to the backend apart (`x-client-request-id`), as it came.
//!
//! The rule: a trusted proxy's value is kept when it is one line of 1 to 1024 visible ASCII
//! characters not in Floodgate's own form (`fg-`…). Otherwise (a client that is no trusted
//! proxy, absent, repeated, empty, too long, other characters, `fg-`…) the proxy makes one:
//! `fg-` and 32 lowercase hex digits spelling 128 bits from the thread's CSPRNG (ChaCha,
//! seeded from the OS), so ids are unique across a fleet and none can be guessed from
//! another. A decision is kept under a request's id (`explain`), so an id a client chose must
//! never be one: it could replace the record of someone else's request.

use crate::explain::{is_own_form, Reference};
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use smallvec::SmallVec;

/// The longest id a trusted proxy may pass on.
pub(super) const MAX_TRUSTED: usize = 1024;

/// The header the backend finds a client's own id in, when it sent one and it was not kept.
pub(super) const CLIENT_ID: HeaderName = HeaderName::from_static("x-client-request-id");

/// A request's id, and its reference when Floodgate made it.
#[derive(Debug)]
pub(super) struct RequestId {
    /// The id, as sent to the backend and returned to the client.
    pub(super) value: HeaderValue,
    /// The reference of Floodgate's own id; `None` for a trusted proxy's.
    pub(super) own: Option<Reference>,
}

/// Whether `value` may be kept as the request id of a trusted proxy.
pub(super) fn acceptable(value: &[u8]) -> bool {
    !value.is_empty()
        && value.len() <= MAX_TRUSTED
        && value.iter().all(|&b| b.is_ascii_graphic() || b == b' ')
        && value.first() != Some(&b' ')
        && value.last() != Some(&b' ')
        && !is_own_form(value)
}

/// The request's id: the one in `headers` under `name` if it came from a `trusted` proxy and
/// may be kept, else a new one.
pub(super) fn of(headers: &HeaderMap, name: &HeaderName, trusted: bool) -> RequestId {
    if trusted {
        let mut values = headers.get_all(name).iter();
        if let (Some(value), None) = (values.next(), values.next()) {
            if acceptable(value.as_bytes()) {
                return RequestId {
                    value: value.clone(),
                    own: None,
                };
            }
        }
    }
    generate()
}

/// A fresh id: 128 random bits, `fg-` and 32 hex digits. Its text is moved into the header
/// value's one block, which the copies for the backend and the answer share (a value copied
/// from a slice would allocate again at its first copy).
pub(super) fn generate() -> RequestId {
    let (own, text) = Reference::own(rand::random());
    RequestId {
        // Hex digits and `-` are always a valid header value.
        value: HeaderValue::from_maybe_shared(Bytes::from_owner(text))
            .unwrap_or(HeaderValue::from_static("fg-")),
        own: Some(own),
    }
}

/// The client's own id, every line of header `name` in `headers` joined as it came (`None`
/// when it sent none).
pub(super) fn clients_own(headers: &HeaderMap, name: &HeaderName) -> Option<HeaderValue> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    let Some(second) = values.next() else {
        return Some(first.clone());
    };
    let mut joined: SmallVec<[u8; 128]> = SmallVec::from_slice(first.as_bytes());
    for value in std::iter::once(second).chain(values) {
        joined.extend_from_slice(b", ");
        joined.extend_from_slice(value.as_bytes());
    }
    HeaderValue::from_bytes(&joined).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append("x-request-id", HeaderValue::from_str(v).unwrap());
        }
        map
    }

    fn is_own(id: &RequestId) -> bool {
        let text = id.value.to_str().unwrap();
        id.own.as_ref().is_some_and(|r| r.to_string() == text)
            && text.len() == 35
            && text.starts_with("fg-")
            && text[3..].bytes().all(|b| b"0123456789abcdef".contains(&b))
    }

    #[test]
    fn a_clients_id_is_never_kept_and_goes_apart_as_it_came() {
        let name = HeaderName::from_static("x-request-id");
        for sent in [&["abc-123_x.y:z"][..], &["has space"], &["a", "b"], &[]] {
            let id = of(&headers(sent), &name, false);
            assert!(is_own(&id), "{sent:?}");
        }
        assert_eq!(
            clients_own(&headers(&["abc", "d e"]), &name).unwrap(),
            "abc, d e"
        );
        assert_eq!(clients_own(&headers(&["abc"]), &name).unwrap(), "abc");
        assert!(clients_own(&headers(&[]), &name).is_none());
    }

    #[test]
    fn a_trusted_proxy_may_pass_on_ids_but_none_in_floodgates_form() {
        let name = HeaderName::from_static("x-request-id");
        let long = "a b;c".repeat(100);
        let kept = of(&headers(&[&long]), &name, true);
        assert_eq!(
            (kept.value.to_str().unwrap(), kept.own),
            (long.as_str(), None)
        );
        assert!(is_own(&of(&headers(&[&"a".repeat(1025)]), &name, true)));
        assert!(is_own(&of(&headers(&["a", "b"]), &name, true)));
        let forged = format!("FG-{}", "0".repeat(32));
        assert!(is_own(&of(&headers(&[&forged]), &name, true)));
    }

    #[test]
    fn generated_ids_differ_in_every_part() {
        let ids: Vec<RequestId> = (0..1000).map(|_| generate()).collect();
        assert!(ids.iter().all(is_own));
        let texts: std::collections::HashSet<_> = ids.iter().map(|i| i.value.clone()).collect();
        assert_eq!(texts.len(), 1000);
        // No shared prefix: the first 8 digits alone tell 1000 ids apart (a clash among
        // 1000 draws of 32 bits is a one-in-8,600 chance).
        let heads: std::collections::HashSet<_> = ids
            .iter()
            .map(|i| i.value.as_bytes()[3..11].to_vec())
            .collect();
        assert!(heads.len() >= 999);
    }
}
