//! What is known of a request's sender beyond the values it sends: its network (ASN), its
//! country, and which crawler it claims to be and whether the claim held. The `bots` room
//! works these out before the gate decides; conditions (`match.asn`, `match.bot`, …) and the
//! identity sources `asn`, `country` and `bot` read them.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// What is known of a request's sender; nothing by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Traits {
    /// The autonomous system announcing the client address (`[geo] asn_db`).
    pub asn: Option<u32>,
    /// The client address's country (`[geo] country_db`).
    pub country: Option<Country>,
    /// The crawler the User-Agent claims, if it names one the catalogue knows, or the signed
    /// agent a `Signature-Agent` names (a signature outranks a User-Agent).
    pub bot: Option<BotClaim>,
    /// The JA4 fingerprint of the client's TLS ClientHello (Floodgate's own TLS listener, or a
    /// trusted proxy's header).
    pub ja4: Option<Ja4>,
    /// The HTTP/2 fingerprint of the connection the request came on (Akamai's format), read
    /// by Floodgate's own listeners from the frames the client sent first.
    pub h2fp: Option<super::H2Fp>,
    /// Why no fingerprint was read from the HTTP/2 connection the request came on, when
    /// Floodgate was asked to read one and declined (its caps reached first).
    pub h2fp_declined: Option<super::H2fpDeclined>,
    /// The bot score, worked out only when something asks for it (`match.min_score`,
    /// `match.max_score`, `upstream.score_header`, `upstream.signals_header`).
    pub score: Option<super::Score>,
    /// What the site's robots.txt says of the request, when `[robots]` is configured and the
    /// User-Agent names a crawler.
    pub robots: Option<super::RobotsFact>,
}

/// A crawler a request claims to be, and how the claim fared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotClaim {
    /// The crawler's name (`Googlebot`).
    pub name: Arc<str>,
    /// Who runs it (`Google`): the identity source `bot` yields this.
    pub operator: Arc<str>,
    /// The category the catalogue gives the crawler.
    pub claimed: Category,
    /// Whether the claim was checked against what the crawler publishes.
    pub verification: Verification,
}

impl BotClaim {
    /// The request's category: the claimed one, or `spoofed` when the claim failed.
    pub fn category(&self) -> Category {
        match self.verification {
            Verification::Failed => Category::Spoofed,
            _ => self.claimed,
        }
    }

    /// Whether the claim was verified.
    pub fn verified(&self) -> bool {
        matches!(self.verification, Verification::Verified(_))
    }

    /// Whether the claim may speak for the crawler's operator (the identity source `bot`):
    /// verified, or of a crawler that publishes no way to check. A claim that could have been
    /// checked and was not verified (failed, or not finished) is anyone's to make.
    pub fn names_operator(&self) -> bool {
        match self.verification {
            Verification::Verified(_) => true,
            Verification::Unchecked => self.claimed != Category::SignedAgent,
            Verification::Unfinished | Verification::Failed => false,
        }
    }
}

/// How a crawler's claim fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
    /// The address is the crawler's, shown by the given proof.
    Verified(Proof),
    /// The crawler publishes no way to check: the claim is all there is.
    Unchecked,
    /// A check was due but could not be made (no resolver, the crawler's published ranges not
    /// loaded, no client address) or finish in time (DNS slow or away): not verified, and
    /// not `spoofed` either.
    Unfinished,
    /// The address is in none of the crawler's ranges and its reverse DNS does not confirm.
    Failed,
}

/// What showed a crawler's address to be its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// The address is in the crawler's published ranges.
    Ranges,
    /// The address's reverse DNS name ends in one of the crawler's suffixes and resolves
    /// forward to the address.
    ReverseDns,
    /// The request carries an HTTP Message Signature (Web Bot Auth) under a key the agent
    /// publishes (or the config names).
    Signature,
}

/// Which kind of bot a crawler is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// Search engines' crawlers (Googlebot, Bingbot, …).
    SearchEngine,
    /// Crawlers gathering training data for AI models (GPTBot, ClaudeBot, CCBot, …).
    AiCrawler,
    /// Crawlers indexing for AI search answers (OAI-SearchBot, PerplexityBot, …).
    AiSearch,
    /// Fetchers an AI assistant sends on a user's request (ChatGPT-User, Claude-User, …).
    AiAssistant,
    /// Uptime and performance monitors.
    Monitor,
    /// Feed readers and aggregators.
    FeedReader,
    /// HTTP libraries, command-line clients and headless browsers' default user agents.
    Automation,
    /// An agent that signs its requests (Web Bot Auth): named by its key directory's host.
    SignedAgent,
    /// A crawler's user agent from an address that is not the crawler's.
    Spoofed,
}

impl Category {
    /// Every category.
    pub const ALL: [Category; 9] = [
        Self::SearchEngine,
        Self::AiCrawler,
        Self::AiSearch,
        Self::AiAssistant,
        Self::Monitor,
        Self::FeedReader,
        Self::Automation,
        Self::SignedAgent,
        Self::Spoofed,
    ];

