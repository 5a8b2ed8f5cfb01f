//! The module layering of `src/`: dependencies between top-level modules point one way (no
//! cycle), the gate holds no pingora types, and no outcome is compared as a string.

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
fn module_of(file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src()).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    match first {
        "lib.rs" | "main.rs" => None,
        name => Some(name.trim_end_matches(".rs").to_owned()),
    }
}

/// The top-level modules each module's code names through `crate::`, outside tests.
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(&src()) {
        let Some(module) = module_of(&file) else {
            continue;
        };
        let is_test_file = file.file_name().is_some_and(|n| n == "tests.rs");
        let text = std::fs::read_to_string(&file).expect("readable source");
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let uses = graph.entry(module.clone()).or_default();
        if is_test_file {
            continue;
        }
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != module {
                uses.insert(name);
            }
        }
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

#[test]
fn no_import_cycle_between_top_level_modules() {
    let graph = dependencies();
    assert!(graph.len() >= 8, "modules found: {graph:?}");
    for node in graph.keys() {
        if let Some(cycle) = cycle_from(node, &graph, &mut Vec::new()) {
            panic!("import cycle: {}", cycle.join(" → "));
        }
    }
}

#[test]
fn the_leaves_know_nothing_of_the_gate_the_proxy_or_the_app() {
    let graph = dependencies();
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

#[test]
fn no_outcome_is_compared_as_a_string() {
    let words = [
        "allowed",
        "throttled",
        "unlimited",
        "allowlisted",
        "denylisted",
        "invalid_token",
        "store_error",
        "store_unavailable",
        "timeout",
        "connect",
    ];
    for file in rust_files(&src()) {
        let text = std::fs::read_to_string(&file).unwrap();
        for word in words {
            for pattern in [format!("== \"{word}\""), format!("Some(\"{word}\")")] {
                assert!(
                    !text.contains(&pattern),
                    "{} compares an outcome as text: {pattern}",
                    file.display()
                );
            }
        }
    }
}
