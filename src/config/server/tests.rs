//! Tests of `[server]`: listeners, timeouts and connection limits, read and refused.

use crate::config::parse;
use std::path::Path;

fn load(server: &str) -> Result<crate::config::Config, crate::config::ConfigError> {
    let text = format!(
        "[server]\nlisten = \"127.0.0.1:8080\"\n{server}\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n"
    );
    parse(&text, Path::new("f.toml"))
}

#[test]
fn the_pid_file_and_socket_default_to_the_configs_own_and_are_relative_to_it() {
    let server = load("").unwrap().server;
    let hashed = server.pid_file.file_name().unwrap().to_str().unwrap();
    assert!(hashed.starts_with("floodgate-") && hashed.ends_with(".pid"));
    assert_eq!(
        server.upgrade_sock,
        server.pid_file.with_extension("sock").display().to_string()
    );
    let text = "[server]\nlisten = \"127.0.0.1:8080\"\nupgrade_sock = \"run/f.sock\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n";
    let server = parse(text, Path::new("/etc/floodgate/f.toml"))
        .unwrap()
        .server;
    assert_eq!(server.upgrade_sock, "/etc/floodgate/run/f.sock");
    let text = "[server]\nlisten = \"127.0.0.1:8080\"\npid_file = \"run/f.pid\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n";
    let server = parse(text, Path::new("/etc/floodgate/f.toml"))
        .unwrap()
        .server;
    assert_eq!(server.pid_file, Path::new("/etc/floodgate/run/f.pid"));
    let server = load("pid_file = \"/run/floodgate/floodgate.pid\"")
        .unwrap()
        .server;
    assert_eq!(server.pid_file, Path::new("/run/floodgate/floodgate.pid"));
    for bad in ["", "/run/floodgate/"] {
        let e = load(&format!("pid_file = \"{bad}\""))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("f.toml:3:12: ") && e.contains("`server.pid_file` must name a file"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn front_keys_have_defaults_and_the_request_id_header_is_checked() {
    let server = load("").unwrap().server;
    assert!(!server.h2c && !server.front.via);
    assert_eq!(server.front.request_id_header, "x-request-id");
    let server = load("h2c = true\nvia = true\nrequest_id_header = \"X-Trace-Id\"")
        .unwrap()
        .server;
    assert!(server.h2c && server.front.via);
    assert_eq!(server.front.request_id_header, "x-trace-id");
    for bad in ["x trace", "", "host", "X-Forwarded-For", "ratelimit"] {
        let e = load(&format!("request_id_header = \"{bad}\"")).unwrap_err();
        assert!(
            e.to_string().contains("server.request_id_header"),
            "{bad}: {e}"
        );
    }
}
