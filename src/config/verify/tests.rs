//! Tests of `[identity.verify]`: each mistake located at its value, the defaults, the key list.

use crate::config::parse;
use crate::config::tests::BASE;
use crate::proof::{By, OnRefused, DEFAULT_KEEP, DEFAULT_REMEMBER};
use std::path::Path;

/// [`BASE`] with `sources = ["header:x-api-key", "cookie:session", "ip"]` and `section`
/// (whose first line is line 11).
fn config(section: &str) -> String {
    format!(
        "{BASE}\n[identity]\nsources = [\"header:x-api-key\", \"cookie:session\", \"ip\"]\n{section}\n"
    )
}

fn error_of(section: &str) -> String {
    parse(&config(section), Path::new("f.toml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn a_backend_proof_takes_the_defaults() {
    let text = config(
        "[identity.verify]\n\"header:x-api-key\" = { by = \"backend\", match = { path_prefix = \"/api/\" } }",
    );
    let config = parse(&text, Path::new("f.toml")).unwrap();
    let [verified] = config.verify.sources.as_slice() else {
        panic!("one source");
    };
    assert_eq!(verified.source.to_string(), "header:x-api-key");
    assert_eq!(verified.refused, OnRefused::Next);
    let By::Backend(backend) = &verified.by else {
        panic!("by the backend");
    };
    assert_eq!(backend.remember, DEFAULT_REMEMBER);
    assert_eq!(backend.keep, DEFAULT_KEEP);
    assert!(backend.proven_status.contains(200) && backend.proven_status.contains(204));
    assert!(backend.refused_status.contains(401) && !backend.refused_status.contains(403));
    let scope = backend.scope.as_ref().unwrap();
    assert_eq!(scope.route.path_prefix.as_deref(), Some("/api/"));
}

#[test]
fn each_mistake_is_located_at_its_value_and_names_its_key() {
    let cases = [
        (
            "[identity.verify]\n\"header:x-other\" = { by = \"backend\" }",
            "f.toml:12:20: `identity.verify.\"header:x-other\"`: `header:x-other` is in no identity chain",
        ),
        (
            "[identity.verify]\n\"header:x-api-key\" = { by = \"oracle\" }",
            "f.toml:12:29: unknown variant `oracle`, expected `backend` or `list`",
        ),
        (
            "[identity.verify]\n\"header:x-api-key\" = { by = \"backend\", proven_status = [200, 700] }",
            "f.toml:12:62: `identity.verify.\"header:x-api-key\".proven_status`: `700` is not a status from 100 to 599",
        ),
        (
            "[identity.verify]\n\"header:x-api-key\" = { by = \"backend\", proven_status = [\"2xx\"], refused_status = [\"200-401\"] }",
            "f.toml:12:82: `identity.verify.\"header:x-api-key\"`: `proven_status` (200-299) and `refused_status` (200-401) share a status",
        ),
        (
            "[identity.verify]\n\"header:x-api-key\" = { by = \"backend\", remember = \"0s\" }",
            "f.toml:12:51: `identity.verify.remember` must be above zero",
        ),
        (
            "[identity.verify]\n\"cookie:session\" = { by = \"list\", file = \"no-such-keys.txt\" }",
            "f.toml:12:42: `identity.verify.\"cookie:session\".file`: cannot read",
        ),
        (
            "[identity.verify]\n\"cookie:session\" = { by = \"list\" }",
            "f.toml:12:27: `identity.verify.\"cookie:session\"`: `by = \"list\"` needs `file`",
        ),
        (
            "[identity.verify]\n\"ip\" = { by = \"backend\" }",
            "f.toml:12:8: `identity.verify.\"ip\"`: only a `header:`, `cookie:` or `query:` source is verified",
        ),
    ];
    let errors: Vec<String> = cases.iter().map(|(section, _)| error_of(section)).collect();
    for ((section, message), error) in cases.iter().zip(&errors) {
        assert!(
            error.starts_with(message),
            "{section}\n{error}\n{errors:#?}"
        );
    }
}

#[test]
fn a_key_list_is_read_beside_the_config_and_must_be_private_when_it_holds_raw_keys() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys.txt");
    std::fs::write(&keys, "key-a\nsha256:zz\n").unwrap();
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o600)).unwrap();
    let path = dir.path().join("f.toml");
    let text =
        config("[identity.verify]\n\"cookie:session\" = { by = \"list\", file = \"keys.txt\" }");
    let error = parse(&text, &path).unwrap_err().to_string();
    assert!(
        error.contains("keys.txt:2: `sha256:` must be followed by 64 hex digits"),
        "{error}"
    );
    std::fs::write(&keys, "key-a\n").unwrap();
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o644)).unwrap();
    let error = parse(&text, &path).unwrap_err().to_string();
    assert!(
        error.contains("holds raw keys and others may read it (mode 644)"),
        "{error}"
    );
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o600)).unwrap();
    let config = parse(&text, &path).unwrap();
    let By::List(list) = &config.verify.sources[0].by else {
        panic!("by a list");
    };
    assert!(list.holds(b"key-a") && !list.holds(b"key-b"));
}
