//! Which [`Signal`]s a request shows, from its headers and what is known of its sender. Every
//! check is a header lookup or a scan of at most [`MAX_SCAN`](super::families::MAX_SCAN)
//! bytes, so a request with thousands of headers or a 64 KiB User-Agent costs what a plain
//! one does.

use super::families::{family_of, headless, Family};
use super::{HostingNetworks, Published};
use crate::identity::{Category, RobotsVerdict, Signal, Signals, Traits, Verification};
use http::header::{ACCEPT_LANGUAGE, USER_AGENT};
use http::HeaderMap;

/// What the signals are judged against.
pub(super) struct Lists<'l> {
    /// Browsers' published fingerprints.
    pub(super) published: &'l Published,
    /// Hosting and cloud networks.
    pub(super) hosting: &'l HostingNetworks,
}

/// The signals a request with `headers`, from the sender `traits` describes, shows.
pub(super) fn shown(traits: &Traits, headers: &HeaderMap, lists: &Lists<'_>) -> Signals {
    let mut signals = crawler(traits);
    let hosted = traits.asn.is_some_and(|asn| lists.hosting.contains(asn));
    let verified = traits.bot.as_ref().is_some_and(|claim| claim.verified());
    if hosted && !verified {
        signals = signals.with(Signal::HostingNetwork);
    }
    let Some(user_agent) = headers.get(USER_AGENT) else {
        return signals.with(Signal::NoUserAgent);
    };
    let user_agent = user_agent.as_bytes();
    let hints = headers.get("sec-ch-ua").map(|v| v.as_bytes());
    if headless(user_agent, hints) {
        signals = signals.with(Signal::Headless);
    }
    // A crawler's claim speaks for itself (verified or not): its User-Agent may well say
    // `Chrome/` without its TLS being Chrome's.
    let crawler_claim = traits
        .bot
        .as_ref()
        .is_some_and(|claim| claim.claimed != Category::Automation);
    match family_of(user_agent) {
        Some(family) if !crawler_claim => signals.union(browser(family, traits, headers, lists)),
        _ => signals,
    }
}

/// `spoofed` for a crawler claim that failed its check, `unverified-crawler` for one whose
/// check was due and did not finish; `robots-disallowed` for a crawler asking for a path the
/// site's robots.txt keeps from it.
fn crawler(traits: &Traits) -> Signals {
    let claimed = match traits.bot.as_ref().map(|claim| claim.verification) {
        Some(Verification::Failed) => Signals::default().with(Signal::Spoofed),
        Some(Verification::Unfinished) => Signals::default().with(Signal::UnverifiedCrawler),
        _ => Signals::default(),
    };
    match traits.robots.as_ref().map(|fact| fact.verdict) {
        Some(RobotsVerdict::Disallowed) => claimed.with(Signal::RobotsDisallowed),
        _ => claimed,
    }
}

/// What a request whose User-Agent claims `family` shows against what that family sends.
fn browser(family: Family, traits: &Traits, headers: &HeaderMap, lists: &Lists<'_>) -> Signals {
    let mut signals = Signals::default();
    if let Some(ja4) = &traits.ja4 {
        if !lists.published.ja4_fits(family, ja4) {
            signals = signals.with(Signal::UaTlsMismatch);
        }
    }
    // A connection whose first frames Floodgate declined to read (more of them than any
    // browser sends) is not let off: the mismatch is assumed.
    let h2_mismatch = match &traits.h2fp {
        Some(h2fp) => !lists.published.h2_fits(family, h2fp),
        None => traits.h2fp_declined.is_some(),
    };
    if h2_mismatch {
        signals = signals.with(Signal::UaH2Mismatch);
    }
    if missing_headers(family, headers, traits.ja4.is_some()) {
        signals = signals.with(Signal::MissingBrowserHeaders);
    }
    signals
}

