//! The module layering of `src/`: dependencies between top-level modules point one way (no
//! cycle), and between the files of each directory (`mod.rs` files included); the gate holds
//! no pingora types and is the one place that asks the store for a decision; the front doors
//! other than the proxy never import it, nor run the steps of its pipeline; no outcome is
//! compared as a string, nor a decision named by one; the clock files alone read the wall
//! clock (everything else is handed a `Clock`) and one file digests a caller.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("src is readable").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level module a file under `src/` belongs to (`None` for lib.rs and main.rs).
fn module_of(root: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(root).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    match first {
        "lib.rs" | "main.rs" => None,
        name => Some(name.trim_end_matches(".rs").to_owned()),
    }
}

/// The code of a source file outside its unit tests: everything before a top-level
/// `#[cfg(test)]` that opens a `mod` (a `#[cfg(test)]` on anything else is kept, so
/// test-only helpers count as code); nothing of a `tests.rs` file.
fn code_outside_tests(file: &Path, text: &str) -> String {
    if file.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0] == "#[cfg(test)]" && w[1].starts_with("mod "))
        .unwrap_or(lines.len());
    lines[..end].join("\n")
}

/// The leading identifier of `text`.
fn ident(text: &str) -> String {
    text.trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The top-level modules `code` names: `crate::name`, each first name of a grouped
/// `crate::{a::…, b}`, and `super::name` when `at_root` (a file directly under `src/`, or a
/// top-level `mod.rs`, whose `super` is the crate).
fn names_in(code: &str, at_root: bool) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut prefixes = vec!["crate::"];
    if at_root {
        prefixes.push("super::");
    }
    for prefix in prefixes {
        for (i, _) in code.match_indices(prefix) {
            let rest = &code[i + prefix.len()..];
            match rest.strip_prefix('{') {
                Some(group) => names.extend(group_heads(group)),
                None => {
                    names.insert(ident(rest));
                }
            }
        }
    }
    names.retain(|n| !n.is_empty() && n != "self");
    names
}

/// The first name of each item of a `{…}` group (its text after the `{`).
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut at_item_start = true;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => at_item_start = true,
            c if at_item_start && !c.is_whitespace() => {
                heads.push(ident(&group[i..]));
                at_item_start = false;
            }
            _ => {}
        }
    }
    heads
}

/// Whether `file` sits where `super::` names the crate root.
fn at_root(root: &Path, file: &Path) -> bool {
    let Ok(relative) = file.strip_prefix(root) else {
        return false;
    };
    let depth = relative.components().count();
    depth == 1 || (depth == 2 && relative.ends_with("mod.rs"))
}

/// The top-level modules each module's code names, outside tests.
fn dependencies(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(root) {
        let Some(module) = module_of(root, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("readable source");
        let code = code_outside_tests(&file, &text);
        let uses = graph.entry(module.clone()).or_default();
        uses.extend(
            names_in(&code, at_root(root, &file))
                .into_iter()
                .filter(|n| *n != module),
        );
    }
    graph
}

/// A cycle through `node`, if there is one, as the path of modules.
fn cycle_from(
    node: &str,
    graph: &BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    if let Some(start) = path.iter().position(|p| p == node) {
        let mut cycle = path[start..].to_vec();
        cycle.push(node.to_owned());
        return Some(cycle);
    }
    path.push(node.to_owned());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(cycle) = cycle_from(next, graph, path) {
            return Some(cycle);
        }
    }
    path.pop();
    None
}

/// The roots whose modules are checked: the binary's `src/` and the limiter crate's.
fn roots() -> [PathBuf; 2] {
    let crate_src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/limiter/src");
    [src(), crate_src]
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    for root in roots() {
        let graph = dependencies(&root);
        assert!(graph.len() >= 8, "modules found under {root:?}: {graph:?}");
        for node in graph.keys() {
            if let Some(cycle) = cycle_from(node, &graph, &mut Vec::new()) {
                panic!("import cycle under {root:?}: {}", cycle.join(" → "));
            }
        }
    }
}

