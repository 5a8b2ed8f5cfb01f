//! Conditions on what is known of a request's sender: its network (`match.asn`), country
//! (`match.country`), the crawler category it shows (`match.bot`), whether its claim was
//! verified (`match.verified`), its TLS stack (`match.ja4`), its HTTP/2 stack (`match.h2fp`)
//! and its bot score (`match.min_score`, `match.max_score`; a request not scored counts as 0)
//! and the score's signals (`match.signals`).

use crate::identity::{Category, Country, H2Fp, Ja4, RobotsVerdict, Signals, Traits};
use std::fmt;

/// A policy's conditions on the sender; every one given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SenderConditions {
    /// `match.asn`: the client address is announced by one of these networks.
    pub asn: Vec<u32>,
    /// `match.country`: the client address is in one of these countries.
    pub country: Vec<Country>,
    /// `match.bot`: the request's crawler category (its claim's, or `spoofed`) is one of these.
    pub bot: Vec<Category>,
    /// `match.verified`: `true` holds for a crawler whose claim was verified, `false` for every
    /// other request (no claim, an unchecked, unfinished or failed one).
    pub verified: Option<bool>,
    /// `match.ja4`: the client's TLS ClientHello has one of these JA4 fingerprints.
    pub ja4: Vec<Ja4>,
    /// `match.h2fp`: the client's HTTP/2 connection has one of these fingerprints.
    pub h2fp: Vec<H2Fp>,
    /// `match.min_score`: the request's bot score is at least this.
    pub min_score: Option<u8>,
    /// `match.max_score`: the request's bot score is at most this.
    pub max_score: Option<u8>,
    /// `match.signals`: the request's bot score shows one of these signals.
    pub signals: Signals,
    /// `match.robots`: the site's robots.txt gave the crawler's request this verdict (a
    /// request that is not a crawler's, or with no robots.txt to judge by, has none).
    pub robots: Option<RobotsVerdict>,
}

impl SenderConditions {
    /// Whether the sender described by `traits` shows everything asked. An unknown ASN,
    /// country or category never matches a list.
    pub fn hold(&self, traits: &Traits) -> bool {
        listed(&self.asn, traits.asn.as_ref())
            && listed(&self.country, traits.country.as_ref())
            && listed(
                &self.bot,
                traits.bot.as_ref().map(|claim| claim.category()).as_ref(),
            )
            && self
                .verified
                .is_none_or(|wanted| traits.bot.as_ref().is_some_and(|c| c.verified()) == wanted)
            && listed(&self.ja4, traits.ja4.as_ref())
            && listed(&self.h2fp, traits.h2fp.as_ref())
            && self.score_holds(traits)
            && self.signals_hold(traits)
            && self
                .robots
                .is_none_or(|wanted| traits.robots.as_ref().is_some_and(|r| r.verdict == wanted))
    }

    /// Whether the request's score is within `min_score` and `max_score`.
    fn score_holds(&self, traits: &Traits) -> bool {
        let score = traits.score.map_or(0, |s| s.value);
        self.min_score.is_none_or(|min| score >= min)
            && self.max_score.is_none_or(|max| score <= max)
    }

    /// Whether the request's score shows one of `match.signals` (when given; a request not
    /// scored shows none).
    fn signals_hold(&self, traits: &Traits) -> bool {
        self.signals.is_empty()
            || traits
                .score
                .is_some_and(|score| self.signals.iter().any(|s| score.signals.contains(s)))
    }

    /// Whether these conditions read the bot score.
    pub fn reads_score(&self) -> bool {
        self.min_score.is_some() || self.max_score.is_some() || !self.signals.is_empty()
    }

    /// Whether no condition is given.
    pub fn is_empty(&self) -> bool {
        self.asn.is_empty()
            && self.country.is_empty()
            && self.bot.is_empty()
            && self.verified.is_none()
            && self.ja4.is_empty()
            && self.h2fp.is_empty()
            && !self.reads_score()
            && self.robots.is_none()
    }
}

/// Whether `list` is empty (no condition) or holds `value`.
fn listed<T: PartialEq>(list: &[T], value: Option<&T>) -> bool {
    list.is_empty() || value.is_some_and(|v| list.contains(v))
}