/// Whether a browser of `family` would have sent more: `Accept-Language` always;
/// over TLS (`secure`: browsers send these to secure origins only) `Sec-Fetch-Mode` from
/// Chromium and Firefox, and `sec-ch-ua` from Chromium. (Safari sends `Sec-Fetch-*` only
/// since 16.4: not asked.)
fn missing_headers(family: Family, headers: &HeaderMap, secure: bool) -> bool {
    let lacks = |name: &str| !headers.contains_key(name);
    let language = !headers.contains_key(ACCEPT_LANGUAGE);
    let fetch = secure && family != Family::Safari && lacks("sec-fetch-mode");
    let hints = secure && family == Family::Chromium && lacks("sec-ch-ua");
    language || fetch || hints
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::BotClaim;

    const CHROME: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
    const CHROME_JA4: &str = "t13d1517h2_8daaf6152771_02713d6af862";
    const CURL_JA4: &str = "t13d3112h2_e8f1e7e78f70_0123456789ab";
    const CHROME_H2: &str = "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p";
    const PYTHON_H2: &str = "4:65535;5:16384|00|0|m,s,a,p";

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| (http::HeaderName::from_static(k), v.parse().unwrap()))
            .collect()
    }

    fn chrome_headers() -> HeaderMap {
        headers(&[
            ("user-agent", CHROME),
            ("accept-language", "en-US"),
            ("sec-fetch-mode", "navigate"),
            ("sec-ch-ua", "\"Chromium\";v=\"156\""),
        ])
    }

    fn shown_with(traits: &Traits, headers: &HeaderMap) -> Signals {
        let published = Published::shipped();
        let hosting = HostingNetworks::shipped_and(&[]);
        let lists = Lists {
            published: &published,
            hosting: &hosting,
        };
        shown(traits, headers, &lists)
    }

    fn tls(ja4: &str, h2: Option<&str>) -> Traits {
        Traits {
            ja4: Some(ja4.parse().unwrap()),
            h2fp: h2.map(|h| h.parse().unwrap()),
            ..Traits::default()
        }
    }

    #[test]
    fn chrome_as_chrome_shows_nothing() {
        let signals = shown_with(&tls(CHROME_JA4, Some(CHROME_H2)), &chrome_headers());
        assert!(signals.is_empty(), "{signals}");
    }

    #[test]
    fn chrome_user_agent_over_another_stack_shows_the_mismatches() {
        let signals = shown_with(&tls(CURL_JA4, Some(PYTHON_H2)), &chrome_headers());
        assert!(signals.contains(Signal::UaTlsMismatch), "{signals}");
        assert!(signals.contains(Signal::UaH2Mismatch), "{signals}");
        let bare = headers(&[("user-agent", CHROME)]);
        let signals = shown_with(&tls(CHROME_JA4, None), &bare);
        assert_eq!(signals.to_string(), "missing-browser-headers");
    }

    #[test]
    fn a_declined_fingerprint_is_scored_as_a_mismatch_for_a_browser_only() {
        let declined = Traits {
            h2fp_declined: Some(crate::identity::H2fpDeclined::Frames),
            ..tls(CHROME_JA4, None)
        };
        let signals = shown_with(&declined, &chrome_headers());
        assert_eq!(signals.to_string(), "ua-h2-mismatch");
        let curl = headers(&[("user-agent", "curl/8.5.0")]);
        assert!(
            shown_with(&declined, &curl).is_empty(),
            "as a read one would"
        );
    }

    #[test]
    fn without_tls_only_accept_language_is_asked() {
        let plain = headers(&[("user-agent", CHROME), ("accept-language", "nl")]);
        assert!(shown_with(&Traits::default(), &plain).is_empty());
    }

    #[test]
    fn curls_own_user_agent_shows_no_mismatch_and_none_shows_no_user_agent() {
        let curl = headers(&[("user-agent", "curl/8.5.0")]);
        assert!(shown_with(&tls(CURL_JA4, None), &curl).is_empty());
        let signals = shown_with(&tls(CURL_JA4, None), &HeaderMap::new());
        assert_eq!(signals.to_string(), "no-user-agent");
    }

    #[test]
    fn hosting_networks_and_crawler_claims_show() {
        let claim = |verification| BotClaim {
            name: "Googlebot".into(),
            operator: "Google".into(),
            claimed: Category::SearchEngine,
            verification,
        };
        let from = |verification| Traits {
            asn: Some(16509),
            bot: Some(claim(verification)),
            ..Traits::default()
        };
        let googlebot = headers(&[("user-agent", "Googlebot/2.1 Chrome/156.0 Safari")]);
        let failed = shown_with(&from(Verification::Failed), &googlebot);
        assert_eq!(failed.to_string(), "hosting-network,spoofed");
        let slow = shown_with(&from(Verification::Unfinished), &googlebot);
        assert_eq!(slow.to_string(), "hosting-network,unverified-crawler");
        let proven = shown_with(
            &from(Verification::Verified(crate::identity::Proof::Ranges)),
            &googlebot,
        );
        assert!(proven.is_empty(), "{proven}");
    }

    #[test]
    fn thousands_of_headers_and_a_long_user_agent_are_read_in_bounded_time() {
        let long = format!("{CHROME}{}", "x".repeat(64 << 10));
        let mut many = headers(&[("user-agent", &long)]);
        for i in 0..5000 {
            let name = http::HeaderName::from_bytes(format!("x-h{i}").as_bytes()).unwrap();
            many.insert(name, "v".parse().unwrap());
        }
        let signals = shown_with(&tls(CURL_JA4, None), &many);
        assert!(signals.contains(Signal::UaTlsMismatch), "{signals}");
    }
}
