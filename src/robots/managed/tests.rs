use super::{category_tokens, managed_file, managed_text, ROBOTS_ONLY};
use crate::bots::Catalogue;
use crate::identity::Category;
use crate::robots::{CrawlDelay, Group, GroupAgent, RobotsSettings, Source, Verdict};
use std::io::Write;
use std::process::{Command, Stdio};

fn group(agent: GroupAgent, disallow: &[&str], allow: &[&str], delay: u64) -> Group {
    Group {
        agent,
        disallow: disallow.iter().map(|s| s.to_string()).collect(),
        allow: allow.iter().map(|s| s.to_string()).collect(),
        crawl_delay: CrawlDelay::from_secs(delay),
    }
}

/// The issue's example, with a token group merged into its category's.
fn settings() -> RobotsSettings {
    RobotsSettings {
        source: Source::Managed,
        groups: vec![
            group(GroupAgent::Category(Category::AiCrawler), &["/"], &[], 0),
            group(GroupAgent::Token("GPTBot".into()), &[], &["/public/"], 0),
            group(
                GroupAgent::Any,
                &["/admin/", "/a"],
                &["/admin/open/", "/a/"],
                2,
            ),
            group(GroupAgent::Token("Slowbot".into()), &["/x"], &[], 10),
        ],
        content_signal: Some("search=yes, ai-train=no".into()),
        ..RobotsSettings::default()
    }
}

const TRAP: &str = "/.well-known/floodgate-trap/";

#[test]
fn a_category_names_its_catalogue_crawlers_and_the_robots_only_tokens() {
    let catalogue = Catalogue::builtin();
    let tokens = category_tokens(Category::AiCrawler, &catalogue);
    for token in [
        "GPTBot",
        "ClaudeBot",
        "CCBot",
        "Google-Extended",
        "Applebot-Extended",
    ] {
        assert!(tokens.iter().any(|t| t == token), "{token}: {tokens:?}");
    }
    assert!(
        !tokens.iter().any(|t| t == "AI2Bot" || t.contains(' ')),
        "not product tokens"
    );
    assert_eq!(ROBOTS_ONLY[0].0, Category::AiCrawler);
    let search = category_tokens(Category::SearchEngine, &catalogue);
    assert!(search.iter().any(|t| t == "Googlebot") && !search.iter().any(|t| t == "GPTBot"));
}

#[test]
fn the_file_as_written() {
    let text = managed_text(&settings(), &Catalogue::builtin(), Some(TRAP));
    let gptbot = text
        .split("\n\n")
        .find(|g| g.contains("User-agent: GPTBot\n"))
        .unwrap();
    assert!(
        !gptbot.contains("User-agent: ClaudeBot"),
        "GPTBot is told more: its own group"
    );
    assert!(
        gptbot.ends_with(&format!(
            "Content-Signal: search=yes, ai-train=no\nDisallow: {TRAP}\nAllow: /public/\nDisallow: /"
        )),
        "{gptbot}"
    );
    let star = text.split("\n\n").last().unwrap();
    assert_eq!(
        star,
        format!(
            "User-agent: *\nContent-Signal: search=yes, ai-train=no\nCrawl-delay: 2\n\
             Disallow: {TRAP}\nAllow: /admin/open/\nDisallow: /admin/\nAllow: /a/\nDisallow: /a\n"
        )
    );
    let groups = text.matches("\n\n").count();
    assert_eq!(groups, 4, "ai-crawler, GPTBot, Slowbot, *");
    assert_eq!(
        text.matches("Content-Signal:").count(),
        groups,
        "one in every group"
    );
    assert_eq!(text.matches(&format!("Disallow: {TRAP}\n")).count(), groups);
    assert!(text.contains("User-agent: Google-Extended\n") && text.contains("Crawl-delay: 10\n"));
}

