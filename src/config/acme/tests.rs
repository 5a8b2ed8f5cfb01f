//! Tests of `[tls.acme]`: its defaults, and every bad or missing key refused where it stands.

use crate::acme::{ChallengeType, LETS_ENCRYPT};
use crate::config::parse;
use std::path::Path;

const SERVER: &str = "[server]\nlisten = \"127.0.0.1:8080\"\ntls_listen = \"127.0.0.1:8443\"\n\
                      [upstream]\nbackends = [\"127.0.0.1:8000\"]\n";

fn with_acme(acme: &str) -> String {
    format!("{SERVER}[tls.acme]\n{acme}\n")
}

fn error_of(text: &str) -> String {
    parse(text, Path::new("f.toml")).unwrap_err().to_string()
}

#[test]
fn a_listener_on_acme_alone_gets_the_defaults() {
    let text = with_acme(
        "email = \"ops@shop.example\"\ndomains = [\"Shop.Example\"]\nstate_dir = \"acme\"",
    );
    let config = parse(&text, Path::new("/etc/fg/f.toml")).unwrap();
    let acme = config.acme.unwrap();
    assert_eq!(acme.directory, LETS_ENCRYPT);
    assert_eq!(acme.domains, ["shop.example"]);
    assert_eq!(acme.challenge, ChallengeType::TlsAlpn01);
    assert_eq!(acme.renew_before, None);
    assert_eq!(acme.state_dir.unwrap(), Path::new("/etc/fg/acme"));
    assert!(config.server.tls.unwrap().files.is_none());
}

#[test]
fn each_mistake_is_located_and_named() {
    let cases = [
        ("email = \"a@b.example\"\ndomains = []\nstate_dir = \"s\"", "8:11: `tls.acme.domains` is empty"),
        ("email = \"nobody\"\ndomains = [\"a.example\"]\nstate_dir = \"s\"", "7:9: `tls.acme.email`: `nobody` is not an email address"),
        ("email = \"a@b.example\"\ndomains = [\"*.a.example\"]\nstate_dir = \"s\"", "is a wildcard"),
        ("email = \"a@b.example\"\ndomains = [\"a.example\", \"A.example\"]\nstate_dir = \"s\"", "listed twice"),
        ("email = \"a@b.example\"\ndomains = [\"a.example\"]", "`tls.acme.state_dir` is required on the memory store"),
        ("domains = [\"a.example\"]\nstate_dir = \"s\"", "`tls.acme.email` is required"),
        ("email = \"a@b.example\"\ndomains = [\"a.example\"]\nstate_dir = \"s\"\nchallenge = \"dns-01\"", "must be `tls-alpn-01` or `http-01`"),
        ("email = \"a@b.example\"\ndomains = [\"a.example\"]\nstate_dir = \"s\"\ndirectory = \"http://ca/dir\"", "must be an https:// URL"),
        ("email = \"a@b.example\"\ndomains = [\"a.example\"]\nstate_dir = \"s\"\neab_kid = \"k\"", "`tls.acme.eab_kid` and `eab_hmac_key_file` go together"),
        ("email = \"a@b.example\"\ndomains = [\"a.example\"]\nstate_dir = \"s\"\nrenew_before = \"soon\"", "`tls.acme.renew_before` must be a duration"),
    ];
    for (acme, expected) in cases {
        let error = error_of(&with_acme(acme));
        assert!(error.contains(expected), "{acme}: {error}");
        assert!(error.starts_with("f.toml:"), "located: {error}");
    }
}

#[test]
fn the_listeners_acme_needs() {
    let no_tls = "[server]\nlisten = \"127.0.0.1:8080\"\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\
                  [tls.acme]\nemail = \"a@b.example\"\ndomains = [\"a.example\"]\nstate_dir = \"s\"\n";
    assert!(error_of(no_tls).contains("`[tls.acme]` needs `server.tls_listen`"));
    let bare_tls = "[server]\nlisten = \"127.0.0.1:8080\"\ntls_listen = \"127.0.0.1:8443\"\n\
                    [upstream]\nbackends = [\"127.0.0.1:8000\"]\n";
    assert!(error_of(bare_tls).contains("`server.tls_listen` needs certificates"));
    let redis = format!(
        "{}[store]\nkind = \"redis\"\nurl = \"redis://127.0.0.1:6390\"\n",
        with_acme("email = \"a@b.example\"\ndomains = [\"a.example\"]\nstate_dir = \"s\"")
    );
    assert!(error_of(&redis).contains("`tls.acme.state_dir` is for the memory store"));
}