    /// The word in config files, logs and metric labels.
    pub fn word(self) -> &'static str {
        match self {
            Self::SearchEngine => "search-engine",
            Self::AiCrawler => "ai-crawler",
            Self::AiSearch => "ai-search",
            Self::AiAssistant => "ai-assistant",
            Self::Monitor => "monitor",
            Self::FeedReader => "feed-reader",
            Self::Automation => "automation",
            Self::SignedAgent => "signed-agent",
            Self::Spoofed => "spoofed",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// A word that names no category.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a bot category (search-engine, ai-crawler, ai-search, ai-assistant, monitor, feed-reader, automation, signed-agent, spoofed)")]
pub struct UnknownCategory(pub String);

impl FromStr for Category {
    type Err = UnknownCategory;

    fn from_str(word: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|c| c.word() == word)
            .ok_or_else(|| UnknownCategory(word.to_owned()))
    }
}

/// A JA4 TLS client fingerprint (`t13d1516h2_8daaf6152771_02713d6af862`): its 36 ASCII
/// characters, checked when made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ja4([u8; 36]);

/// Text that is not a JA4 fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a JA4 fingerprint (like \"t13d1516h2_8daaf6152771_02713d6af862\")")]
pub struct BadJa4(pub String);

impl Ja4 {
    /// The fingerprint as text.
    pub fn as_str(&self) -> &str {
        // ASCII only (checked when made).
        std::str::from_utf8(&self.0).unwrap_or("")
    }
}

impl FromStr for Ja4 {
    type Err = BadJa4;

    /// `JA4_a` (10 characters: protocol `t`/`q`/`d`, version, `d`/`i`, two counts, ALPN),
    /// then `_`, 12 hex digits, `_`, 12 hex digits; letters read in lower case.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || BadJa4(text.chars().take(64).collect());
        let bytes: [u8; 36] = text.as_bytes().try_into().map_err(|_| bad())?;
        let lower = bytes.map(|b| b.to_ascii_lowercase());
        let (a, rest) = lower.split_at(10);
        let hex = |part: &[u8]| part.iter().all(u8::is_ascii_hexdigit);
        let shape = matches!(a[0], b't' | b'q' | b'd')
            && matches!(a[3], b'd' | b'i')
            && a[4..8].iter().all(u8::is_ascii_digit)
            && a.iter().all(u8::is_ascii_alphanumeric)
            && rest[0] == b'_'
            && rest[13] == b'_'
            && hex(&rest[1..13])
            && hex(&rest[14..]);
        match shape {
            true => Ok(Self(lower)),
            false => Err(bad()),
        }
    }
}

impl fmt::Display for Ja4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An ISO 3166-1 alpha-2 country code, upper case (`NL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Country([u8; 2]);

impl Country {
    /// The code as text.
    pub fn as_str(&self) -> &str {
        // Both bytes are ASCII letters (checked when made).
        std::str::from_utf8(&self.0).unwrap_or("??")
    }
}

/// Text that is not a two-letter country code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a two-letter country code (ISO 3166-1 alpha-2, like \"NL\")")]
pub struct BadCountry(pub String);

impl FromStr for Country {
    type Err = BadCountry;

    /// Two ASCII letters, either case.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.as_bytes() {
            [a, b] if a.is_ascii_alphabetic() && b.is_ascii_alphabetic() => {
                Ok(Self([a.to_ascii_uppercase(), b.to_ascii_uppercase()]))
            }
            _ => Err(BadCountry(text.to_owned())),
        }
    }
}

impl fmt::Display for Country {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_read_back_their_words() {
        for category in Category::ALL {
            assert_eq!(category.word().parse(), Ok(category));
        }
        assert!("crawler".parse::<Category>().is_err());
    }

    #[test]
    fn ja4_fingerprints_are_read_in_lower_case_and_checked() {
        let text = "t13d1516h2_8daaf6152771_02713d6af862";
        assert_eq!(text.parse::<Ja4>().unwrap().as_str(), text);
        let upper = "T13D1516H2_8DAAF6152771_02713D6AF862";
        assert_eq!(upper.parse::<Ja4>().unwrap().as_str(), text);
        for bad in [
            "",
            "t13d1516h2",
            "x13d1516h2_8daaf6152771_02713d6af862",
            "t13d1516h2-8daaf6152771_02713d6af862",
            "t13d1516h2_8daaf615277g_02713d6af862",
            "t13x1516h2_8daaf6152771_02713d6af862",
        ] {
            assert!(bad.parse::<Ja4>().is_err(), "{bad}");
        }
    }

    #[test]
    fn country_codes_are_two_letters_upper_cased() {
        assert_eq!("nl".parse::<Country>().unwrap().as_str(), "NL");
        for bad in ["", "N", "NLD", "1A", "É"] {
            assert!(bad.parse::<Country>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_failed_claim_is_spoofed_and_an_unfinished_one_is_not() {
        let claim = |verification| BotClaim {
            name: "Googlebot".into(),
            operator: "Google".into(),
            claimed: Category::SearchEngine,
            verification,
        };
        assert_eq!(claim(Verification::Failed).category(), Category::Spoofed);
        assert_eq!(
            claim(Verification::Unfinished).category(),
            Category::SearchEngine
        );
        assert!(!claim(Verification::Unfinished).verified());
        assert!(claim(Verification::Verified(Proof::ReverseDns)).verified());
    }
}
