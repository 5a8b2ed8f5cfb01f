//! `[geo]` → the opened ASN and country databases, an error located at the key whose file is
//! missing, corrupt or of the wrong kind.

use super::check::Checker;
use super::error::ConfigError;
use crate::bots::{Geo, GeoKind, GeoSettings};
use serde::Deserialize;
use std::sync::Arc;
use toml::Spanned;

/// `[geo]`: the ASN and country databases (MaxMind DB files).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GeoFile {
    pub(crate) asn_db: Option<Spanned<String>>,
    pub(crate) country_db: Option<Spanned<String>>,
}

/// The databases of the `[geo]` table (none when it is absent), read now.
pub(crate) fn geo(check: &Checker<'_>, file: Option<&GeoFile>) -> Result<Arc<Geo>, ConfigError> {
    let Some(file) = file else {
        return Ok(Arc::default());
    };
    let path =
        |key: &Option<toml::Spanned<String>>| key.as_ref().map(|p| check.resolve(p.get_ref()));
    let settings = GeoSettings {
        asn_db: path(&file.asn_db),
        country_db: path(&file.country_db),
    };
    Geo::open(&settings).map(Arc::new).map_err(|e| {
        let key = match e.kind() {
            GeoKind::Asn => &file.asn_db,
            GeoKind::Country => &file.country_db,
        };
        let message = format!("`geo.{}`: {e}", e.kind().key());
        match key {
            Some(value) => check.error(value, message),
            None => ConfigError::at(check.path, check.text, None, message),
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use std::path::Path;

    const BASE: &str =
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n";

    #[test]
    fn no_geo_table_is_no_databases() {
        let config = parse(BASE, Path::new("t.toml")).unwrap();
        assert!(config.geo.is_empty());
        let config = parse(&format!("{BASE}[geo]\n"), Path::new("t.toml")).unwrap();
        assert!(config.geo.is_empty());
    }

    #[test]
    fn a_missing_or_corrupt_database_is_refused_at_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let corrupt = dir.path().join("corrupt.mmdb");
        std::fs::write(&corrupt, b"\x00\x01 not a database at all \xff".repeat(100)).unwrap();
        let corrupt = corrupt.display();
        for (table, at, message) in [
            (
                "[geo]\nasn_db = \"/nonexistent/asn.mmdb\"\n".to_owned(),
                "t.toml:8:10:",
                "`geo.asn_db`: cannot read `/nonexistent/asn.mmdb`",
            ),
            (
                format!("[geo]\n\ncountry_db = \"{corrupt}\"\n"),
                "t.toml:9:14:",
                "is not a MaxMind DB file",
            ),
            (
                "[geo]\ncity_db = \"x\"\n".to_owned(),
                "t.toml:8:1:",
                "unknown field `city_db`",
            ),
        ] {
            let e = parse(&format!("{BASE}{table}"), Path::new("t.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(at) && e.contains(message), "{e}");
        }
    }
}
