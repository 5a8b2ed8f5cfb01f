use super::{RobotsTxt, Verdict, MAX_PARSED, MAX_TOKENS};
use crate::robots::CrawlDelay;
use Verdict::{Allowed, Disallowed};

fn parse(text: &str) -> RobotsTxt {
    RobotsTxt::parse(text.as_bytes())
}

#[test]
fn binary_garbage_has_no_rules() {
    let garbage: Vec<u8> = (0..100_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let file = RobotsTxt::parse(&garbage);
    assert_eq!(file.tokens().len(), 0);
    assert_eq!(file.verdict(None, "/"), Allowed);
    assert_eq!(file.text().len(), String::from_utf8_lossy(&garbage).len());
    assert_eq!(RobotsTxt::default().verdict(Some("x"), "/x"), Allowed);
}

#[test]
fn what_lies_past_the_parsed_limit_is_ignored() {
    let mut text = String::from("User-agent: *\nDisallow: /early\n");
    while text.len() < MAX_PARSED {
        text.push_str("# filler filler filler filler filler filler filler filler\n");
    }
    text.push_str("Disallow: /late\n");
    let file = parse(&text);
    assert_eq!(file.verdict(None, "/early"), Disallowed);
    assert_eq!(file.verdict(None, "/late"), Allowed);
    assert_eq!(file.text(), text, "served whole");
}

#[test]
fn ten_thousand_agents_keep_the_first_thousand_tokens() {
    let mut text = String::new();
    for i in 0..10_000 {
        let name: String = format!("{i:05}")
            .bytes()
            .map(|d| char::from(b'a' + d - b'0'))
            .collect();
        text.push_str(&format!("User-agent: bot-{name}\n"));
    }
    text.push_str("Disallow: /private/\n\nUser-agent: *\nDisallow: /\n");
    let file = parse(&text);
    assert_eq!(file.tokens().len(), MAX_TOKENS);
    assert_eq!(file.tokens().next(), Some("bot-aaaaa"));
    assert_eq!(
        file.groups.len(),
        2,
        "one group, however many agents it names"
    );
    assert_eq!(file.verdict(Some("bot-aaaaa"), "/public"), Allowed);
    assert_eq!(file.verdict(Some("bot-aaaaa"), "/private/x"), Disallowed);
    // Named past the limit: held to `*`.
    assert_eq!(file.verdict(Some("bot-jjjjj"), "/public"), Disallowed);
}

#[test]
fn tokens_are_lowercase_and_looked_up_in_any_case() {
    let file = parse("User-agent: GPTBot/1.0\nUser-agent: Google-Extended\nDisallow: /\n");
    assert_eq!(
        file.tokens().collect::<Vec<_>>(),
        ["gptbot", "google-extended"]
    );
    assert_eq!(file.verdict(Some("GPTBOT"), "/x"), Disallowed);
    assert_eq!(file.verdict(Some("gptbot"), "/x"), Disallowed);
    assert_eq!(file.verdict(None, "/x"), Allowed);
}

#[test]
fn robots_txt_itself_is_always_allowed() {
    let file = parse("User-agent: *\nDisallow: /\n");
    assert_eq!(file.verdict(None, "/robots.txt"), Allowed);
    assert_eq!(file.verdict(None, "/robots.txt?x=1"), Allowed);
    assert_eq!(file.verdict(None, "/%72obots.txt"), Allowed);
    assert_eq!(file.verdict(None, "/robots.txt.bak"), Disallowed);
}

#[test]
fn a_percent_encoded_spelling_does_not_slip_past_a_rule() {
    let file = parse("User-agent: *\nDisallow: /admin\nDisallow: /a%2fb\n");
    assert_eq!(file.verdict(None, "/%61dmin/x"), Disallowed);
    assert_eq!(file.verdict(None, "/a%2Fb"), Disallowed);
    assert_eq!(
        file.verdict(None, "/a/b"),
        Allowed,
        "an encoded slash is not a slash"
    );
}

#[test]
fn crawl_delay_per_group_in_whole_seconds() {
    let file = parse(
        "Crawl-delay: 9\n\
         User-agent: a\nCrawl-delay: 2.5\nCrawl-delay: 7\nDisallow: /x\n\
         User-agent: b\nCrawl-delay: 0\nDisallow:\n\
         User-agent: c\nCRAWL-DELAY: 999999\n\
         User-agent: *\nCrawl-delay: 4\n",
    );
    let secs = |token| file.crawl_delay(token).map(CrawlDelay::secs);
    assert_eq!(secs(Some("a")), Some(3), "the first, rounded up");
    assert_eq!(secs(Some("b")), None, "its own group says none");
    assert_eq!(secs(Some("c")), Some(86_400));
    assert_eq!(secs(Some("other")), Some(4));
    assert_eq!(secs(None), Some(4));
    assert_eq!(
        parse("User-agent: a\nDisallow: /\n").crawl_delay(None),
        None
    );
}

#[test]
fn the_trap_is_written_in_every_group_and_nothing_else_changes() {
    let text = "# hello\nUser-agent: a\nUser-agent: b\nDisallow: /x\n\nSitemap: https://e/s.xml\n\
                User-agent: *\nAllow: /\n";
    let file = parse(text).with_trap("/trap/");
    assert_eq!(
        file.text(),
        "# hello\nUser-agent: a\nUser-agent: b\nDisallow: /trap/\nDisallow: /x\n\n\
         Sitemap: https://e/s.xml\nUser-agent: *\nDisallow: /trap/\nAllow: /\n"
    );
    for token in [Some("a"), Some("b"), Some("other"), None] {
        assert_eq!(file.verdict(token, "/trap/"), Disallowed, "{token:?}");
        assert_eq!(file.verdict(token, "/trap/deeper"), Disallowed, "{token:?}");
        assert_eq!(file.verdict(token, "/tra"), Allowed, "{token:?}");
    }
    assert_eq!(file.verdict(Some("a"), "/x"), Disallowed);
    // The served text says the same as the structure.
    let reparsed = parse(file.text());
    for path in ["/trap/", "/x", "/y"] {
        assert_eq!(
            reparsed.verdict(Some("a"), path),
            file.verdict(Some("a"), path),
            "{path}"
        );
    }
}

#[test]
fn a_file_without_a_star_group_gets_one_holding_the_trap() {
    for (text, served) in [
        ("", "User-agent: *\nDisallow: /t\n"),
        ("User-agent: a\nDisallow: /x", "User-agent: a\nDisallow: /t\nDisallow: /x\n\nUser-agent: *\nDisallow: /t\n"),
        ("User-agent: a\r\nDisallow: /x\r\n", "User-agent: a\r\nDisallow: /t\r\nDisallow: /x\r\n\r\nUser-agent: *\r\nDisallow: /t\r\n"),
        ("User-agent: a", "User-agent: a\nDisallow: /t\n\nUser-agent: *\nDisallow: /t\n"),
    ] {
        let file = parse(text).with_trap("/t");
        assert_eq!(file.text(), served, "{text:?}");
        assert_eq!(file.verdict(None, "/t"), Disallowed);
        assert_eq!(file.verdict(Some("a"), "/t"), Disallowed);
        assert_eq!(file.verdict(None, "/x"), Allowed);
    }
}

#[test]
fn a_trap_added_twice_is_written_twice_where_it_belongs() {
    let file = parse("User-agent: a\nDisallow: /x\n")
        .with_trap("/t")
        .with_trap("/u");
    assert_eq!(
        file.text(),
        "User-agent: a\nDisallow: /u\nDisallow: /t\nDisallow: /x\n\nUser-agent: *\nDisallow: /u\nDisallow: /t\n"
    );
    assert_eq!(file.verdict(None, "/u"), Disallowed);
    assert_eq!(file.verdict(Some("a"), "/t"), Disallowed);
}

#[test]
fn a_trap_that_is_not_a_plain_path_is_not_written() {
    let file = parse("User-agent: *\nDisallow: /x\n");
    for trap in ["", "t", "/a\nAllow: /", "/a*", "/a$", "/a b", "/a?b", "/é"] {
        assert_eq!(file.with_trap(trap).text(), file.text(), "{trap:?}");
    }
}
