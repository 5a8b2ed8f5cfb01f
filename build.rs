//! Names the commit the binary is built from, for `floodgate --version`: `FLOODGATE_COMMIT`
//! when set (a Docker build has no `.git`), else `git rev-parse`, else `unknown`. And minifies
//! the challenge page's script (`src/challenge/assets/pow.js`, kept readable) into
//! `$OUT_DIR/pow.min.js`, the text every `pow` page ships and the CSP allows by its hash.

use std::path::Path;
use std::process::Command;

fn main() {
    minify_pow_script();
    println!("cargo:rerun-if-env-changed=FLOODGATE_COMMIT");
    let commit = std::env::var("FLOODGATE_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=FLOODGATE_COMMIT={commit}");
    // Build again when HEAD moves (a checkout, or a commit on the branch).
    for watched in [".git/HEAD", ".git/refs/heads", ".git/packed-refs"] {
        if Path::new(watched).exists() {
            println!("cargo:rerun-if-changed={watched}");
        }
    }
}

fn git_commit() -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()?;
    let commit = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !commit.is_empty()).then_some(commit)
}

/// Writes the challenge script, minified, where `src/challenge/page.rs` includes it from.
fn minify_pow_script() {
    const SOURCE: &str = "src/challenge/assets/pow.js";
    println!("cargo:rerun-if-changed={SOURCE}");
    let script = std::fs::read_to_string(SOURCE).expect("the challenge script is readable");
    let minified = minifier::js::minify(&script)
        .unwrap_or_else(|e| panic!("{SOURCE} does not minify: {e}"))
        .to_string();
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out).join("pow.min.js"), minified.trim())
        .expect("OUT_DIR is writable");
}
