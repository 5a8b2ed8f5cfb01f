//! The docs as a reader meets them: every relative link of the book (`docs/src`), the README
//! and the changelog leads to a file that exists, and to a heading that exists when it names
//! one; and the configuration reference lists exactly the keys the config reader accepts (the
//! reader says which when it meets an unknown key, so the code is asked, not a copy of it).

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
const TABLES: [(&str, &str); 29] = [
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
    ("bots.signed", "[bots.signed]\nKEY"),
    ("bots.signed.key", "[[bots.signed.key]]\nKEY"),
    ("challenge", "[challenge]\nKEY"),
    ("tls", "[tls]\nKEY"),
    ("tls.acme", "[tls.acme]\nKEY"),
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

/// The first line of a ```toml block in the book that is a whole config: the block is parsed
/// as a config file, so an example a reader copies runs as it stands.
const WHOLE_CONFIG: &str = "# floodgate.toml";

/// Each ```toml block of `text` that starts with [`WHOLE_CONFIG`], with the line of the page
/// its opening fence is on (counted from 1).
fn whole_configs(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (number, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match open.take() {
            Some((start, block)) if fence => found.push((start, block)),
            Some((start, mut block)) => {
                block.push_str(line);
                block.push('\n');
                open = Some((start, block));
            }
            None if line.trim_start() == "```toml" => open = Some((number + 1, String::new())),
            None => {}
        }
    }
    found
        .into_iter()
        .filter(|(_, block)| block.starts_with(WHOLE_CONFIG))
        .collect()
}

#[test]
fn every_whole_config_in_the_book_is_accepted() {
    let mut checked = 0;
    let mut refused = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let from = page.strip_prefix(root()).unwrap().display().to_string();
        for (fence, block) in whole_configs(&text) {
            checked += 1;
            // Blank lines in place of the page's lines above the block: a refusal names the
            // page's own line and column.
            let placed = "\n".repeat(fence) + &block;
            if let Err(e) = floodgate::config::parse(&placed, Path::new(&from)) {
                refused.push(e.to_string());
            }
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));
    assert!(checked >= 3, "only {checked} whole configs found");
}
