//! Issue #61: `floodgate-demo-backend --help` answers at once, and a bad argument gets the
//! usage line and exit status 2 (it used to try to listen on it, panic, and hang).

use std::process::{Command, Output};

fn demo_backend(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_floodgate-demo-backend"))
        .args(args)
        .output()
        .expect("run floodgate-demo-backend")
}

#[test]
fn help_answers_and_a_bad_argument_gets_the_usage_and_exit_2() {
    let help = demo_backend(&["--help"]);
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).starts_with("usage: floodgate-demo-backend"));
    for bad in [
        &["--port"][..],
        &["not-an-address"],
        &["127.0.0.1:1", "extra"],
    ] {
        let out = demo_backend(bad);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {stderr}");
        assert!(stderr.contains("usage: floodgate-demo-backend"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
