//! The headers the proxy sets and removes on a request or response it passes on, gathered while
//! the message is read and applied in one step at the end: straight into the header map when
//! names go lowercase (no name parsed or copied again, the map grown once), through pingora's
//! case-keeping calls when `server.preserve_header_case` keeps the sender's spelling.

use super::header_case;
use http::{HeaderMap, HeaderName, HeaderValue};
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::Result;
use smallvec::SmallVec;

/// One change to a message's headers.
#[derive(Debug)]
enum Edit {
    /// The header is to hold this one value, whatever lines it had.
    Set(HeaderName, HeaderValue),
    /// The header is to go.
    Remove(HeaderName),
}

/// The changes to one message's headers, in order.
#[derive(Debug, Default)]
pub(super) struct HeaderEdits(SmallVec<[Edit; 8]>);

impl HeaderEdits {
    /// Header `name` is to hold `value` alone.
    pub(super) fn set(&mut self, name: HeaderName, value: HeaderValue) {
        self.0.push(Edit::Set(name, value));
    }

    /// Header `name` is to go.
    pub(super) fn remove(&mut self, name: HeaderName) {
        self.0.push(Edit::Remove(name));
    }

    /// Whether header `name` is to go.
    pub(super) fn removes(&self, name: &HeaderName) -> bool {
        self.0
            .iter()
            .any(|edit| matches!(edit, Edit::Remove(n) if n == name))
    }

    /// Applies the edits to `req`; its header names go lowercase unless `keep_case`.
    pub(super) fn apply_to_request(self, req: &mut RequestHeader, keep_case: bool) -> Result<()> {
        match keep_case {
            true => self.apply_keeping_case(req),
            false => header_case::shed_request(req, |headers| self.apply_to_map(headers)),
        }
    }

    /// Applies the edits to `resp`; its header names go lowercase unless `keep_case`.
    pub(super) fn apply_to_response(
        self,
        resp: &mut ResponseHeader,
        keep_case: bool,
    ) -> Result<()> {
        match keep_case {
            true => self.apply_keeping_case(resp),
            false => header_case::shed_response(resp, |headers| self.apply_to_map(headers)),
        }
    }

    fn apply_to_map(self, headers: &mut HeaderMap) {
        let added = self
            .0
            .iter()
            .filter(|edit| matches!(edit, Edit::Set(..)))
            .count();
        headers.reserve(added);
        for edit in self.0 {
            match edit {
                Edit::Set(name, value) => {
                    headers.insert(name, value);
                }
                Edit::Remove(name) => {
                    headers.remove(name);
                }
            }
        }
    }

    fn apply_keeping_case(self, header: &mut impl CaseKeeping) -> Result<()> {
        for edit in self.0 {
            match edit {
                Edit::Set(name, value) => header.insert(name, value)?,
                Edit::Remove(name) => header.remove(&name),
            }
        }
        Ok(())
    }
}

/// A pingora header whose case map must see every change.
trait CaseKeeping {
    fn insert(&mut self, name: HeaderName, value: HeaderValue) -> Result<()>;
    fn remove(&mut self, name: &HeaderName);
}

impl CaseKeeping for RequestHeader {
    fn insert(&mut self, name: HeaderName, value: HeaderValue) -> Result<()> {
        self.insert_header(name, value)
    }

    fn remove(&mut self, name: &HeaderName) {
        self.remove_header(name);
    }
}

impl CaseKeeping for ResponseHeader {
    fn insert(&mut self, name: HeaderName, value: HeaderValue) -> Result<()> {
        self.insert_header(name, value)
    }

    fn remove(&mut self, name: &HeaderName) {
        self.remove_header(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edits() -> HeaderEdits {
        let mut edits = HeaderEdits::default();
        edits.remove(HeaderName::from_static("connection"));
        edits.set(
            HeaderName::from_static("x-forwarded-proto"),
            HeaderValue::from_static("http"),
        );
        edits.set(
            HeaderName::from_static("x-request-id"),
            HeaderValue::from_static("r1"),
        );
        edits
    }

    fn wire(req: &RequestHeader) -> String {
        let mut buf = Vec::new();
        req.header_to_h1_wire(&mut buf);
        String::from_utf8(buf).expect("text")
    }

    fn request() -> RequestHeader {
        let mut req = RequestHeader::build("GET", b"/", None).unwrap();
        req.append_header("X-Request-Id", "old").unwrap();
        req.append_header("X-Request-Id", "older").unwrap();
        req.append_header("Connection", "keep-alive").unwrap();
        req.append_header("X-Api-Key", "k").unwrap();
        req
    }

    #[test]
    fn edits_replace_every_line_and_remove_in_either_case_mode() {
        let mut lower = request();
        edits().apply_to_request(&mut lower, false).unwrap();
        assert!(!lower.has_case());
        assert_eq!(
            wire(&lower),
            "x-request-id: r1\r\nx-api-key: k\r\nx-forwarded-proto: http\r\n"
        );

        let mut kept = request();
        edits().apply_to_request(&mut kept, true).unwrap();
        assert!(kept.has_case());
        assert_eq!(
            wire(&kept),
            "x-request-id: r1\r\nX-Api-Key: k\r\nx-forwarded-proto: http\r\n"
        );
    }

    #[test]
    fn a_response_takes_its_edits_and_removals_are_known() {
        let edits = edits();
        assert!(edits.removes(&http::header::CONNECTION));
        assert!(!edits.removes(&http::header::CACHE_CONTROL));
        let mut resp = ResponseHeader::build(200, None).unwrap();
        resp.append_header("Connection", "close").unwrap();
        edits.apply_to_response(&mut resp, false).unwrap();
        assert!(!resp.headers.contains_key("connection"));
        assert_eq!(resp.headers["x-request-id"], "r1");
    }
}
