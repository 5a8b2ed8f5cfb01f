//! Tests of `[robots]`: the defaults, a managed file's groups, and each mistake located at
//! its value.

use crate::config::parse;
use crate::config::tests::BASE;
use crate::identity::Category;
use crate::robots::{GroupAgent, RobotsSettings, Source};
use std::path::Path;
use std::time::Duration;

/// [`BASE`] (7 lines, and a blank one) with `section` from line 9.
fn config(section: &str) -> String {
    format!("{BASE}\n{section}\n")
}

fn load(section: &str) -> Result<Option<RobotsSettings>, String> {
    parse(&config(section), Path::new("f.toml"))
        .map(|c| c.robots)
        .map_err(|e| e.to_string())
}

fn error_of(section: &str) -> String {
    load(section).unwrap_err()
}

#[test]
fn no_table_no_robots_and_an_empty_one_reads_the_backend() {
    assert_eq!(load("").unwrap(), None);
    let robots = load("[robots]").unwrap().unwrap();
    assert_eq!(robots, RobotsSettings::default());
    assert_eq!(robots.source, Source::Backend);
    assert_eq!(robots.refresh, Duration::from_secs(3600));
    assert_eq!(robots.trap_ban, Duration::from_secs(3600));
    assert_eq!(robots.trap_window, Duration::from_secs(86_400));
    let robots = load("[robots]\nrefresh = \"1s\"\ntrap_ban = \"10m\"\ntrap_window = \"2h\"")
        .unwrap()
        .unwrap();
    assert_eq!(robots.refresh, Duration::from_secs(1));
    assert_eq!(robots.trap_ban, Duration::from_secs(600));
    assert_eq!(robots.trap_window, Duration::from_secs(7200));
}

#[test]
fn the_issue_example_is_read_in_the_order_written() {
    let robots = load(
        "[robots]\nsource = \"managed\"\ncontent_signal = \"search=yes, ai-train=no\"\n\
         groups = { \"ai-crawler\" = { disallow = [\"/\"] }, \"*\" = { disallow = [\"/admin/\"], crawl_delay = \"2s\" }, GPTBot = { allow = [\"/public/\"] } }\n\
         trap = \"/.well-known/floodgate-trap/\"",
    )
    .unwrap()
    .unwrap();
    assert_eq!(robots.source, Source::Managed);
    assert_eq!(
        robots.content_signal.as_deref(),
        Some("search=yes, ai-train=no")
    );
    assert_eq!(robots.trap.as_deref(), Some("/.well-known/floodgate-trap/"));
    let agents: Vec<_> = robots.groups.iter().map(|g| g.agent.clone()).collect();
    assert_eq!(
        agents,
        [
            GroupAgent::Category(Category::AiCrawler),
            GroupAgent::Any,
            GroupAgent::Token("GPTBot".into())
        ]
    );
    assert_eq!(robots.groups[1].disallow, ["/admin/"]);
    assert_eq!(robots.groups[1].crawl_delay.map(|d| d.secs()), Some(2));
    assert_eq!(robots.groups[2].allow, ["/public/"]);
    assert_eq!(
        super::RobotsLine(&robots).to_string(),
        "robots.txt      managed: groups ai-crawler, *, GPTBot, Content-Signal `search=yes, \
         ai-train=no`; trap /.well-known/floodgate-trap/: a caller that read the file in the \
         last 1day is banned for 1h\n"
    );
}