#[test]
fn the_file_as_the_parser_reads_it() {
    let file = managed_file(&settings(), &Catalogue::builtin(), Some(TRAP));
    let verdict = |token: Option<&str>, path| file.verdict(token, path);
    assert_eq!(verdict(Some("gptbot"), "/"), Verdict::Disallowed);
    assert_eq!(verdict(Some("gptbot"), "/public/x"), Verdict::Allowed);
    assert_eq!(verdict(Some("claudebot"), "/public/x"), Verdict::Disallowed);
    assert_eq!(verdict(Some("google-extended"), "/"), Verdict::Disallowed);
    assert_eq!(verdict(None, "/"), Verdict::Allowed);
    assert_eq!(verdict(None, "/admin/x"), Verdict::Disallowed);
    assert_eq!(verdict(None, "/admin/open/x"), Verdict::Allowed);
    for token in [Some("gptbot"), Some("slowbot"), None] {
        assert_eq!(verdict(token, TRAP), Verdict::Disallowed);
    }
    assert_eq!(file.crawl_delay(None).map(CrawlDelay::secs), Some(2));
    assert_eq!(
        file.crawl_delay(Some("slowbot")).map(CrawlDelay::secs),
        Some(10)
    );
    assert_eq!(file.crawl_delay(Some("gptbot")), None);
}

#[test]
fn no_groups_is_a_star_group_allowing_everything() {
    let settings = RobotsSettings {
        source: Source::Managed,
        ..RobotsSettings::default()
    };
    let text = managed_text(&settings, &Catalogue::builtin(), None);
    assert!(text.ends_with("\n\nUser-agent: *\nDisallow:\n"), "{text}");
    let file = managed_file(&settings, &Catalogue::builtin(), None);
    assert_eq!(file.verdict(None, "/anything"), Verdict::Allowed);
}

/// Python's `urllib.robotparser` on the text (stdin): for each agent, whether it may fetch
/// each path, then its crawl delay.
const PYTHON: &str = r#"
import sys, urllib.robotparser
rp = urllib.robotparser.RobotFileParser()
rp.parse(sys.stdin.read().splitlines())
args = sys.argv[1:]
agents, paths = args[:args.index("--")], args[args.index("--") + 1:]
for a in agents:
    print(" ".join("1" if rp.can_fetch(a, "http://example.com" + p) else "0" for p in paths), rp.crawl_delay(a))
"#;

const PATHS: [&str; 8] = [
    "/",
    "/public/x",
    "/admin/x",
    "/admin/open/y",
    "/a",
    "/a/b",
    "/x",
    TRAP,
];

/// What Python says, a line per agent; `None` when python3 is absent.
fn python(text: &str, agents: &[&str]) -> Option<String> {
    let Ok(mut child) = Command::new("python3")
        .args(["-c", PYTHON])
        .args(agents)
        .arg("--")
        .args(PATHS)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    else {
        eprintln!("SKIPPED: python3 is not installed; urllib.robotparser not checked");
        return None;
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn python_reads_the_file_as_the_parser_does() {
    let text = managed_text(&settings(), &Catalogue::builtin(), Some(TRAP));
    let agents = [
        "GPTBot",
        "ClaudeBot",
        "Google-Extended",
        "Slowbot",
        "Googlebot",
        "Firefox",
    ];
    let Some(python) = python(&text, &agents) else {
        return;
    };
    let ours = managed_file(&settings(), &Catalogue::builtin(), Some(TRAP));
    let tokens = [
        Some("gptbot"),
        Some("claudebot"),
        Some("google-extended"),
        Some("slowbot"),
        None,
        None,
    ];
    assert_eq!(python.lines().count(), tokens.len(), "{python}");
    for (line, token) in python.lines().zip(tokens) {
        let mut expected: Vec<String> = PATHS
            .iter()
            .map(|p| match ours.verdict(token, p) {
                Verdict::Allowed => "1".to_owned(),
                Verdict::Disallowed => "0".to_owned(),
            })
            .collect();
        expected.push(
            ours.crawl_delay(token)
                .map_or("None".into(), |d| d.secs().to_string()),
        );
        assert_eq!(line, expected.join(" "), "{token:?}");
    }
}
