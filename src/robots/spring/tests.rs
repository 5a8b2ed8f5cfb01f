//! Who the trap catches among callers that read robots.txt: a crawler's User-Agent, a
//! crawler naming itself in a browser-like one; and who it spares: a browser, a headless
//! browser (issue 84's browser test: Chromium's own `HeadlessChrome` User-Agent, an
//! `automation` claim, was banned for the `<img>` it was made to fetch), a search engine
//! verified or still being checked, an address that never read the file.

use super::*;
use crate::identity::{IdentityKey, Proof};
use crate::robots::trap::TrapSettings;

const KEY: IdentityKey = IdentityKey::from_bytes([9; 32]);
const HOUR: Duration = Duration::from_secs(3600);
const T0: u64 = 1_700_000_000_000;

const HEADLESS: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                        HeadlessChrome/131.0.0.0 Safari/537.36";
const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";
/// A crawler naming itself in a Chrome-like User-Agent.
const CHROMY_GPTBOT: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 \
                             (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36; compatible; \
                             GPTBot/1.2";

fn claim(name: &str, claimed: Category, verification: Verification) -> BotClaim {
    BotClaim {
        name: name.into(),
        operator: name.into(),
        claimed,
        verification,
    }
}

/// The trap sprung at `T0` on a caller of 192.0.2.1 (which read robots.txt) or `ip`, sending
/// `user_agent` and claiming `bot`.
async fn sprung(ip: &str, user_agent: &str, bot: Option<&BotClaim>) -> Sprung {
    let traps = Traps::in_memory(KEY, TrapSettings::default(), None);
    let reader: IpAddr = "192.0.2.1".parse().unwrap();
    traps.read_robots(reader, T0 - 1000).await.unwrap();
    let visitor = Visitor {
        ip: ip.parse().ok(),
        user_agent: Some(user_agent.as_bytes()),
        bot,
        proven: None,
    };
    spring(&traps, visitor, HOUR, HOUR, T0).await
}

fn caught() -> Sprung {
    Sprung::Caught(Trapped {
        until_ms: T0 + 3_600_000,
    })
}

#[tokio::test]
async fn a_crawler_that_read_the_file_is_caught() {
    let reader = "192.0.2.1";
    let bad = "Mozilla/5.0 (compatible; BadBot/1.0)";
    assert_eq!(sprung(reader, bad, None).await, caught());
    let gptbot = claim("GPTBot", Category::AiCrawler, Verification::Failed);
    assert_eq!(
        sprung(reader, CHROMY_GPTBOT, Some(&gptbot)).await,
        caught(),
        "a crawler's claim outweighs a browser's look"
    );
    let scrapy = claim("Scrapy", Category::Automation, Verification::Unchecked);
    let agent = "Scrapy/2.11 (+https://scrapy.org)";
    assert_eq!(sprung(reader, agent, Some(&scrapy)).await, caught());
}

#[tokio::test]
async fn browsers_headless_ones_too_search_engines_and_non_readers_are_spared() {
    let reader = "192.0.2.1";
    let spared = |why| Sprung::Spared(why);
    assert_eq!(sprung(reader, FIREFOX, None).await, spared(Spared::Browser));
    let headless = claim(
        "HeadlessChrome",
        Category::Automation,
        Verification::Unchecked,
    );
    assert_eq!(
        sprung(reader, HEADLESS, Some(&headless)).await,
        spared(Spared::Browser)
    );
    let googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    for verification in [
        Verification::Verified(Proof::Ranges),
        Verification::Unfinished,
    ] {
        let google = claim("Googlebot", Category::SearchEngine, verification);
        let why = sprung(reader, googlebot, Some(&google)).await;
        assert_eq!(why, spared(Spared::SearchEngine), "{verification:?}");
    }
    let spoofed = claim("Googlebot", Category::SearchEngine, Verification::Failed);
    assert_eq!(sprung(reader, googlebot, Some(&spoofed)).await, caught());
    let bad = "Mozilla/5.0 (compatible; BadBot/1.0)";
    assert_eq!(
        sprung("192.0.2.9", bad, None).await,
        spared(Spared::NeverRead)
    );
}
