//! `[challenge.privacy_pass]`: one issuer or several, and every bad value refused where it
//! stands (`file:line:column`).

use crate::config::parse;
use crate::config::tests::with_policy;
use crate::privacy_pass::directory::DirectoryUrl;
use crate::privacy_pass::test_issuer::TestIssuer;
use crate::privacy_pass::{
    DirectorySource, IssuerKey, IssuerSettings, KeySource, PrivacyPassSettings,
};
use std::path::Path;
use std::time::Duration;

/// A 1024-bit RSA key's SPKI (rsaEncryption).
const RSA_1024: &str =
    "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCWBDWoBHvx44g6lP_UYF75_rzTTuB5csPb0mP2\
AlBuOb9-lbCy-tgoRXo6rHNVegGcJbfJxLr37vOnl76ogz8dmj33l-aOdNc02kvxTN3ZhDfpQf9Dfj4jce0I5BfqKbxQFx\
YYtqoCEyqE-2OPRDin_q_RO7JeQGwjZFjS6PQaOQIDAQAB";

/// A P-256 key's SPKI (tests/fixtures/jwt/ec-public.pem).
const EC_P256: &str =
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqo1VoOxWTlriv65yr-gS_eSnC6tsvkKqJXxee87t\
1SkcldQlzViylDReWdmFZ1S1WAxt1r5nIfXrYPK7kPMCVQ==";

/// The config with a challenging policy and `tables` after it; the privacy pass settings.
fn read(tables: &str) -> Result<Option<PrivacyPassSettings>, String> {
    parse(&text(tables), Path::new("f.toml"))
        .map(|c| c.challenge.privacy_pass)
        .map_err(|e| e.to_string())
}

fn text(tables: &str) -> String {
    let policy = with_policy("name = \"p\"\naction = \"challenge\"");
    format!("{policy}\n{tables}\n")
}

/// The line `[challenge.privacy_pass]` stands on in `read`'s text.
fn table_line() -> usize {
    let text = text("[challenge.privacy_pass]");
    let at = text.lines().position(|l| l == "[challenge.privacy_pass]");
    at.unwrap() + 1
}

fn one(keys: &str) -> Result<Option<PrivacyPassSettings>, String> {
    read(&format!("[challenge.privacy_pass]\n{keys}"))
}

fn a_key() -> String {
    TestIssuer::a().token_key()
}

#[test]
fn no_table_no_tokens() {
    assert_eq!(read(""), Ok(None));
    assert_eq!(read("[challenge]\nstatus = 403"), Ok(None));
}

#[test]
fn one_issuer_with_its_key() {
    let settings = one(&format!(
        "issuer = \"issuer.example\"\ntoken_key = \"{}\"",
        a_key()
    ));
    let expected = IssuerSettings {
        issuer: "issuer.example".into(),
        keys: KeySource::TokenKey(IssuerKey::from_token_key(&a_key()).unwrap()),
        origins: None,
    };
    let issuers = settings.unwrap().unwrap().issuers;
    assert_eq!(issuers, [expected]);
}

