//! Issue #61: every path in a config is read relative to the config file's directory, from any
//! working directory; an absolute path is read as it is.

use crate::common::certs::make_certificates;
use std::path::Path;
use std::process::{Command, Output};

/// `floodgate --config CONFIG --test` run in `cwd`.
fn test_in(cwd: &Path, config: &Path) -> Output {
    Command::new(crate::common::floodgate_bin())
        .current_dir(cwd)
        .arg("--config")
        .arg(config)
        .arg("--test")
        .output()
        .expect("run floodgate --test")
}

#[test]
fn relative_token_jwt_and_tls_paths_are_read_beside_the_config_from_any_directory() {
    let top = tempfile::tempdir().unwrap();
    let conf = top.path().join("conf");
    std::fs::create_dir(&conf).unwrap();
    make_certificates(&conf);
    let jwt = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jwt/rsa-public.pem");
    std::fs::copy(jwt, conf.join("jwt.pem")).unwrap();
    let tokens = conf.join("tokens");
    std::fs::write(&tokens, "ops:0123456789abcdef0123\n").unwrap();
    std::fs::set_permissions(&tokens, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let config = conf.join("floodgate.toml");
    std::fs::write(
        &config,
        "[server]\nlisten = \"127.0.0.1:8080\"\ntls_listen = \"127.0.0.1:8443\"\n\
         tls_cert_file = \"server.pem\"\ntls_key_file = \"server.key\"\n\n\
         [admin]\ntoken_file = \"tokens\"\n\n\
         [upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n\
         [identity]\nsources = [\"jwt:sub\", \"ip\"]\n\n\
         [identity.jwt]\nalgorithms = [\"RS256\"]\npublic_key_file = \"jwt.pem\"\n",
    )
    .unwrap();
    // From the root, with the config's absolute path; from the top, with a relative one.
    for (cwd, path) in [
        (Path::new("/"), config.clone()),
        (top.path(), Path::new("conf/floodgate.toml").to_owned()),
    ] {
        let out = test_in(cwd, &path);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stderr}", cwd.display());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("server.pem"), "{stdout}");
    }
    // A file beside the working directory but not beside the config is not read, and the
    // error names where it was looked for.
    std::fs::rename(&tokens, top.path().join("tokens")).unwrap();
    let out = test_in(top.path(), Path::new("conf/floodgate.toml"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("conf/floodgate.toml:8:14: `admin.token_file`: cannot read `conf/tokens`"),
        "{stderr}"
    );
}
