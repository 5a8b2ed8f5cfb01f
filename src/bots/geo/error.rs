//! Why a database could not be opened, naming the file and which database it was meant to be.

use std::path::PathBuf;

/// Which of the two databases: `[geo] asn_db` or `country_db`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeoKind {
    /// `asn_db`: the autonomous system announcing each network.
    Asn,
    /// `country_db`: each network's country.
    Country,
}

impl GeoKind {
    /// The config key naming this database (`asn_db`).
    pub fn key(self) -> &'static str {
        match self {
            Self::Asn => "asn_db",
            Self::Country => "country_db",
        }
    }

    /// What a record of this database gives, and in which fields.
    fn yields(self) -> &'static str {
        match self {
            Self::Asn => "ASN (`autonomous_system_number` or `asn`)",
            Self::Country => "country (`country.iso_code`, `country_code`, …)",
        }
    }
}

/// Why a database could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum GeoError {
    /// The file could not be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        /// Which database.
        kind: GeoKind,
        /// The file.
        path: PathBuf,
        /// What reading it said.
        source: std::io::Error,
    },
    /// The file was read but is not a MaxMind DB file (corrupt, truncated, another format).
    #[error("`{}` is not a MaxMind DB file: {source}", path.display())]
    Format {
        /// Which database.
        kind: GeoKind,
        /// The file.
        path: PathBuf,
        /// What the reader said.
        source: maxminddb::MaxMindDbError,
    },
    /// The file is a MaxMind DB file, but its first networks give nothing this database is
    /// for (an ASN database given as `country_db`, or the reverse).
    #[error(
        "`{}` ({database_type}) gives no {} for any of its first {checked} networks: is it the wrong database?",
        path.display(),
        kind.yields()
    )]
    WrongKind {
        /// Which database.
        kind: GeoKind,
        /// The file.
        path: PathBuf,
        /// The file's own name for its kind (`GeoLite2-Country`).
        database_type: String,
        /// How many networks were looked at.
        checked: usize,
    },
}

impl GeoError {
    /// Which database the error is about.
    pub fn kind(&self) -> GeoKind {
        match self {
            Self::Read { kind, .. } | Self::Format { kind, .. } | Self::WrongKind { kind, .. } => {
                *kind
            }
        }
    }
}