#[test]
fn several_issuers_with_directories_and_origins() {
    let tables = format!(
        "[[challenge.privacy_pass]]\nissuer = \"a\"\ntoken_key = \"{}\"\norigins = [\"Example.COM\", \"shop.example:8443\"]\n\
         [[challenge.privacy_pass]]\nissuer = \"b\"\ndirectory = \"https://b.example/.well-known/private-token-issuer-directory\"\norigins = []\n\
         [[challenge.privacy_pass]]\nissuer = \"c\"\ndirectory = \"http://127.0.0.1:8080/d\"",
        a_key()
    );
    let issuers = read(&tables).unwrap().unwrap().issuers;
    let names: Vec<&str> = issuers.iter().map(|i| i.issuer.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(
        issuers[0].origins.as_deref(),
        Some(&["example.com".to_owned(), "shop.example:8443".to_owned()][..])
    );
    assert_eq!(issuers[1].origins, Some(vec![]));
    let loopback = DirectoryUrl::parse("http://127.0.0.1:8080/d").unwrap();
    let source = DirectorySource::new(loopback);
    assert_eq!(issuers[2].keys, KeySource::Directory(source));
}

#[test]
fn a_directory_is_read_again_every_refresh_from_1s_to_24h() {
    let directory = "issuer = \"i\"\ndirectory = \"https://i.example/d\"";
    let refresh = |every: &str| {
        let settings = one(&format!("{directory}\nrefresh = \"{every}\""))?;
        let issuers = settings.map(|s| s.issuers).unwrap_or_default();
        Ok::<_, String>(issuers[0].directory().map(|d| d.refresh))
    };
    assert_eq!(refresh("1s"), Ok(Some(Duration::from_secs(1))));
    assert_eq!(refresh("24h"), Ok(Some(Duration::from_secs(24 * 3600))));
    let default = one(directory).unwrap().unwrap().issuers;
    let hour = Some(Duration::from_secs(3600));
    assert_eq!(default[0].directory().map(|d| d.refresh), hour);
    let line = table_line() + 3;
    for every in ["999ms", "25h"] {
        let expected =
            format!("f.toml:{line}:11: `challenge.privacy_pass.refresh` must be from 1s to 24h");
        assert_eq!(refresh(every), Err(expected), "{every}");
    }
    let error = refresh("soon").unwrap_err();
    assert!(
        error.contains("must be a duration like 500ms or 30s"),
        "{error}"
    );
    let keyed = one(&format!(
        "issuer = \"i\"\ntoken_key = \"{}\"\nrefresh = \"1m\"",
        a_key()
    ));
    let expected = format!(
        "f.toml:{line}:11: `challenge.privacy_pass.refresh` is for a `directory`: a \
         `token_key` is never read again"
    );
    assert_eq!(keyed, Err(expected));
}

#[test]
fn bad_keys_are_refused_where_they_stand() {
    let line = table_line() + 2;
    let cases = [
        (
            RSA_1024,
            "a 1024-bit RSA key, where token type 2 needs 2048 bits",
        ),
        (
            EC_P256,
            "not an RSASSA-PSS key (algorithm 1.2.840.10045.2.1)",
        ),
        ("not base64!", "not base64url text"),
        ("AAAA", "not a DER SubjectPublicKeyInfo"),
    ];
    for (key, expected) in cases {
        let error = one(&format!("issuer = \"i\"\ntoken_key = \"{key}\"")).unwrap_err();
        assert!(
            error.starts_with(&format!("f.toml:{line}:13: `challenge.privacy_pass.token_key` must be an RSA 2048 RSASSA-PSS key")),
            "{error}"
        );
        assert!(error.ends_with(expected), "{error}");
    }
}

#[test]
fn an_issuer_name_over_255_bytes_is_refused() {
    let long = "i".repeat(256);
    let error = one(&format!("issuer = \"{long}\"\ntoken_key = \"{}\"", a_key())).unwrap_err();
    let expected = format!(
        "f.toml:{}:10: `challenge.privacy_pass.issuer` must have 1 to 255 bytes, not 256",
        table_line() + 1
    );
    assert_eq!(error, expected);
    let fits = one(&format!(
        "issuer = \"{}\"\ntoken_key = \"{}\"",
        &long[1..],
        a_key()
    ));
    assert!(fits.is_ok(), "{fits:?}");
    assert!(one(&format!("issuer = \"\"\ntoken_key = \"{}\"", a_key())).is_err());
}

#[test]
fn a_directory_that_is_not_https_is_refused_loopback_http_is_not() {
    let line = table_line() + 2;
    for url in [
        "http://issuer.example/d",
        "http://10.0.0.1/d",
        "ftp://127.0.0.1/d",
    ] {
        let error = one(&format!("issuer = \"i\"\ndirectory = \"{url}\"")).unwrap_err();
        let expected = format!(
            "f.toml:{line}:13: `challenge.privacy_pass.directory` must be https (or http on a \
             loopback address such as 127.0.0.1), not \"{url}\""
        );
        assert_eq!(error, expected);
    }
    for url in [
        "http://[::1]:9/d",
        "http://localhost/d",
        "https://issuer.example/d",
    ] {
        assert!(
            one(&format!("issuer = \"i\"\ndirectory = \"{url}\"")).is_ok(),
            "{url}"
        );
    }
    let error = one("issuer = \"i\"\ndirectory = \"issuer.example\"").unwrap_err();
    assert!(
        error.ends_with("is not a URL: \"issuer.example\""),
        "{error}"
    );
}

#[test]
fn both_or_neither_key_nor_directory_is_refused() {
    let both = format!(
        "issuer = \"i\"\ntoken_key = \"{}\"\ndirectory = \"https://i.example/d\"",
        a_key()
    );
    let expected = format!(
        "f.toml:{}:13: `challenge.privacy_pass` takes `token_key` or `directory`, not both",
        table_line() + 3
    );
    assert_eq!(one(&both).unwrap_err(), expected);
    let expected = format!(
        "f.toml:{}:10: `challenge.privacy_pass` needs the issuer's key (`token_key`) or its \
         directory's URL (`directory`)",
        table_line() + 1
    );
    assert_eq!(one("issuer = \"i\"").unwrap_err(), expected);
}

#[test]
fn unknown_keys_bad_origins_and_twice_named_issuers_are_refused() {
    let error = one("issuer = \"i\"\nissuers_key = 1").unwrap_err();
    assert!(
        error.starts_with(&format!(
            "f.toml:{}:1: unknown field `issuers_key`",
            table_line() + 2
        )),
        "{error}"
    );
    assert!(
        error.contains("`token_key`") && error.contains("`origins`"),
        "{error}"
    );
    let error = one("issuer = \"i\"\ndirectory = \"https://i.example/d\"\norigins = [\"a,b\"]");
    let error = error.unwrap_err();
    assert!(
        error.contains(
            "`challenge.privacy_pass.origins` takes host names like `example.com`, not `a,b`"
        ),
        "{error}"
    );
    let twice = format!(
        "[[challenge.privacy_pass]]\nissuer = \"i\"\ntoken_key = \"{k}\"\n[[challenge.privacy_pass]]\nissuer = \"i\"\ntoken_key = \"{k}\"",
        k = a_key()
    );
    let error = read(&twice).unwrap_err();
    assert!(error.ends_with("issuer `i` is named twice"), "{error}");
    let many: Vec<String> = (0..300).map(|i| format!("\"{i:0>250}\"")).collect();
    let error = one(&format!(
        "issuer = \"i\"\ndirectory = \"https://i.example/d\"\norigins = [{}]",
        many.join(", ")
    ));
    let error = error.unwrap_err();
    assert!(
        error.contains("comes to 75299 bytes with its commas, over the 65535"),
        "{error}"
    );
    let error = read("[challenge]\nprivacy_pass = []").unwrap_err();
    assert!(
        error.ends_with("`challenge.privacy_pass` names no issuer"),
        "{error}"
    );
    let error = read("[challenge]\nprivacy_pass = 3").unwrap_err();
    assert!(
        error.contains("an issuer's table, or an array of them"),
        "{error}"
    );
}

#[test]
fn test_says_whose_tokens_answer_the_challenge() {
    let tables = format!(
        "[[challenge.privacy_pass]]\nissuer = \"a.example\"\ntoken_key = \"{}\"\norigins = [\"site.example\"]\n\
         [[challenge.privacy_pass]]\nissuer = \"b.example\"\ndirectory = \"https://b.example/d\"",
        a_key()
    );
    let config = parse(&text(&tables), Path::new("f.toml")).unwrap();
    let line = crate::config::challenge::ChallengeLine {
        settings: &config.challenge,
        refresh: false,
    }
    .to_string();
    let id: String = TestIssuer::a().key_id()[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let expected = format!(
        "privacy pass    tokens (type 2) of a.example (key {id}…, origins site.example); \
         b.example (keys from https://b.example/d, origins: the config's hosts) answer the challenge\n"
    );
    assert!(line.ends_with(&expected), "{line}");
}
