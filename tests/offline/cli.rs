//! The command line: `--test` on good and bad configs, the start's file checks it runs
//! (`cli/start_checks.rs`), paths relative to the config (`cli/paths.rs`), the demo backend's
//! arguments (`cli/demo_backend.rs`), and a quiet start (`cli/quiet.rs`).

use crate::common;

mod demo_backend;
mod paths;
mod quiet;
mod start_checks;

use std::process::Command;

fn check(path: &std::path::Path) -> std::process::Output {
    Command::new(common::floodgate_bin())
        .arg("--config")
        .arg(path)
        .arg("--test")
        .output()
        .expect("run floodgate --test")
}

#[test]
fn a_misspelled_key_is_named_with_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n\
         [[policy]]\nname = \"p\"\ncapacity = 10\nrat = \"10/s\"\n",
    )
    .unwrap();
    let out = check(&path);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let expected = format!("{}:10:1: unknown field `rat`", path.display());
    assert!(stderr.starts_with(&expected), "{stderr}");
}

#[test]
fn the_challenge_line_speaks_of_refresh_pages_only_when_a_policy_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("challenge.toml");
    let base =
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n\
                [[policy]]\nname = \"browsers\"\naction = \"challenge\"\n";
    let challenge_line = |config: &str| {
        std::fs::write(&path, config).unwrap();
        let out = check(&path);
        assert!(out.status.success(), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = stdout.lines().find(|l| l.starts_with("challenge "));
        line.expect("a challenge line").to_owned()
    };
    // Issue 72: a pow-only config said "refresh after 2s".
    let pow = challenge_line(base);
    assert!(!pow.contains("refresh"), "{pow}");
    let refresh = challenge_line(&format!("{base}challenge = \"refresh\"\n"));
    assert!(
        refresh.contains("(a refresh page reloads after 2s)"),
        "{refresh}"
    );
}

#[test]
fn a_missing_file_is_reported() {
    let out = check(std::path::Path::new("/nonexistent/floodgate.toml"));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/floodgate.toml"));
}

#[test]
fn every_shipped_config_is_valid() {
    let conf = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conf");
    let mut checked = 0;
    for entry in std::fs::read_dir(conf).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let out = check(&path);
            assert!(
                out.status.success(),
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(String::from_utf8_lossy(&out.stdout).contains("is valid"));
            checked += 1;
        }
    }
    assert!(checked >= 2, "quickstart.toml and example.toml at least");
}

#[test]
fn the_grafana_dashboard_queries_only_exported_series() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conf/grafana-dashboard.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let registry = floodgate::telemetry::Metrics::new();
    let names = registry.names();
    let panels = dashboard["panels"].as_array().unwrap();
    assert!(panels.len() >= 5);
    for target in panels.iter().flat_map(|p| p["targets"].as_array().unwrap()) {
        let expr = target["expr"].as_str().unwrap();
        let series = expr
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("floodgate_"));
        for name in series {
            let base = name.trim_end_matches("_bucket");
            assert!(names.iter().any(|n| n == base), "{name} is not exported");
        }
    }
}

#[test]
fn unless_is_described_and_its_bad_keys_located_like_matchs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unless.toml");
    let config = |unless: &str| {
        format!(
            "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n\
             [[policy]]\nname = \"anonymous\"\ncapacity = 10\nrate = \"1/s\"\nsources = [\"ip\"]\n\
             unless = {unless}\n"
        )
    };
    std::fs::write(&path, config("{ bot = [\"ai-crawler\"], verified = true }")).unwrap();
    let out = check(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("; unless bot ai-crawler verified"),
        "{stdout}"
    );
    for (unless, at, message) in [
        (
            "{ bots = [\"ai-crawler\"] }",
            "12:12",
            "unknown field `bots`",
        ),
        (
            "{ bot = [\"robots\"] }",
            "12:19",
            "`policy.unless.bot`: `robots`",
        ),
    ] {
        std::fs::write(&path, config(unless)).unwrap();
        let out = check(&path);
        assert!(!out.status.success(), "{unless} was accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let expected = format!("{}:{at}: {message}", path.display());
        assert!(stderr.starts_with(&expected), "{unless}: {stderr}");
    }
}

#[test]
fn absurd_rates_are_refused_with_a_location() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absurd.toml");
    for (rate, why) in [("1e-300/s", "ten years"), ("1e300/s", "at most 1e9")] {
        std::fs::write(
            &path,
            format!(
                "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n\
                 [[policy]]\nname = \"p\"\ncapacity = 10\nrate = \"{rate}\"\n"
            ),
        )
        .unwrap();
        let out = check(&path);
        assert!(!out.status.success(), "{rate} was accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let expected = format!("{}:10:8: ", path.display());
        assert!(stderr.starts_with(&expected), "{rate}: {stderr}");
        assert!(stderr.contains(why), "{rate}: {stderr}");
    }
}

#[test]
fn the_version_names_the_release_and_the_commit() {
    let out = Command::new(common::floodgate_bin())
        .arg("--version")
        .output()
        .expect("run floodgate --version");
    let text = String::from_utf8_lossy(&out.stdout);
    let expected = format!("floodgate {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(
        out.status.success() && text.starts_with(&expected),
        "{text}"
    );
    let commit = text
        .trim()
        .trim_start_matches(&expected)
        .trim_end_matches(')');
    let hex = commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit());
    assert!(hex || commit == "unknown", "{text}");
}
