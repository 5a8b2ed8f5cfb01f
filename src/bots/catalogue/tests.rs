use super::*;
use crate::identity::Category;

/// Real browsers' User-Agents (desktop and mobile, current and a few years old, in-app
/// browsers): none of them may claim a crawler.
const BROWSERS: &[&str] = &[
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.7; rv:132.0) Gecko/20100101 Firefox/132.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (iPad; CPU OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/128.0.0.0 YaBrowser/24.10.0.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Vivaldi/7.0.3495.18",
    "Mozilla/5.0 (Linux; Android 13; KFTRWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/130.3.5 like Chrome/130.0.6723.102 Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/470.0.0.38.109;FBBV/614553539;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/127.0.6533.103 Mobile Safari/537.36 Instagram 344.0.0.34.101 Android",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) GSA/343.0.695551749 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; rv:11.0) like Gecko",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0 Code/1.95.3",
];

/// User-Agents crawlers send, and the entry each must be named by.
const CRAWLERS: &[(&str, &str)] = &[
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/131.0.6778.69 Safari/537.36", "Googlebot"),
    ("Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot"),
    ("Googlebot-Image/1.0", "Googlebot-Image"),
    ("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 (compatible; AdsBot-Google-Mobile; +http://www.google.com/mobile/adsbot.html)", "AdsBot-Google"),
    ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bingbot"),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", "Applebot"),
    ("DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", "DuckDuckBot"),
    ("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "YandexBot"),
    ("Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", "Baiduspider"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot", "GPTBot"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot", "ChatGPT-User"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", "ClaudeBot"),
    ("CCBot/2.0 (https://commoncrawl.org/faq/)", "CCBot"),
    ("Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)", "Bytespider"),
    ("meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)", "meta-externalagent"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)", "PerplexityBot"),
    ("Mozilla/5.0 (compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", "UptimeRobot"),
    ("Feedly/1.0 (+http://www.feedly.com/fetcher.html; 42 subscribers; like FeedFetcher-Google)", "Feedly"),
    ("curl/8.5.0", "curl"),
    ("Wget/1.21.4", "Wget"),
    ("python-requests/2.32.3", "python-requests"),
    ("Python-urllib/3.12", "python-urllib"),
    ("Python/3.12 aiohttp/3.10.10", "aiohttp"),
    ("Go-http-client/1.1", "Go-http-client"),
    ("okhttp/4.12.0", "okhttp"),
    ("Java/17.0.9", "Java"),
    ("libwww-perl/6.72", "libwww-perl"),
    ("Scrapy/2.11.2 (+https://scrapy.org)", "Scrapy"),
    ("node-fetch/1.0 (+https://github.com/bitinn/node-fetch)", "node-fetch"),
    ("axios/1.7.7", "axios"),
    ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36", "HeadlessChrome"),
];

#[test]
fn the_shipped_catalogue_parses_and_every_entry_names_its_source() {
    let catalogue = Catalogue::builtin();
    assert_eq!(catalogue.updated(), "2026-11-27");
    assert!(catalogue.sources().len() >= 5);
    assert!(catalogue.len() >= 150, "{}", catalogue.len());
    assert!(matches!(catalogue.matcher, Matcher::Set(_)));
    for (name, source) in file::sources_of(BUILTIN) {
        let source = source.unwrap_or_else(|| panic!("`{name}` has no source"));
        assert!(source.starts_with("https://"), "{name}: {source}");
    }
    for crawler in catalogue.crawlers() {
        assert_ne!(crawler.category, Category::Spoofed);
        if let Some(url) = &crawler.ranges_url {
            assert!(url.starts_with("https://"), "{}: {url}", crawler.name);
        }
    }
}

#[test]
fn automation_comes_last() {
    let catalogue = Catalogue::builtin();
    let first = catalogue
        .crawlers()
        .iter()
        .position(|c| c.category == Category::Automation)
        .unwrap();
    assert!(catalogue.crawlers()[first..]
        .iter()
        .all(|c| c.category == Category::Automation));
}

#[test]
fn browsers_claim_no_crawler() {
    let catalogue = Catalogue::builtin();
    for browser in BROWSERS {
        assert_eq!(
            catalogue.classify(browser).map(|(_, c)| &*c.name),
            None,
            "{browser}"
        );
    }
    assert!(catalogue.classify("").is_none());
}

#[test]
fn crawlers_are_named_by_the_first_entry_that_matches() {
    let catalogue = Catalogue::builtin();
    for (user_agent, name) in CRAWLERS {
        let (index, crawler) = catalogue.classify(user_agent).expect(user_agent);
        assert_eq!(&*crawler.name, *name, "{user_agent}");
        assert_eq!(&*catalogue.crawlers()[index].name, *name);
        let earlier = &catalogue.crawlers()[..index];
        assert!(earlier.iter().all(|c| !c.user_agent.is_match(user_agent)));
    }
}

#[test]
fn googles_entries_verify_by_its_own_domains_only() {
    // `googleusercontent.com` also names Google Cloud customers' machines: only the App
    // Engine subdomain Google's fetchers use may verify a claim.
    for crawler in Catalogue::builtin().crawlers() {
        for suffix in &crawler.rdns {
            assert_ne!(&**suffix, "googleusercontent.com", "{}", crawler.name);
        }
    }
}

fn config_entry(name: &str, category: Category, user_agent: &str) -> Crawler {
    Crawler::new(name, Some("Ops"), category, user_agent, None, &[]).unwrap()
}

#[test]
fn config_entries_replace_same_named_ones_in_place_and_new_ones_come_first() {
    let builtin = Catalogue::builtin();
    let gptbot_index = builtin.classify("GPTBot/1.2").unwrap().0;
    let catalogue = builtin.with_entries(vec![
        config_entry("gptbot", Category::Monitor, "GPTBot"),
        config_entry("OurChecker", Category::Monitor, "curl/8"),
    ]);
    // New: first, so it wins over the built-in `curl`.
    let (index, ours) = catalogue.classify("curl/8.5.0").unwrap();
    assert_eq!((index, &*ours.name), (0, "OurChecker"));
    // Replaced: in its old place (one further down, after the new entry).
    let (index, gptbot) = catalogue.classify("GPTBot/1.2").unwrap();
    assert_eq!(index, gptbot_index + 1);
    assert_eq!(
        (gptbot.category, &*gptbot.operator),
        (Category::Monitor, "Ops")
    );
    assert_eq!(catalogue.len(), Catalogue::builtin().len() + 1);
    assert_eq!(catalogue.updated(), "2026-11-27");
}

fn parse_error(text: &str) -> String {
    file::parse(Path::new("own.toml"), text)
        .unwrap_err()
        .to_string()
}

#[test]
fn a_bad_catalogue_file_is_answered_with_file_line_and_column() {
    let head = "updated = \"2026-01-01\"\n[[crawler]]\nname = \"X\"\ncategory = \"monitor\"\n";
    let bad_regex = parse_error(&format!("{head}user_agent = \"X(\"\n"));
    assert!(
        bad_regex.starts_with("own.toml:5:14: `user_agent` is not a valid regex"),
        "{bad_regex}"
    );
    let bad_category = parse_error(
        "updated = \"x\"\n[[crawler]]\nname = \"X\"\ncategory = \"robot\"\nuser_agent = \"X\"\n",
    );
    assert!(
        bad_category.starts_with("own.toml:4:12: `robot` is not a bot category"),
        "{bad_category}"
    );
    let bad_suffix = parse_error(&format!("{head}user_agent = \"X\"\nrdns = [\"a b\"]\n"));
    assert!(
        bad_suffix.starts_with("own.toml:6:8: `rdns` suffix `a b`"),
        "{bad_suffix}"
    );
    let unknown_key = parse_error(&format!("{head}user_agent = \"X\"\nranges = \"x\"\n"));
    assert!(
        unknown_key.starts_with("own.toml:6:1: unknown field `ranges`"),
        "{unknown_key}"
    );
    let bad_url = parse_error(&format!(
        "{head}user_agent = \"X\"\nranges_url = \"file:///etc\"\n"
    ));
    assert!(
        bad_url.starts_with("own.toml:6:14: `ranges_url` must be an http(s) URL"),
        "{bad_url}"
    );
    let twice = parse_error(&format!("{head}user_agent = \"X\"\n[[crawler]]\nname = \"x\"\ncategory = \"monitor\"\nuser_agent = \"Y\"\n"));
    assert!(
        twice.starts_with("own.toml:7:8: crawler `x` is named like `X`"),
        "{twice}"
    );
}

#[test]
fn an_own_catalogue_replaces_the_shipped_list() {
    let dir = std::env::temp_dir().join(format!("floodgate-catalogue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("own.toml");
    let text = "updated = \"2026-01-01\"\nsources = [\"mine\"]\n[[crawler]]\nname = \"Ours\"\noperator = \"Us\"\ncategory = \"monitor\"\nuser_agent = \"OursBot\"\nranges_url = \"http://127.0.0.1:1/ours.json\"\n";
    std::fs::write(&path, text).unwrap();
    let catalogue = Catalogue::load(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!((catalogue.len(), catalogue.updated()), (1, "2026-01-01"));
    assert_eq!(catalogue.sources(), ["mine"]);
    let (_, ours) = catalogue.classify("x OursBot/1").unwrap();
    assert_eq!(
        ours.ranges_url.as_deref(),
        Some("http://127.0.0.1:1/ours.json")
    );
    assert!(catalogue.classify("GPTBot").is_none());
    let missing = Catalogue::load(&dir.join("none.toml")).unwrap_err();
    assert!(missing.to_string().contains("none.toml"), "{missing}");
}

#[test]
fn the_book_lists_every_shipped_crawler() {
    let page = include_str!("../../../docs/src/crawlers.md");
    for crawler in Catalogue::builtin().crawlers() {
        let row = format!(
            "| {} | {} | {} |",
            crawler.name, crawler.operator, crawler.category
        );
        assert!(
            page.contains(&row),
            "docs/src/crawlers.md lacks the row `{row}`"
        );
    }
}
