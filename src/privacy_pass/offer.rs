//! What a challenge answer offers for one issuer (RFC 9577 §2.1):
//! `WWW-Authenticate: PrivateToken challenge="…", token-key="…"`.

use super::token::SCHEME;
use std::sync::Arc;

/// One issuer's challenge, ready for a `WWW-Authenticate` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The issuer's name.
    pub issuer: Arc<str>,
    /// The TokenChallenge in base64url.
    pub challenge: String,
    /// The issuer's key in base64url (RFC 9578 §6.5).
    pub token_key: String,
}

impl Offer {
    /// The `WWW-Authenticate` value: `PrivateToken challenge="…", token-key="…"` (both
    /// base64url, so nothing needs escaping in the quotes).
    pub fn www_authenticate(&self) -> String {
        format!(
            "{SCHEME} challenge=\"{}\", token-key=\"{}\"",
            self.challenge, self.token_key
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privacy_pass::test_issuer::challenges_of;

    #[test]
    fn the_header_is_rfc_9577s_form() {
        let offer = Offer {
            issuer: "i".into(),
            challenge: "AAIA".into(),
            token_key: "MIIB".into(),
        };
        let value = offer.www_authenticate();
        assert_eq!(value, "PrivateToken challenge=\"AAIA\", token-key=\"MIIB\"");
        let read = challenges_of([value.as_str()]);
        assert_eq!(read, [("AAIA".to_owned(), "MIIB".to_owned())]);
    }
}