impl fmt::Display for SenderConditions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words = |items: Vec<String>| items.join(", ");
        if !self.asn.is_empty() {
            write!(
                f,
                " asn {}",
                words(self.asn.iter().map(|a| format!("AS{a}")).collect())
            )?;
        }
        if !self.country.is_empty() {
            write!(
                f,
                " country {}",
                words(self.country.iter().map(Country::to_string).collect())
            )?;
        }
        if !self.bot.is_empty() {
            write!(
                f,
                " bot {}",
                words(self.bot.iter().map(Category::to_string).collect())
            )?;
        }
        if !self.ja4.is_empty() {
            write!(
                f,
                " ja4 {}",
                words(self.ja4.iter().map(Ja4::to_string).collect())
            )?;
        }
        if !self.h2fp.is_empty() {
            write!(
                f,
                " h2fp {}",
                words(self.h2fp.iter().map(H2Fp::to_string).collect())
            )?;
        }
        if let Some(min) = self.min_score {
            write!(f, " score >= {min}")?;
        }
        if let Some(max) = self.max_score {
            write!(f, " score <= {max}")?;
        }
        if !self.signals.is_empty() {
            write!(f, " signals {}", self.signals)?;
        }
        if let Some(verdict) = self.robots {
            write!(f, " robots {verdict}")?;
        }
        match self.verified {
            Some(true) => f.write_str(" verified"),
            Some(false) => f.write_str(" not verified"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::{BotClaim, Proof, Verification};

    fn crawler(category: Category, verification: Verification) -> Traits {
        Traits {
            bot: Some(BotClaim {
                name: "Googlebot".into(),
                operator: "Google".into(),
                claimed: category,
                verification,
            }),
            ..Traits::default()
        }
    }

    #[test]
    fn lists_hold_for_a_listed_value_and_never_for_an_unknown_one() {
        let dutch_network = SenderConditions {
            asn: vec![64500, 13335],
            country: vec!["NL".parse().unwrap()],
            ..SenderConditions::default()
        };
        let traits = |asn, country: Option<&str>| Traits {
            asn,
            country: country.map(|c| c.parse().unwrap()),
            ..Traits::default()
        };
        assert!(dutch_network.hold(&traits(Some(64500), Some("nl"))));
        assert!(!dutch_network.hold(&traits(Some(64501), Some("NL"))));
        assert!(
            !dutch_network.hold(&traits(None, Some("NL"))),
            "no ASN known"
        );
        assert!(
            !dutch_network.hold(&traits(Some(13335), None)),
            "no country known"
        );
        assert!(SenderConditions::default().hold(&Traits::default()));
    }

    #[test]
    fn an_h2fp_list_holds_for_a_listed_fingerprint_and_never_without_one() {
        let chrome: H2Fp = "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p"
            .parse()
            .unwrap();
        let curl: H2Fp = "3:100;4:33554432;2:0|33488897|0|m,p,s,a".parse().unwrap();
        let chrome_stack = SenderConditions {
            h2fp: vec![chrome.clone()],
            ..SenderConditions::default()
        };
        let on = |h2fp: Option<&H2Fp>| Traits {
            h2fp: h2fp.cloned(),
            ..Traits::default()
        };
        assert!(chrome_stack.hold(&on(Some(&chrome))));
        assert!(!chrome_stack.hold(&on(Some(&curl))));
        assert!(!chrome_stack.hold(&on(None)), "HTTP/1: no fingerprint");
        assert!(!chrome_stack.is_empty());
        assert_eq!(chrome_stack.to_string(), format!(" h2fp {chrome}"));
    }

    #[test]
    fn a_failed_claim_is_spoofed_and_verified_false_holds_for_everything_unverified() {
        let spoofed = SenderConditions {
            bot: vec![Category::Spoofed],
            ..SenderConditions::default()
        };
        let verified_search = SenderConditions {
            bot: vec![Category::SearchEngine],
            verified: Some(true),
            ..SenderConditions::default()
        };
        let unverified = SenderConditions {
            verified: Some(false),
            ..SenderConditions::default()
        };
        let failed = crawler(Category::SearchEngine, Verification::Failed);
        let proven = crawler(
            Category::SearchEngine,
            Verification::Verified(Proof::Ranges),
        );
        let slow = crawler(Category::SearchEngine, Verification::Unfinished);
        assert!(spoofed.hold(&failed) && !spoofed.hold(&proven) && !spoofed.hold(&slow));
        assert!(verified_search.hold(&proven) && !verified_search.hold(&slow));
        assert!(!verified_search.hold(&failed));
        assert!(unverified.hold(&Traits::default()) && unverified.hold(&slow));
        assert!(unverified.hold(&failed) && !unverified.hold(&proven));
    }

    #[test]
    fn score_bounds_hold_inclusively_and_an_unscored_request_counts_as_zero() {
        let scored = |value| Traits {
            score: Some(crate::identity::Score {
                value,
                signals: Default::default(),
            }),
            ..Traits::default()
        };
        let high = SenderConditions {
            min_score: Some(50),
            ..SenderConditions::default()
        };
        let low = SenderConditions {
            max_score: Some(20),
            ..SenderConditions::default()
        };
        assert!(high.hold(&scored(50)) && high.hold(&scored(100)) && !high.hold(&scored(49)));
        assert!(low.hold(&scored(20)) && !low.hold(&scored(21)));
        assert!(!high.hold(&Traits::default()) && low.hold(&Traits::default()));
        assert!(high.reads_score() && !high.is_empty());
    }

    #[test]
    fn signals_hold_when_the_score_shows_one_of_them_and_never_unscored() {
        use crate::identity::{Score, Signal};
        let fake_chrome = SenderConditions {
            signals: Signals::default()
                .with(Signal::UaTlsMismatch)
                .with(Signal::UaH2Mismatch),
            ..SenderConditions::default()
        };
        let showing = |signals: Signals| Traits {
            score: Some(Score { value: 0, signals }),
            ..Traits::default()
        };
        let tls = Signals::default().with(Signal::UaTlsMismatch);
        let both = tls.with(Signal::MissingBrowserHeaders);
        let headers = Signals::default().with(Signal::MissingBrowserHeaders);
        assert!(fake_chrome.hold(&showing(tls)) && fake_chrome.hold(&showing(both)));
        assert!(!fake_chrome.hold(&showing(headers)));
        assert!(!fake_chrome.hold(&Traits::default()), "not scored");
        assert!(fake_chrome.reads_score() && !fake_chrome.is_empty());
        assert_eq!(
            fake_chrome.to_string(),
            " signals ua-tls-mismatch,ua-h2-mismatch"
        );
    }
}