#[test]
fn the_limiter_crate_builds_without_pingora_or_the_binary() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/limiter/Cargo.toml");
    let manifest = std::fs::read_to_string(manifest).expect("the limiter crate's manifest");
    let dependencies = manifest
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'));
    for line in dependencies {
        assert!(
            !line.starts_with("pingora") && !line.starts_with("floodgate ="),
            "crates/limiter depends on the proxy: {line}"
        );
    }
    for file in rust_files(&roots()[1]) {
        let text = std::fs::read_to_string(&file).expect("readable source");
        assert!(!text.contains("pingora::"), "{file:?} names pingora");
    }
}

/// A file's node in its room: the directory it sits in and its name there. A `mod.rs` is its
/// directory's module, a node of the directory above (where its `super::` points), named
/// after its directory; `tests.rs` and the files directly under `src/` are in no room.
fn node_of(root: &Path, file: &Path) -> Option<(PathBuf, String)> {
    let stem = file.file_stem()?.to_str()?;
    let dir = file.parent()?;
    let (room, name) = match stem {
        "tests" => return None,
        "mod" => (dir.parent()?, dir.file_name()?.to_str()?),
        _ => (dir, stem),
    };
    (room.starts_with(root) && room != root).then(|| (room.to_owned(), name.to_owned()))
}

