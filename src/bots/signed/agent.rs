//! Which agent a signature names: the authority of its `Signature-Agent` link
//! (`"https://chatgpt.com"` → `chatgpt.com`), lower case, and whether its directory may be
//! fetched (an `https` link).

use http::Uri;
use std::sync::Arc;
use web_bot_auth::SignatureAgentLink;

/// An agent a signature names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Agent {
    /// Its authority, lower case, with the port when one was given.
    pub(crate) authority: Arc<str>,
    /// Whether the link is `https` (only then is its directory fetched).
    pub(crate) https: bool,
}

/// The agent of the first link naming one; inline key sets (`data:` links) name nobody.
pub(crate) fn agent_of(links: &[SignatureAgentLink]) -> Option<Agent> {
    links.iter().find_map(|link| match link {
        SignatureAgentLink::External(url) => parse(url),
        SignatureAgentLink::Inline(_) => None,
    })
}

/// The agent of `url`, if it is an `http(s)` URL with an authority and no user information.
fn parse(url: &str) -> Option<Agent> {
    let uri: Uri = url.parse().ok()?;
    let https = match uri.scheme_str()? {
        "https" => true,
        "http" => false,
        _ => return None,
    };
    let authority = uri.authority()?.as_str();
    if authority.contains('@') || authority.is_empty() {
        return None;
    }
    Some(Agent {
        authority: authority.to_ascii_lowercase().into(),
        https,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(url: &str) -> Option<(String, bool)> {
        let links = [SignatureAgentLink::External(url.to_owned())];
        agent_of(&links).map(|a| (a.authority.to_string(), a.https))
    }

    #[test]
    fn the_agent_is_the_links_authority() {
        assert_eq!(
            named("https://ChatGPT.com"),
            Some(("chatgpt.com".into(), true))
        );
        assert_eq!(
            named("https://127.0.0.1:8443/"),
            Some(("127.0.0.1:8443".into(), true))
        );
        assert_eq!(named("http://a.example"), Some(("a.example".into(), false)));
        for bad in [
            "ftp://a.example",
            "https://user@a.example",
            "/relative",
            "nonsense",
        ] {
            assert_eq!(named(bad), None, "{bad}");
        }
    }
}
