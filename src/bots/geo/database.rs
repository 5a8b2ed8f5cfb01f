//! One MaxMind DB file, read into memory whole: a file replaced while Floodgate runs is seen
//! in full at the next reload, never half (no mmap).

use super::error::{GeoError, GeoKind};
use super::record::{AsnRecord, CountryRecord};
use maxminddb::{LookupResult, Reader, WithinOptions};
use serde::Deserialize;
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// How many networks with data are looked at when a file is opened to tell whether it is
/// the kind of database it was given as: real databases give the field in every record;
/// a few records without it (a network with only a continent) must not fail the file.
const KIND_SAMPLE: usize = 64;

/// An opened database.
pub(super) struct Database {
    path: PathBuf,
    reader: Reader<Vec<u8>>,
}

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Database")
            .field("path", &self.path)
            .field("database_type", &self.reader.metadata().database_type)
            .finish_non_exhaustive()
    }
}

impl Database {
    /// Reads `path` whole and checks it is a MaxMind DB file that gives what `kind` needs.
    pub(super) fn open(path: &Path, kind: GeoKind) -> Result<Self, GeoError> {
        let bytes = std::fs::read(path).map_err(|source| GeoError::Read {
            kind,
            path: path.to_owned(),
            source,
        })?;
        let reader = Reader::from_source(bytes).map_err(|source| GeoError::Format {
            kind,
            path: path.to_owned(),
            source,
        })?;
        let database = Self {
            path: path.to_owned(),
            reader,
        };
        database.check_kind(kind)?;
        Ok(database)
    }

    /// Refuses a database none of whose first networks gives what `kind` needs; an empty
    /// database passes (nothing to tell by, and every lookup yields nothing).
    fn check_kind(&self, kind: GeoKind) -> Result<(), GeoError> {
        let Ok(networks) = self.reader.networks(WithinOptions::default()) else {
            return Ok(());
        };
        let mut checked = 0;
        for network in networks.take(KIND_SAMPLE) {
            checked += 1;
            if network.is_ok_and(|found| gives(kind, &found)) {
                return Ok(());
            }
        }
        if checked == 0 {
            return Ok(());
        }
        Err(GeoError::WrongKind {
            kind,
            path: self.path.clone(),
            database_type: self.reader.metadata().database_type.clone(),
            checked,
        })
    }

    /// The record of the network holding `ip`, decoded as `T`; `None` when no network holds
    /// it, the database has no such family (IPv6 in an IPv4 file) or the record is unreadable.
    pub(super) fn lookup<'a, T: Deserialize<'a>>(&'a self, ip: IpAddr) -> Option<T> {
        self.reader.lookup(ip).ok()?.decode().ok()?
    }

    /// One line for `--test`: the file, its type, build date, size and families.
    pub(super) fn describe(&self) -> String {
        let meta = self.reader.metadata();
        let built = i64::try_from(meta.build_epoch)
            .ok()
            .and_then(|s| jiff::Timestamp::from_second(s).ok())
            .map_or_else(
                || "at an unreadable date".to_owned(),
                |t| t.strftime("%Y-%m-%d").to_string(),
            );
        let families = match meta.ip_version {
            6 => "IPv4 and IPv6",
            _ => "IPv4 only",
        };
        format!(
            "{}: {} built {built}, {} nodes, {families}",
            self.path.display(),
            meta.database_type,
            meta.node_count
        )
    }
}

/// Whether `found` gives what a database of `kind` is for.
fn gives(kind: GeoKind, found: &LookupResult<'_, Vec<u8>>) -> bool {
    match kind {
        GeoKind::Asn => found
            .decode::<AsnRecord>()
            .ok()
            .flatten()
            .and_then(|r| r.number())
            .is_some(),
        GeoKind::Country => found
            .decode::<CountryRecord<'_>>()
            .ok()
            .flatten()
            .and_then(|r| r.country())
            .is_some(),
    }
}
