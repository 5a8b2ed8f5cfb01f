//! Whether a client takes its challenge page gzipped (`Accept-Encoding`, RFC 9110 §12.5.3):
//! `gzip` (or `x-gzip`) listed with a weight above 0, or `*` above 0 with `gzip` not listed.
//! Read without allocating: it runs for every page served.

use http::{header::ACCEPT_ENCODING, HeaderMap};

use super::accept::is_q_zero;

/// How a challenge page's body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coding {
    /// As it is.
    #[default]
    Identity,
    /// Gzipped (`Content-Encoding: gzip`).
    Gzip,
}

impl Coding {
    /// The coding the `Accept-Encoding` headers in `headers` take: gzip when they take it.
    pub fn accepted(headers: &HeaderMap) -> Self {
        let (mut gzip, mut any) = (None, None);
        for value in headers.get_all(ACCEPT_ENCODING) {
            for entry in value.as_bytes().split(|&b| b == b',') {
                let mut parts = entry.split(|&b| b == b';');
                let name = parts.next().unwrap_or_default().trim_ascii();
                let takes = !parts.any(is_q_zero);
                if name.eq_ignore_ascii_case(b"gzip") || name.eq_ignore_ascii_case(b"x-gzip") {
                    gzip = Some(gzip.unwrap_or(false) || takes);
                } else if name == b"*" {
                    any = Some(any.unwrap_or(false) || takes);
                }
            }
        }
        match gzip.or(any) {
            Some(true) => Self::Gzip,
            _ => Self::Identity,
        }
    }

    /// Its `Content-Encoding` value, if it has one.
    pub fn content_encoding(self) -> Option<&'static str> {
        match self {
            Self::Identity => None,
            Self::Gzip => Some("gzip"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn coding(values: &[&str]) -> Coding {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(ACCEPT_ENCODING, HeaderValue::from_str(value).unwrap());
        }
        Coding::accepted(&headers)
    }

    #[test]
    fn browsers_get_gzip() {
        assert_eq!(coding(&["gzip, deflate, br, zstd"]), Coding::Gzip);
        assert_eq!(coding(&["br;q=1.0, gzip;q=0.8, *;q=0.1"]), Coding::Gzip);
        assert_eq!(coding(&["deflate", "X-GZIP"]), Coding::Gzip);
        assert_eq!(coding(&["*"]), Coding::Gzip);
    }

    #[test]
    fn gzip_refused_or_not_named_means_the_page_as_it_is() {
        assert_eq!(coding(&[]), Coding::Identity);
        assert_eq!(coding(&[""]), Coding::Identity);
        assert_eq!(coding(&["identity"]), Coding::Identity);
        assert_eq!(coding(&["br, deflate"]), Coding::Identity);
        assert_eq!(coding(&["gzip;q=0, *"]), Coding::Identity);
        assert_eq!(coding(&["*;q=0.000"]), Coding::Identity);
        assert_eq!(coding(&["gzipped, xgzip"]), Coding::Identity);
    }
}