/// Within each directory under `src/` (a room), the sibling files each file's code names
/// with `super::` (a file's own `mod.rs` is the room itself, not a sibling; a `mod.rs` below
/// is the sibling named after its directory).
fn rooms(root: &Path) -> BTreeMap<PathBuf, BTreeMap<String, BTreeSet<String>>> {
    let mut rooms: BTreeMap<PathBuf, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in rust_files(root) {
        let Some((dir, stem)) = node_of(root, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("readable source");
        let code = code_outside_tests(&file, &text);
        let sibling = |name: &String| {
            *name != stem
                && (dir.join(format!("{name}.rs")).exists()
                    || dir.join(name).join("mod.rs").exists())
        };
        let uses: BTreeSet<String> = names_in(&code.replace("crate::", "_::"), true)
            .into_iter()
            .filter(sibling)
            .collect();
        rooms
            .entry(dir)
            .or_default()
            .entry(stem)
            .or_default()
            .extend(uses);
    }
    rooms
}

#[test]
fn no_import_cycle_between_the_files_of_a_room() {
    for root in roots() {
        let rooms = rooms(&root);
        assert!(rooms.len() >= 4, "rooms found: {:?}", rooms.keys());
        for (dir, graph) in &rooms {
            for node in graph.keys() {
                if let Some(cycle) = cycle_from(node, graph, &mut Vec::new()) {
                    let room = dir.strip_prefix(&root).unwrap_or(dir).display();
                    panic!("import cycle in {room}/: {}", cycle.join(" → "));
                }
            }
        }
    }
}

#[test]
fn the_cycle_detector_finds_a_cycle_and_reads_grouped_and_super_imports() {
    let edges = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")];
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in edges {
        graph.entry(from.into()).or_default().insert(to.into());
    }
    let cycle = cycle_from("d", &graph, &mut Vec::new()).expect("a → b → c → a");
    assert_eq!(cycle, ["a", "b", "c", "a"]);

    let code = "use crate::{gate::Outcome, proxy::{A, B}, limiter};\nuse super::admin::X;";
    let names: Vec<String> = names_in(code, true).into_iter().collect();
    assert_eq!(names, ["admin", "gate", "limiter", "proxy"]);
    assert!(
        !names_in(code, false).contains("admin"),
        "super:: is the crate only at the root"
    );

    let text = "use crate::a::X;\n#[cfg(test)]\nfn helper() { crate::b::y() }\n#[cfg(test)]\nmod tests {\n    use crate::c::Z;\n}\n";
    let names = names_in(&code_outside_tests(Path::new("x.rs"), text), false);
    assert_eq!(names.into_iter().collect::<Vec<_>>(), ["a", "b"]);
}

#[test]
fn the_leaves_know_nothing_of_the_gate_the_proxy_or_the_app() {
    let graph = dependencies(&src());
    for leaf in ["identity", "policy", "limiter", "telemetry", "clock"] {
        let uses = &graph[leaf];
        for upper in ["gate", "proxy", "app", "config", "admin"] {
            assert!(!uses.contains(upper), "{leaf} uses {upper}");
        }
    }
    assert!(!graph["gate"].contains("proxy") && !graph["gate"].contains("app"));
    assert!(!graph["proxy"].contains("app") && !graph["proxy"].contains("config"));
}

#[test]
fn the_mod_rs_files_are_nodes_of_the_room_above() {
    let sentinel = src().join("a/b/c/mod.rs");
    assert_eq!(
        node_of(&src(), &sentinel),
        Some((src().join("a/b"), "c".to_owned()))
    );
    assert_eq!(
        node_of(&src(), &src().join("a/b/d.rs")),
        Some((src().join("a/b"), "d".to_owned()))
    );
    assert_eq!(
        node_of(&src(), &src().join("a/mod.rs")),
        None,
        "a top-level module"
    );
    assert_eq!(node_of(&src(), &src().join("a/tests.rs")), None);
}

#[test]
fn the_front_doors_decide_through_the_gate_not_through_the_proxy() {
    let graph = dependencies(&src());
    for door in ["rls", "check", "admin"] {
        assert!(
            graph[door].contains("gate"),
            "{door} decides through the gate"
        );
        assert!(!graph[door].contains("proxy"), "{door} uses proxy");
    }
}

/// Whether `file` is `path` under `src/`.
fn is(file: &Path, path: &str) -> bool {
    file == src().join(path)
}

#[test]
fn one_place_calls_the_store_for_a_decision() {
    for file in rust_files(&src()) {
        if file.starts_with(src().join("limiter")) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = code_outside_tests(&file, &text);
        let asks = code.contains("limiter.acquire(") || code.contains("fallback.decide(");
        // Settlements change a bucket after the decision; they decide nothing.
        let settles = is(&file, "gate/aftercare.rs") && !code.contains("fallback.decide(");
        assert!(
            !asks || settles || is(&file, "gate/store_call.rs"),
            "{} asks the store for a decision: only gate/store_call.rs does",
            file.display()
        );
    }
}

#[test]
fn the_pipelines_steps_are_run_inside_the_gate_only() {
    // The front doors go through `Pipeline::decide` (the gate's own way, `admitting`, takes
    // its slots between the checks): none runs a step itself, in its own order.
    let steps = [
        ".refuse_unpayable(",
        ".refused_by(",
        ".undecided(",
        ".admitting(",
        "Passage::",
    ];
    for file in rust_files(&src()) {
        if file.starts_with(src().join("gate")) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = code_outside_tests(&file, &text);
        for step in steps {
            assert!(
                !code.contains(step),
                "{} runs the gate's pipeline step `{step}`: go through `Pipeline::decide`",
                file.display()
            );
        }
    }
}

#[test]
fn the_gate_holds_no_pingora_types() {
    for file in rust_files(&src().join("gate")) {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains("pingora"),
            "{} names pingora",
            file.display()
        );
    }
}