#[test]
fn each_mistake_is_located_at_its_value_and_names_its_key() {
    let managed = "[robots]\nsource = \"managed\"\n";
    let cases = [
        (
            format!("{managed}groups = {{ \"ai crawler\" = {{ disallow = [\"/\"] }} }}"),
            "f.toml:11:27: `robots.groups.\"ai crawler\"`: `ai crawler` is not a bot category",
        ),
        (
            format!("{managed}groups = {{ spoofed = {{ disallow = [\"/\"] }} }}"),
            "f.toml:11:22: `robots.groups.\"spoofed\"`: `spoofed` is what a crawler's failed claim",
        ),
        (
            format!("{managed}groups = {{ \"*\" = {{ disallow = [\"admin/\"] }} }}"),
            "f.toml:11:32: `robots.groups.\"*\".disallow`: `admin/` does not start with `/`",
        ),
        (
            format!("{managed}groups = {{ \"*\" = {{ allow = [\"/a b\"] }} }}"),
            "f.toml:11:29: `robots.groups.\"*\".allow`: `/a b` holds a space",
        ),
        (
            format!("{managed}groups = {{ GPTBot = {{ crawl_delay = \"1500ms\" }} }}"),
            "f.toml:11:37: `robots.groups.\"GPTBot\".crawl_delay` must be a whole number of seconds from 1s to 1d",
        ),
        (
            format!("{managed}groups = {{ GPTBot = {{ crawl_delay = \"2d\" }} }}"),
            "f.toml:11:37: `robots.groups.\"GPTBot\".crawl_delay` must be a whole number",
        ),
        (
            format!("{managed}groups = {{ GPTBot = {{ crawl_delay = \"0s\" }} }}"),
            "f.toml:11:37: `robots.groups.\"GPTBot\".crawl_delay` must be a whole number",
        ),
        (
            format!("{managed}groups = {{ GPTBot = {{ delay = \"2s\" }} }}"),
            "f.toml:11:23: unknown field `delay`",
        ),
        (
            "[robots]\ngroups = { \"*\" = { disallow = [\"/\"] } }".to_owned(),
            "f.toml:10:10: `robots.groups` is for `source = \"managed\"`",
        ),
        (
            "[robots]\nsource = \"backend\"\ncontent_signal = \"search=yes\"".to_owned(),
            "f.toml:11:18: `robots.content_signal` is for `source = \"managed\"`",
        ),
        (
            format!("{managed}content_signal = \"search=maybe\""),
            "f.toml:11:18: `robots.content_signal` must be signals like",
        ),
        (
            "[robots]\nsource = \"mangaed\"".to_owned(),
            "f.toml:10:10: unknown variant `mangaed`, expected `backend` or `managed`",
        ),
        (
            "[robots]\nrefresh = \"500ms\"".to_owned(),
            "f.toml:10:11: `robots.refresh` must be at least 1s",
        ),
        (
            "[robots]\ntrap_ban = \"0s\"".to_owned(),
            "f.toml:10:12: `robots.trap_ban` must be above zero",
        ),
        (
            "[robots]\ntrap_window = \"soon\"".to_owned(),
            "f.toml:10:15: `robots.trap_window` must be a duration like 500ms or 30s",
        ),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .map(|(section, expected)| (error_of(section), expected))
        .filter(|(e, expected)| !e.starts_with(*expected))
        .map(|(e, expected)| format!("expected {expected}\n     got {e}"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_backend_source_needs_a_backend() {
    let check_only = "[check]\nlisten = \"127.0.0.1:9100\"\n";
    let e = parse(
        &format!("{check_only}[robots]\nsource = \"backend\"\n"),
        Path::new("f.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("f.toml:4:10: `robots.source = \"backend\"` (the default) reads the backend's /robots.txt, and there is no `[upstream]`"),
        "{e}"
    );
    let e = parse(&format!("{check_only}[robots]\n"), Path::new("f.toml")).unwrap_err();
    assert!(e.to_string().starts_with("f.toml:"), "{e}");
    assert!(e.to_string().contains("there is no `[upstream]`"), "{e}");
    let managed = format!("{check_only}[robots]\nsource = \"managed\"\n");
    assert!(parse(&managed, Path::new("f.toml")).is_ok());
}

#[test]
fn a_trap_that_is_not_a_plain_path_or_overlaps_a_path_in_use_is_refused() {
    let trap = |t: &str| format!("[robots]\ntrap = \"{t}\"");
    for (section, expected) in [
        (trap("trap/"), "f.toml:10:8: `robots.trap` must be a plain path below `/`"),
        (trap("/"), "f.toml:10:8: `robots.trap` must be a plain path"),
        (trap("/a*b"), "f.toml:10:8: `robots.trap` must be a plain path"),
        (trap("/robots"), "f.toml:10:8: `robots.trap`: `/robots` overlaps `/robots.txt`"),
        (trap("/robots.txt/x"), "f.toml:10:8: `robots.trap`: `/robots.txt/x` overlaps `/robots.txt`"),
        (
            trap("/.floodgate/challenge/trap"),
            "f.toml:10:8: `robots.trap`: `/.floodgate/challenge/trap` overlaps `challenge.path` (`/.floodgate/challenge`)",
        ),
        (
            format!("[challenge]\npath = \"/c/x\"\n{}", trap("/c/")),
            "f.toml:12:8: `robots.trap`: `/c/` overlaps `challenge.path` (`/c/x`)",
        ),
        (
            format!("[[route]]\npool = \"default\"\nmatch = {{ path_prefix = \"/api/\" }}\n{}", trap("/api/trap/")),
            "f.toml:13:8: `robots.trap`: `/api/trap/` overlaps the path prefix `/api/` of `[[route]]` number 1",
        ),
        (
            format!("[[policy]]\nname = \"p\"\ncapacity = 1\nrate = \"1/s\"\nmatch = {{ path_prefix = \"/t/x\" }}\n{}", trap("/t/")),
            "f.toml:15:8: `robots.trap`: `/t/` overlaps the path prefix `/t/x` of policy `p`",
        ),
    ] {
        let e = error_of(&section);
        assert!(e.starts_with(expected), "{section}\n{e}");
    }
    // A prefix of `/` names the whole site: it overlaps nothing.
    let whole = format!(
        "[[policy]]\nname = \"p\"\ncapacity = 1\nrate = \"1/s\"\nmatch = {{ path_prefix = \"/\" }}\n{}",
        trap("/t/")
    );
    assert!(load(&whole).is_ok());
}

#[test]
fn a_trap_some_group_may_fetch_is_refused_where_the_rule_stands() {
    let managed = |groups: &str| {
        format!("[robots]\nsource = \"managed\"\ntrap = \"/trap/\"\ngroups = {{ {groups} }}")
    };
    let e = error_of(&managed("GPTBot = { allow = [\"/trap/\"] }"));
    assert!(
        e.starts_with(
            "f.toml:12:32: `robots.groups.\"GPTBot\".allow`: `/trap/` lets crawlers fetch the trap"
        ),
        "{e}"
    );
    let e = error_of(&managed(
        "\"*\" = { disallow = [\"/\"], allow = [\"/*/public\"] }",
    ));
    assert!(
        e.contains("`/*/public` lets crawlers fetch the trap"),
        "{e}"
    );
    // Shorter than the trap: the trap's Disallow wins.
    let robots = load(&managed(
        "\"*\" = { disallow = [\"/\"], allow = [\"/t\", \"/*/x\"] }",
    ));
    assert!(robots.is_ok(), "{robots:?}");
}
