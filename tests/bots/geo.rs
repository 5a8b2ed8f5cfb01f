//! Networks and countries (`[geo]`): MaxMind DB files written by the tests in GeoLite2 and
//! IPinfo lite shapes, looked up through `floodgate::bots::Geo`, and the real binary's
//! `--test` on good, missing and corrupt files, and a reload refusing a corrupted file.

use crate::common;

use common::geo::{write_asn_db, write_country_db, write_ipinfo_lite_db, write_mmdb};
use common::{Proxy, Upstream};
use floodgate::bots::{Geo, GeoError, GeoKind, GeoSettings};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn open(asn_db: Option<&Path>, country_db: Option<&Path>) -> Result<Geo, GeoError> {
    Geo::open(&GeoSettings {
        asn_db: asn_db.map(Path::to_owned),
        country_db: country_db.map(Path::to_owned),
    })
}

/// The networks every test database holds.
const ASNS: &[(&str, u32)] = &[
    ("127.0.0.0/24", 64500),
    ("127.0.1.0/24", 64501),
    ("::1/128", 64502),
    ("2001:db8::/32", 64503),
];
const COUNTRIES: &[(&str, &str)] = &[
    ("127.0.0.0/24", "NL"),
    ("127.0.2.0/24", "US"),
    ("2001:db8::/32", "DE"),
];

#[test]
fn geolite2_shaped_databases_give_asns_and_countries_and_nothing_for_other_addresses() {
    let dir = tempfile::tempdir().unwrap();
    let asn_db = write_asn_db(dir.path(), ASNS);
    let country_db = write_country_db(dir.path(), COUNTRIES);
    let geo = open(Some(&asn_db), Some(&country_db)).unwrap();
    assert!(!geo.is_empty());
    assert_eq!(geo.asn(ip("127.0.0.1")), Some(64500));
    assert_eq!(geo.asn(ip("127.0.0.255")), Some(64500));
    assert_eq!(geo.asn(ip("127.0.1.7")), Some(64501));
    assert_eq!(geo.asn(ip("127.0.2.1")), None);
    assert_eq!(geo.asn(ip("10.0.0.1")), None);
    assert_eq!(geo.asn(ip("::1")), Some(64502));
    assert_eq!(geo.asn(ip("2001:db8:1::5")), Some(64503));
    assert_eq!(geo.asn(ip("2001:db9::1")), None);
    // An IPv4-mapped IPv6 address (a dual-stack listener's view of an IPv4 peer) is the
    // IPv4 address.
    assert_eq!(geo.asn(ip("::ffff:127.0.1.9")), Some(64501));
    assert_eq!(geo.country(ip("::ffff:127.0.0.9")).unwrap().as_str(), "NL");
    assert_eq!(geo.country(ip("127.0.0.1")).unwrap().as_str(), "NL");
    assert_eq!(geo.country(ip("127.0.2.200")).unwrap().as_str(), "US");
    assert_eq!(geo.country(ip("2001:db8::1")).unwrap().as_str(), "DE");
    assert_eq!(geo.country(ip("127.0.1.1")), None);
    assert_eq!(geo.country(ip("::1")), None);
}

#[test]
fn an_ipinfo_lite_database_serves_as_both_asn_and_country_database() {
    let dir = tempfile::tempdir().unwrap();
    let lite = write_ipinfo_lite_db(
        dir.path(),
        &[
            ("127.0.3.0/24", 13335, "US"),
            ("2001:db8::/48", 64510, "NL"),
        ],
    );
    let geo = open(Some(&lite), Some(&lite)).unwrap();
    assert_eq!(geo.asn(ip("127.0.3.1")), Some(13335));
    assert_eq!(geo.country(ip("127.0.3.1")).unwrap().as_str(), "US");
    assert_eq!(geo.asn(ip("2001:db8::9")), Some(64510));
    assert_eq!(geo.country(ip("2001:db8::9")).unwrap().as_str(), "NL");
    assert_eq!(geo.asn(ip("127.0.4.1")), None);
    assert_eq!(geo.country(ip("127.0.4.1")), None);
}

#[test]
fn no_databases_know_nothing_and_one_database_answers_only_its_own_question() {
    let geo = open(None, None).unwrap();
    assert!(geo.is_empty());
    assert!(geo.describe().is_empty());
    assert_eq!(geo.asn(ip("127.0.0.1")), None);
    let dir = tempfile::tempdir().unwrap();
    let geo = open(Some(&write_asn_db(dir.path(), ASNS)), None).unwrap();
    assert_eq!(geo.asn(ip("127.0.0.1")), Some(64500));
    assert_eq!(geo.country(ip("127.0.0.1")), None);
    let lines = geo.describe();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("asn_db ") && lines[0].contains("GeoLite2-ASN built"),
        "{lines:?}"
    );
}