/// Every label value of the vocabularies (`Variant => "label"` in telemetry/vocab.rs).
/// and the store's error kinds, which the limiter crate names (crates/limiter/src/metrics.rs).
fn vocabulary_labels() -> BTreeSet<String> {
    let read = |path: PathBuf| std::fs::read_to_string(&path).expect("a vocabulary file");
    let text = read(src().join("telemetry/vocab.rs")) + &read(roots()[1].join("metrics.rs"));
    text.match_indices("=> \"")
        .map(|(i, m)| ident(&text[i + m.len()..]))
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn no_outcome_is_compared_as_a_string() {
    let labels = vocabulary_labels();
    for word in ["allowed", "throttled", "timeout", "aborted", "breaker_open"] {
        assert!(labels.contains(word), "vocabulary labels read: {labels:?}");
    }
    for file in rust_files(&src()) {
        // The config reads the file's own words (`on_overload = "shed"`), which are no
        // outcome even where they are spelt like one.
        if file.ends_with("telemetry/vocab.rs") || file.starts_with(src().join("config")) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = code_outside_tests(&file, &text);
        for word in &labels {
            for pattern in [
                format!("== \"{word}\""),
                format!("!= \"{word}\""),
                format!("Some(\"{word}\")"),
                format!("\"{word}\" =>"),
            ] {
                assert!(
                    !code.contains(&pattern),
                    "{} compares an outcome as text: {pattern}",
                    file.display()
                );
            }
        }
    }
}

/// What reads the wall clock, spelt any way: the standard library's, the limiter crate's
/// readings (`wall_now`, `wall_now_ms`, …), chrono's, time's and jiff's "now", and a system
/// `Clock` read on the spot instead of handed in.
const WALL_CLOCK_READS: [&str; 9] = [
    "SystemTime::now",
    "wall_now",
    "Utc::now",
    "Local::now",
    "OffsetDateTime::now",
    "Timestamp::now",
    "Zoned::now",
    "Clock::System.",
    "Clock::default().",
];

#[test]
fn no_decision_is_named_by_a_string() {
    // A request's decision is `telemetry::RequestDecision`, a policy's `PolicyOutcome`: typed,
    // their words written only where a line, a record, a span or a label is made. The
    // policies' tally reads its own exported series back (telemetry/policy.rs).
    let patterns = [
        "decision == \"",
        "decision != \"",
        "outcome == \"",
        "outcome != \"",
        ".label() ==",
        ".label() !=",
        "decision_word() ==",
        "decision_word() !=",
        "decision: &'static str",
        "outcome: &'static str",
    ];
    for file in rust_files(&src()) {
        if is(&file, "telemetry/policy.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = code_outside_tests(&file, &text);
        for pattern in patterns {
            assert!(
                !code.contains(pattern),
                "{} names a decision by a string: {pattern}",
                file.display()
            );
        }
    }
}

#[test]
fn one_file_reads_the_wall_clock() {
    // The limiter crate's clock.rs reads it (`SystemTime::now`, its `wall_now_*` readings and
    // the store's monotonic clock's start); src/clock.rs makes `Clock::System` of those. Every
    // decision, expiry and record elsewhere reads the `Clock` it is handed, so a test can set
    // and move it.
    let readers = [roots()[1].join("clock.rs"), src().join("clock.rs")];
    for file in roots().iter().flat_map(|root| rust_files(root)) {
        if readers.contains(&file) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = code_outside_tests(&file, &text);
        for read in WALL_CLOCK_READS {
            assert!(
                !code.contains(read),
                "{} reads the wall clock ({read}): take the `crate::clock::Clock` it is handed \
                 (see \"One clock\" in docs/src/design.md)",
                file.display()
            );
        }
    }
}

#[test]
fn one_file_digests_a_caller() {
    // The rate limit service's descriptors are not callers of a source: their digest is made
    // of the domain and entries, under a tag no source can have (`rls`).
    let allowed = ["identity/digest.rs", "rls/decide.rs"];
    for file in rust_files(&src()) {
        let text = std::fs::read_to_string(&file).unwrap();
        let code = code_outside_tests(&file, &text);
        assert!(
            allowed.iter().any(|path| is(&file, path)) || !code.contains("Identity::of("),
            "{} digests a caller: only identity/digest.rs makes a digest from a source's value",
            file.display()
        );
    }
}
