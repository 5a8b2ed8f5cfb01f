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

#[test]
fn a_server_section_with_only_its_listener_gets_the_defaults() {
    let server = load("").unwrap().server;
    let expected = super::ServerSettings {
        listen: Some("127.0.0.1:8080".parse().unwrap()),
        ..super::ServerSettings::defaults_for(Path::new("f.toml"))
    };
    assert_eq!(server, expected);
}

#[test]
fn each_typed_value_is_located_at_itself_and_names_its_key() {
    let cases = [
        (
            "threads = 0",
            "f.toml:3:11: `server.threads` must be between 1 and 1024, not 0",
        ),
        (
            "grace_period = \"later\"",
            "f.toml:3:16: `server.grace_period` must be a duration like 500ms or 30s: expected \
             number at 0",
        ),
        (
            "tls_listen = \"443\"",
            "f.toml:3:14: `server.tls_listen` must be an address like 127.0.0.1:8080, not `443`",
        ),
        (
            "header_timeout = \"0s\"",
            "f.toml:3:18: `server.header_timeout` must be above zero",
        ),
        (
            "max_header_bytes = 100",
            "f.toml:3:20: `server.max_header_bytes` must be between 1024 and 1048575, not 100",
        ),
    ];
    for (keys, message) in cases {
        assert_eq!(load(keys).unwrap_err().to_string(), message, "{keys}");
    }
}
