//! Networks and countries: the ASN and country of a client address, from MaxMind DB files
//! (`[geo] asn_db`, `country_db`; GeoLite2, DB-IP lite and IPinfo lite all read). Files are
//! read whole when the config is loaded, at start and on each reload; an address no network
//! of a database holds has no ASN or country.

mod database;
mod error;
mod record;

pub use error::{GeoError, GeoKind};

use crate::identity::Country;
use database::Database;
use record::{AsnRecord, CountryRecord};
use std::net::IpAddr;
use std::path::PathBuf;

/// Which databases to read (`[geo]`); paths as written in the config.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GeoSettings {
    /// The ASN database (`asn_db`).
    pub asn_db: Option<PathBuf>,
    /// The country database (`country_db`).
    pub country_db: Option<PathBuf>,
}

/// The opened databases, held in memory; shared by reference (`Arc<Geo>`), read by any
/// number of threads at once. `Geo::default()` has none and knows nothing.
#[derive(Debug, Default)]
pub struct Geo {
    asn: Option<Database>,
    country: Option<Database>,
}

impl Geo {
    /// Reads each configured database whole and checks it is the kind it is given as.
    pub fn open(settings: &GeoSettings) -> Result<Geo, GeoError> {
        let open = |path: &Option<PathBuf>, kind| {
            path.as_deref()
                .map(|path| Database::open(path, kind))
                .transpose()
        };
        Ok(Geo {
            asn: open(&settings.asn_db, GeoKind::Asn)?,
            country: open(&settings.country_db, GeoKind::Country)?,
        })
    }

    /// Whether neither database is configured.
    pub fn is_empty(&self) -> bool {
        self.asn.is_none() && self.country.is_none()
    }

    /// The autonomous system announcing `ip`'s network (an IPv4-mapped IPv6 address is
    /// looked up as IPv4).
    pub fn asn(&self, ip: IpAddr) -> Option<u32> {
        let record: AsnRecord = self.asn.as_ref()?.lookup(ip.to_canonical())?;
        record.number()
    }

    /// `ip`'s country (an IPv4-mapped IPv6 address is looked up as IPv4).
    pub fn country(&self, ip: IpAddr) -> Option<Country> {
        let record: CountryRecord<'_> = self.country.as_ref()?.lookup(ip.to_canonical())?;
        record.country()
    }

    /// One line per database for `--test`: key, file, type, build date, size.
    pub fn describe(&self) -> Vec<String> {
        [(GeoKind::Asn, &self.asn), (GeoKind::Country, &self.country)]
            .into_iter()
            .filter_map(|(kind, db)| Some(format!("{} {}", kind.key(), db.as_ref()?.describe())))
            .collect()
    }
}
