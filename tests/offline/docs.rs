//! The docs as a reader meets them: every relative link of the book (`docs/src`), the README
//! and the changelog leads to a file that exists, and to a heading that exists when it names
//! one; the configuration reference lists exactly the keys the config reader accepts (the
//! reader says which when it meets an unknown key, so the code is asked, not a copy of it); and
//! `floodgate --test` accepts every ```toml example of the book (a whole config as it stands,
//! a part inside the smallest config it can stand in; a `toml,fragment` block is skipped); and
//! the metrics reference lists exactly the series the registry exports.

use regex::Regex;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every Markdown file a reader is pointed to.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md"), root().join("CHANGELOG.md")];
    let mut dirs = vec![root().join("docs/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// The anchors mdBook gives `text`'s headings: lowercase, spaces as `-`, only letters,
/// digits, `-` and `_` kept.
fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .iter()
        .filter_map(|line| line.strip_prefix('#'))
        .map(|heading| {
            heading
                .trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

#[test]
fn every_relative_link_leads_somewhere() {
    let link = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for line in prose(&text) {
            for target in link.captures_iter(line).map(|c| c[1].to_owned()) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
                let resolved = match file {
                    "" => page.clone(),
                    file => page.parent().unwrap().join(file),
                };
                let found = match std::fs::read_to_string(&resolved) {
                    Ok(linked) => anchor.is_empty() || anchors(&linked).contains(anchor),
                    // A directory, or a file that is not text (an image).
                    Err(_) => resolved.exists() && anchor.is_empty(),
                };
                if !found {
                    let from = page.strip_prefix(root()).unwrap().display().to_string();
                    broken.push(format!("{from}: {target}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The keys the config reader accepts in the table `probe` opens (an unknown key there is
/// refused with the list of the known ones).
fn accepted(probe: &str) -> BTreeSet<String> {
    let text = probe.replace("KEY", "zzz_probe = 1");
    let message = floodgate::config::parse(&text, Path::new("probe.toml"))
        .err()
        .unwrap_or_else(|| panic!("an unknown key is refused:\n{text}"))
        .to_string();
    let list = message
        .split_once("zzz_probe")
        .map(|(_, after)| after)
        .unwrap_or_else(|| panic!("{probe}: {message}"));
    Regex::new(r"`([a-z0-9_]+)`")
        .unwrap()
        .captures_iter(list)
        .map(|c| c[1].to_owned())
        .collect()
}

/// Each table of the config as the reference names it, and how to open it.
const TABLES: [(&str, &str); 37] = [
    ("", "KEY"),
    ("server", "[server]\nKEY"),
    ("admin", "[admin]\nKEY"),
    ("upstream", "[upstream]\nKEY"),
    ("upstream.health", "[upstream.health]\nKEY"),
    ("upstream.pools.<name>", "[upstream.pools.a]\nKEY"),
    ("route", "[[route]]\nKEY"),
    ("route.match", "[[route]]\nmatch = { KEY }"),
    ("store", "[store]\nKEY"),
    ("identity", "[identity]\nKEY"),
    ("identity.ip", "[identity.ip]\nKEY"),
    ("identity.jwt", "[identity.jwt]\nKEY"),
    (
        "identity.verify.<source>",
        "[identity]\nsources = [\"header:k\"]\n[identity.verify]\n\"header:k\" = { by = \"list\", KEY }",
    ),
    ("access", "[access]\nKEY"),
    ("response", "[response]\nKEY"),
    ("policy", "[[policy]]\nKEY"),
    ("policy.match", "[[policy]]\nmatch = { KEY }"),
    ("policy.unless", "[[policy]]\nunless = { KEY }"),
    ("policy.tiers.<name>", "[[policy]]\n[policy.tiers.a]\nKEY"),
    ("crowdsec", "[crowdsec]\nKEY"),
    ("rls", "[rls]\nKEY"),
    ("check", "[check]\nKEY"),
    ("geo", "[geo]\nKEY"),
    ("bots", "[bots]\nKEY"),
    ("bots.crawler", "[[bots.crawler]]\nKEY"),
    ("bots.score", "[bots.score]\nKEY"),
    ("bots.signed", "[bots.signed]\nKEY"),
    ("bots.signed.key", "[[bots.signed.key]]\nKEY"),
    ("challenge", "[challenge]\nKEY"),
    ("challenge.privacy_pass", "[challenge.privacy_pass]\nKEY"),
    ("tls", "[tls]\nKEY"),
    ("tls.acme", "[tls.acme]\nKEY"),
    ("overload", "[overload]\nKEY"),
    ("telemetry", "[telemetry]\nKEY"),
    ("decisions", "[decisions]\nKEY"),
    ("robots", "[robots]\nKEY"),
    (
        "robots.groups.<key>",
        "[robots]\nsource = \"managed\"\ngroups = { a = { KEY } }",
    ),
];

/// The reference's rows: each key it names (`server.tls_listen`, `tls_cert_file` and
/// `.rate` after a first key name keys of the first key's table) with its row's text.
fn reference() -> HashMap<String, String> {
    let text = std::fs::read_to_string(root().join("docs/src/configuration.md")).unwrap();
    let tick = Regex::new(r"`([^`]+)`").unwrap();
    let mut keys = HashMap::new();
    for row in text.lines().filter(|l| l.starts_with("| `")) {
        let first_cell = row.split('|').nth(1).unwrap();
        let named: Vec<String> = tick
            .captures_iter(first_cell)
            .map(|c| c[1].to_owned())
            .collect();
        let table = named[0].rsplit_once('.').map_or("", |(t, _)| t).to_owned();
        for name in &named {
            let full = match name {
                n if n.starts_with('.') => format!("{table}{n}"),
                n if n.contains('.') => n.clone(),
                n => format!("{table}.{n}"),
            };
            keys.insert(full, row.to_owned());
        }
    }
    keys
}

#[test]
fn the_configuration_reference_lists_exactly_the_keys_the_reader_accepts() {
    let documented = reference();
    let mut problems = Vec::new();
    let tables: HashMap<&str, BTreeSet<String>> = TABLES
        .iter()
        .map(|(name, probe)| (*name, accepted(probe)))
        .collect();
    for (table, keys) in &tables {
        for key in keys {
            let full = match *table {
                "" => key.clone(),
                t => format!("{t}.{key}"),
            };
            let inline = table.ends_with(".match") || table.ends_with(".unless");
            let listed = match inline {
                true => documented
                    .get(*table)
                    .is_some_and(|row| row.contains(key.as_str())),
                false => documented
                    .keys()
                    .any(|k| *k == full || k.starts_with(&format!("{full}."))),
            };
            if !listed {
                problems.push(format!("accepted but not in the reference: `{full}`"));
            }
        }
    }
    for key in documented.keys() {
        let (table, last) = key.rsplit_once('.').unwrap_or(("", key));
        let known = tables.get(table).is_some_and(|keys| keys.contains(last));
        let root_known = tables[""].contains(key.split('.').next().unwrap());
        if !known || !root_known {
            problems.push(format!(
                "in the reference but refused by the reader: `{key}`"
            ));
        }
    }
    problems.sort();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Issue 82: `metrics.md`'s "every series" lacked four; its table now names each series the
/// registry exports (whether it has a value yet or not), and none it does not.
#[test]
fn the_metrics_reference_lists_exactly_the_series_exported() {
    let text = std::fs::read_to_string(root().join("docs/src/metrics.md")).unwrap();
    let (_, table) = text.split_once("## Metrics reference").unwrap();
    let (table, _) = table.split_once("\n## ").unwrap();
    let name = Regex::new(r"^\| `(floodgate_[a-z_]+)").unwrap();
    let listed: BTreeSet<String> = table
        .lines()
        .filter_map(|row| name.captures(row).map(|c| c[1].to_owned()))
        .collect();
    let metrics = floodgate::telemetry::Metrics::new();
    let exported: BTreeSet<String> = metrics.names().iter().cloned().collect();
    let unlisted: Vec<_> = exported.difference(&listed).collect();
    let unknown: Vec<_> = listed.difference(&exported).collect();
    assert!(
        unlisted.is_empty() && unknown.is_empty(),
        "exported but not in metrics.md: {unlisted:?}; in metrics.md but not exported: {unknown:?}"
    );
}

/// Issue 82: getting-started.md's mistake (`rate = "2/sec"`, which the binary accepts) is
/// refused as the page says: its `my.toml` with the rate it names, at the place it quotes.
#[test]
fn the_getting_started_mistake_is_refused_where_the_page_says() {
    let page = std::fs::read_to_string(root().join("docs/src/getting-started.md")).unwrap();
    let (_, heredoc) = page.split_once("cat > my.toml <<'TOML'\n").unwrap();
    let (config, _) = heredoc.split_once("\nTOML\n").unwrap();
    let said = Regex::new(
        r#"A mistake is located: with `(rate = "[^"]*")`, `--test` prints\s+`(my\.toml:\d+:\d+): "#,
    )
    .unwrap();
    let said = said
        .captures(&page)
        .expect("the page names a mistake and where");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("my.toml");
    assert!(config.contains("rate = \"2/s\""));
    std::fs::write(&file, config.replacen("rate = \"2/s\"", &said[1], 1)).unwrap();
    let out = std::process::Command::new(crate::common::floodgate_bin())
        .current_dir(dir.path())
        .args(["--config", "my.toml", "--test"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{} is accepted", &said[1]);
    assert!(
        stderr.starts_with(&format!("{}: `policy.rate`", &said[2])),
        "{stderr}"
    );
}

/// The first line of a ```toml block in the book that is a whole config: `floodgate --test`
/// is run on it as it stands, so an example a reader copies as a file runs as it stands.
const WHOLE_CONFIG: &str = "# floodgate.toml";

/// The info string of a ```toml block the check skips: one that names files only a real
/// install has (a GeoLite2 database, a token file, a key), or that is not Floodgate's config
/// (the crawler catalogue's format). mdBook still highlights it as TOML.
const FRAGMENT: &str = "toml,fragment";

/// A ```toml block of a page: the line of its opening fence (counted from 1), its info
/// string and its text (indentation kept: TOML ignores it).
struct Block {
    fence: usize,
    info: String,
    text: String,
}

/// Every ```toml block of `text`.
fn toml_blocks(text: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    for (number, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (open.take(), fence) {
            (Some(block), Some(_)) => found.push(block),
            (Some(mut block), None) => {
                block.text.push_str(line);
                block.text.push('\n');
                open = Some(block);
            }
            (None, Some(info)) if info.trim() == "toml" || info.trim().starts_with("toml,") => {
                open = Some(Block {
                    fence: number + 1,
                    info: info.trim().to_owned(),
                    text: String::new(),
                })
            }
            (None, _) => {}
        }
    }
    found
}

/// What a block that is part of a config lacks to stand (`None` for a whole config, checked
/// as it stands): `[upstream]` unless it gives `[upstream]`, `[check]` or `[rls]`, and a
/// `[server]` with a `listen` (and a `tls_listen` for `[tls.acme]`) unless it gives one.
fn completion(block: &str) -> Option<String> {
    if block.starts_with(WHOLE_CONFIG) {
        return None;
    }
    let has = |table: &str| block.lines().any(|l| l.trim() == format!("[{table}]"));
    let mut tail = String::new();
    let proxies = has("upstream") || !(has("check") || has("rls"));
    if !has("upstream") && proxies {
        tail.push_str("\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n");
    }
    if !has("server") && proxies {
        tail.push_str("\n[server]\nlisten = \"127.0.0.1:8080\"\n");
        if has("tls.acme") {
            tail.push_str("tls_listen = \"127.0.0.1:8443\"\n");
        }
    }
    Some(tail)
}

/// `floodgate --test` on each ```toml block of the book: a whole config (first line
/// [`WHOLE_CONFIG`]) as it stands, any other block as part of the smallest config it can stand
/// in ([`completion`], added after it), a [`FRAGMENT`] not at all. The file is named after the
/// page and the block keeps its page's line numbers, so a refusal names the page's line and
/// column.
#[test]
fn every_toml_example_in_the_book_passes_floodgate_test() {
    let dir = tempfile::tempdir().unwrap();
    let (mut whole, mut parts) = (0, 0);
    let mut refused = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let from = page.strip_prefix(root()).unwrap().display().to_string();
        for block in toml_blocks(&text) {
            if block.info == FRAGMENT {
                continue;
            }
            let tail = completion(&block.text);
            match tail {
                None => whole += 1,
                Some(_) => parts += 1,
            }
            let file = dir.path().join(page.file_name().unwrap());
            let placed = "\n".repeat(block.fence) + &block.text + &tail.unwrap_or_default();
            std::fs::write(&file, placed).unwrap();
            let out = std::process::Command::new(crate::common::floodgate_bin())
                .arg("--config")
                .arg(&file)
                .arg("--test")
                .output()
                .expect("run floodgate --test");
            if !out.status.success() {
                let stderr = String::from_utf8_lossy(&out.stderr);
                refused.push(format!("{from}:{}: {}", block.fence, stderr.trim()));
            }
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));
    assert!(whole >= 3, "only {whole} whole configs found");
    assert!(parts >= 20, "only {parts} parts of configs found");
}

#[test]
fn a_block_is_completed_with_only_what_it_lacks() {
    assert_eq!(completion("# floodgate.toml\n[server]\n"), None);
    let policy = completion("[[policy]]\nname = \"p\"\n").unwrap();
    assert!(
        policy.contains("[upstream]") && policy.contains("listen ="),
        "{policy}"
    );
    let check = completion("[check]\nlisten = \"127.0.0.1:9100\"\n").unwrap();
    assert_eq!(check, "", "a decision endpoint needs no proxy");
    let server = completion("[server]\naccess_log = true\n").unwrap();
    assert!(!server.contains("[server]"), "{server}");
    let acme = completion("   [tls.acme]\n   domains = [\"a.example\"]\n").unwrap();
    assert!(acme.contains("tls_listen"), "{acme}");
    let blocks = toml_blocks("a\n```toml,fragment\nx = 1\n```\n\n  ```toml\n  y = 2\n  ```\n");
    let found: Vec<(usize, &str, &str)> = blocks
        .iter()
        .map(|b| (b.fence, b.info.as_str(), b.text.as_str()))
        .collect();
    assert_eq!(found, [(2, FRAGMENT, "x = 1\n"), (6, "toml", "  y = 2\n")]);
}