#[test]
fn missing_corrupt_and_wrong_kind_files_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere.mmdb");
    let e = open(Some(&missing), None).unwrap_err();
    assert_eq!(e.kind(), GeoKind::Asn);
    assert!(
        e.to_string().contains("cannot read") && e.to_string().contains("nowhere.mmdb"),
        "{e}"
    );
    let corrupt = random_file(dir.path());
    let e = open(None, Some(&corrupt)).unwrap_err();
    assert_eq!(e.kind(), GeoKind::Country);
    assert!(e.to_string().contains("is not a MaxMind DB file"), "{e}");
    // A good file cut short loses its metadata, which sits at the end.
    let asn_db = write_asn_db(dir.path(), ASNS);
    let whole = std::fs::read(&asn_db).unwrap();
    let cut = dir.path().join("cut.mmdb");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    assert!(matches!(
        open(Some(&cut), None),
        Err(GeoError::Format { .. })
    ));
    // Each database given as the other.
    let country_db = write_country_db(dir.path(), COUNTRIES);
    let e = open(Some(&country_db), None).unwrap_err();
    assert!(
        matches!(
            e,
            GeoError::WrongKind {
                kind: GeoKind::Asn,
                ..
            }
        ),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.contains("GeoLite2-Country") && text.contains("gives no ASN"),
        "{e}"
    );
    let e = open(None, Some(&asn_db)).unwrap_err();
    assert!(
        matches!(
            e,
            GeoError::WrongKind {
                kind: GeoKind::Country,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn an_empty_database_opens_and_knows_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write_mmdb(dir.path(), "empty.mmdb", "GeoLite2-ASN", &[]);
    let geo = open(Some(&empty), Some(&empty)).unwrap();
    assert_eq!(geo.asn(ip("127.0.0.1")), None);
    assert_eq!(geo.country(ip("::1")), None);
}

/// 64 KiB of bytes from a fixed-seed generator: no MaxMind DB metadata marker in it.
fn random_file(dir: &Path) -> PathBuf {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let bytes: Vec<u8> = (0..65536)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    let path = dir.join("random.mmdb");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `floodgate --config F --test` on a config whose `[geo]` table is `geo`.
fn check(dir: &Path, geo: &str) -> (Output, PathBuf) {
    let path = dir.join("floodgate.toml");
    let text = format!(
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n{geo}"
    );
    std::fs::write(&path, text).unwrap();
    let out = Command::new(common::floodgate_bin())
        .arg("--config")
        .arg(&path)
        .arg("--test")
        .output()
        .expect("run floodgate --test");
    (out, path)
}

#[test]
fn the_binary_refuses_a_missing_or_corrupt_database_at_its_key_and_describes_good_ones() {
    let dir = tempfile::tempdir().unwrap();
    let asn_db = write_asn_db(dir.path(), ASNS);
    let country_db = write_country_db(dir.path(), COUNTRIES);
    let corrupt = random_file(dir.path());
    let missing = dir.path().join("missing.mmdb");
    for (geo, at, message) in [
        (
            format!("[geo]\nasn_db = \"{}\"\n", missing.display()),
            "8:10",
            "`geo.asn_db`: cannot read",
        ),
        (
            format!(
                "[geo]\nasn_db = \"{}\"\ncountry_db = \"{}\"\n",
                asn_db.display(),
                corrupt.display()
            ),
            "9:14",
            "`geo.country_db`:",
        ),
        (
            format!("[geo]\ncountry_db = \"{}\"\n", asn_db.display()),
            "8:14",
            "`geo.country_db`: ",
        ),
    ] {
        let (out, path) = check(dir.path(), &geo);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{geo}");
        let expected = format!("{}:{at}: {message}", path.display());
        assert!(stderr.starts_with(&expected), "{expected}\n{stderr}");
    }
    let geo = format!(
        "[geo]\nasn_db = \"{}\"\ncountry_db = \"{}\"\n",
        asn_db.display(),
        country_db.display()
    );
    let (out, _) = check(dir.path(), &geo);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        format!(
            "geo             asn_db {}: GeoLite2-ASN built ",
            asn_db.display()
        ),
        format!(
            "geo             country_db {}: GeoLite2-Country built ",
            country_db.display()
        ),
    ] {
        assert!(stdout.contains(&line), "{line}\n{stdout}");
    }
    // Issue 82 (geo.md said otherwise): a relative path is read beside the config file, not
    // in the working directory (the crate's, here, which holds no such file).
    let (out, _) = check(dir.path(), "[geo]\nasn_db = \"GeoLite2-ASN.mmdb\"\n");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = format!("asn_db {}: GeoLite2-ASN built ", asn_db.display());
    assert!(stdout.contains(&line), "{line}\n{stdout}");
}

#[test]
fn a_database_corrupted_while_running_is_refused_on_reload_and_the_old_config_serves() {
    let dir = tempfile::tempdir().unwrap();
    let asn_db = write_asn_db(dir.path(), ASNS);
    let upstream = Upstream::start();
    let table = format!("[geo]\nasn_db = \"{}\"\n", asn_db.display());
    let proxy = Proxy::start(&[&upstream.addr], &table);
    assert_eq!(proxy.get("/", &[]).status(), 200);
    // Overwritten in place, as a careless download would: the running copy is in memory.
    std::fs::copy(random_file(dir.path()), &asn_db).unwrap();
    proxy.reload("failure");
    let log = proxy.log();
    assert!(
        log.contains("`geo.asn_db`") && log.contains("is not a MaxMind DB file"),
        "{log}"
    );
    assert!(log.contains("refused; the running config stays"), "{log}");
    assert_eq!(proxy.get("/", &[]).status(), 200);
    // A good file put in its place (written aside, then renamed, as geoipupdate does) is
    // read on the next reload.
    let fresh = tempfile::tempdir_in(dir.path()).unwrap();
    let written = write_asn_db(fresh.path(), &[("127.0.0.0/8", 64999)]);
    std::fs::rename(written, &asn_db).unwrap();
    proxy.reload("success");
    assert_eq!(proxy.get("/", &[]).status(), 200);
}
