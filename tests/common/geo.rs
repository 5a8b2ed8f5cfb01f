//! MaxMind DB files written for tests (`tests/fixtures/mmdb_write.py`, PyPI `mmdb-writer`),
//! in the shapes the vendors ship: GeoLite2-ASN, GeoLite2-Country and IPinfo lite.

use super::pytools;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Writes `dir/NAME` of `database_type` holding `records` (network → record), IPv6 with
/// IPv4 networks at `::/96`, and returns its path.
pub fn write_mmdb(
    dir: &Path,
    name: &str,
    database_type: &str,
    records: &[(&str, Value)],
) -> PathBuf {
    let path = dir.join(name);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mmdb_write.py");
    let spec = json!({"database_type": database_type, "ip_version": 6, "records": records});
    let mut child = Command::new(pytools::python())
        .arg(&script)
        .arg(&path)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the pytools python runs");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(spec.to_string().as_bytes())
        .expect("the spec is written");
    let out = child.wait_with_output().expect("mmdb_write.py ends");
    assert!(
        out.status.success(),
        "mmdb_write.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

/// `dir/GeoLite2-ASN.mmdb`: each network's `autonomous_system_number` (and an
/// organisation), as MaxMind's GeoLite2-ASN writes them.
pub fn write_asn_db(dir: &Path, networks: &[(&str, u32)]) -> PathBuf {
    let records: Vec<(&str, Value)> = networks
        .iter()
        .map(|&(net, asn)| {
            let record = json!({
                "autonomous_system_number": asn,
                "autonomous_system_organization": format!("Test network {asn}"),
            });
            (net, record)
        })
        .collect();
    write_mmdb(dir, "GeoLite2-ASN.mmdb", "GeoLite2-ASN", &records)
}

/// `dir/GeoLite2-Country.mmdb`: each network's `country.iso_code` (and
/// `registered_country`, `continent`), as MaxMind's GeoLite2-Country writes them.
pub fn write_country_db(dir: &Path, networks: &[(&str, &str)]) -> PathBuf {
    let records: Vec<(&str, Value)> = networks
        .iter()
        .map(|&(net, code)| {
            let place = json!({"geoname_id": 1, "iso_code": code, "names": {"en": code}});
            let record = json!({
                "continent": {"code": "EU", "geoname_id": 6255148, "names": {"en": "Europe"}},
                "country": place,
                "registered_country": place,
            });
            (net, record)
        })
        .collect();
    write_mmdb(dir, "GeoLite2-Country.mmdb", "GeoLite2-Country", &records)
}

/// `dir/ipinfo_lite.mmdb`: IPinfo lite's shape, ASN and country in one record (`asn` as
/// `"AS64500"`, `country_code`, `country` as a name).
pub fn write_ipinfo_lite_db(dir: &Path, networks: &[(&str, u32, &str)]) -> PathBuf {
    let records: Vec<(&str, Value)> = networks
        .iter()
        .map(|&(net, asn, code)| {
            let record = json!({
                "asn": format!("AS{asn}"),
                "as_name": format!("Test network {asn}"),
                "as_domain": "example.net",
                "country_code": code,
                "country": format!("Country {code}"),
                "continent_code": "EU",
                "continent": "Europe",
            });
            (net, record)
        })
        .collect();
    write_mmdb(dir, "ipinfo_lite.mmdb", "ipinfo ipinfo_lite.mmdb", &records)
}
