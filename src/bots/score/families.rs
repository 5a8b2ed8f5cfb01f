//! Which browser family a User-Agent claims (Chromium-based, Firefox, Safari) and whether it
//! carries an automation marker. Only the first [`MAX_SCAN`] bytes are read: a real
//! User-Agent is a few hundred bytes, and a 64 KiB one costs no more than a short one.
//!
//! Every marker (`Mozilla/5.0`, `Chrome/`, `Firefox/`, `HeadlessChrome`, …) is matched in any
//! ASCII case: browsers write them one way, so a User-Agent that writes `firefox/` still
//! claims Firefox and is held to what Firefox sends, as `chrome/` (which reads as Safari by its
//! `AppleWebKit/ … Safari/`) always was. A case cannot take a client out of its family.

/// How much of a User-Agent (or `sec-ch-ua`) is looked at.
pub const MAX_SCAN: usize = 512;

/// A family of browsers sharing one TLS and HTTP/2 stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Chrome, Chromium, Edge, Opera, Brave, …: BoringSSL and Chromium's HTTP/2.
    Chromium,
    /// Firefox: NSS and Necko.
    Firefox,
    /// Safari, and every browser on iOS (WebKit's networking by Apple's rules).
    Safari,
}

impl Family {
    /// Every family, in the order the lists of published fingerprints keep them.
    pub const ALL: [Family; 3] = [Self::Chromium, Self::Firefox, Self::Safari];

    /// The family's place in [`Family::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The first `MAX_SCAN` bytes of `text`.
pub(super) fn head(text: &[u8]) -> &[u8] {
    &text[..text.len().min(MAX_SCAN)]
}

/// Whether `haystack` contains `needle` (not empty) in any ASCII case: the places of its first
/// byte (either case) found by `memchr`'s SIMD search, the whole needle compared only there.
/// It runs for every request a score or robots.txt's judge looks at (a comparison per byte
/// made [`family_of`] cost about 0.6 µs for a browser's User-Agent).
pub(super) fn has(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, _)) = needle.split_first() else {
        return true;
    };
    let (lower, upper) = (first.to_ascii_lowercase(), first.to_ascii_uppercase());
    memchr::memchr2_iter(lower, upper, haystack).any(|at| starts_with(&haystack[at..], needle))
}

/// Whether `text` starts with `prefix` in any ASCII case.
fn starts_with(text: &[u8], prefix: &[u8]) -> bool {
    text.get(..prefix.len())
        .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
}

/// The browser family `user_agent` claims, if any. iOS browsers (`CriOS`, `FxiOS`, `EdgiOS`)
/// are WebKit underneath, so Safari; Chromium-based browsers all say `Chrome/`.
pub(super) fn family_of(user_agent: &[u8]) -> Option<Family> {
    let ua = head(user_agent);
    if !starts_with(ua, b"Mozilla/5.0 ") {
        return None;
    }
    let ios = [&b"CriOS/"[..], b"FxiOS/", b"EdgiOS/"];
    if ios.iter().any(|marker| has(ua, marker)) {
        return Some(Family::Safari);
    }
    if has(ua, b"Chrome/") || has(ua, b"Chromium/") {
        return Some(Family::Chromium);
    }
    if has(ua, b"Firefox/") {
        return Some(Family::Firefox);
    }
    (has(ua, b"AppleWebKit/") && has(ua, b"Safari/")).then_some(Family::Safari)
}

/// The markers of automated browsers: Chromium's headless mode names itself in the
/// User-Agent and in `sec-ch-ua`; PhantomJS and SlimerJS do in the User-Agent.
const HEADLESS_MARKERS: [&[u8]; 3] = [b"HeadlessChrome", b"PhantomJS", b"SlimerJS"];

/// Whether `user_agent` or the `sec-ch-ua` client hint carries an automation marker.
pub(super) fn headless(user_agent: &[u8], client_hints: Option<&[u8]>) -> bool {
    let marked = |text: &[u8]| HEADLESS_MARKERS.iter().any(|m| has(head(text), m));
    marked(user_agent) || client_hints.is_some_and(marked)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHROME: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
    const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";
    const SAFARI: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Safari/605.1.15";
    const IOS_CHROME: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/120.0 Mobile/15E148 Safari/604.1";

    #[test]
    fn user_agents_name_their_family() {
        let family = |ua: &str| family_of(ua.as_bytes());
        assert_eq!(family(CHROME), Some(Family::Chromium));
        assert_eq!(family(FIREFOX), Some(Family::Firefox));
        assert_eq!(family(SAFARI), Some(Family::Safari));
        assert_eq!(family(IOS_CHROME), Some(Family::Safari));
        for none in [
            "curl/8.5.0",
            "python-requests/2.31",
            "",
            "Mozilla/5.0 (compatible)",
        ] {
            assert_eq!(family(none), None, "{none}");
        }
    }

    #[test]
    fn a_marker_in_another_case_names_the_same_family() {
        let family = |ua: String| family_of(ua.as_bytes());
        assert_eq!(family(FIREFOX.to_lowercase()), Some(Family::Firefox));
        assert_eq!(
            family(FIREFOX.replace("Firefox/", "FIREFOX/")),
            Some(Family::Firefox)
        );
        assert_eq!(
            family(CHROME.replace("Chrome/", "chrome/")),
            Some(Family::Chromium),
            "Chromium, not Safari by its AppleWebKit/ and Safari/"
        );
        assert_eq!(family(CHROME.to_uppercase()), Some(Family::Chromium));
        assert_eq!(family(SAFARI.to_lowercase()), Some(Family::Safari));
        assert_eq!(family(IOS_CHROME.to_lowercase()), Some(Family::Safari));
        assert!(headless(
            CHROME.replace("Chrome/", "headlesschrome/").as_bytes(),
            None
        ));
        assert!(
            !has(b"Chrom", b"chrome/"),
            "a needle longer than what is left"
        );
    }

    #[test]
    fn headless_markers_are_found_in_the_user_agent_or_the_client_hints() {
        let headless_ua = CHROME.replace("Chrome/", "HeadlessChrome/");
        assert!(headless(headless_ua.as_bytes(), None));
        assert!(headless(
            CHROME.as_bytes(),
            Some(br#""Chromium";v="156", "HeadlessChrome";v="156""#)
        ));
        assert!(!headless(CHROME.as_bytes(), Some(br#""Chromium";v="156""#)));
    }

    #[test]
    fn only_the_head_of_a_long_user_agent_is_read() {
        let long = format!("{CHROME}{}HeadlessChrome", " ".repeat(64 << 10));
        assert!(
            !headless(long.as_bytes(), None),
            "the marker is past MAX_SCAN"
        );
        assert_eq!(family_of(long.as_bytes()), Some(Family::Chromium));
    }
}
