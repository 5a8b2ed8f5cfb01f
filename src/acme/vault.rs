//! Where the ACME state is kept: files in `tls.acme.state_dir` on the memory store (one
//! instance), Redis on the Redis store (the fleet). Both keep the account's credentials and
//! each domain's certificate and key; Redis also the lock and the validations under way.

use super::error::AcmeError;
use super::files::FileVault;
use super::fleet::FleetVault;
use super::kept::{Certificates, Kept, Lead, Written};

/// The state's home.
pub enum Vault {
    /// `tls.acme.state_dir`.
    Files(FileVault),
    /// The fleet's Redis.
    Fleet(Box<FleetVault>),
}

impl Vault {
    /// Takes or keeps the lock (files: always this instance).
    pub async fn lead(&self) -> Result<Lead, AcmeError> {
        match self {
            Self::Files(_) => Ok(Lead::Ordering),
            Self::Fleet(fleet) => fleet.lead().await,
        }
    }

    /// Gives the lock up (on shutdown).
    pub async fn resign(&self) {
        if let Self::Fleet(fleet) = self {
            fleet.resign().await;
        }
    }

    /// The account's credentials (JSON) at `directory`, if one was made.
    pub async fn account(&self, directory: &str) -> Result<Option<String>, AcmeError> {
        match self {
            Self::Files(files) => files.account(directory),
            Self::Fleet(fleet) => fleet.account(directory).await,
        }
    }

    /// Keeps the account's credentials at `directory`.
    pub async fn enrol(&self, directory: &str, credentials: &str) -> Result<Written, AcmeError> {
        match self {
            Self::Files(files) => files.enrol(directory, credentials).map(|()| Written::Kept),
            Self::Fleet(fleet) => fleet.enrol(directory, credentials).await,
        }
    }

    /// The certificates, unless none changed since `known` (0: none known).
    pub async fn certificates(&self, known: u64) -> Result<Certificates, AcmeError> {
        match self {
            Self::Files(files) => files.certificates(known),
            Self::Fleet(fleet) => fleet.certificates(known).await,
        }
    }

    /// Keeps `domain`'s certificate.
    pub async fn put(&self, domain: &str, kept: &Kept) -> Result<Written, AcmeError> {
        match self {
            Self::Files(files) => files.put(domain, kept).map(|()| Written::Kept),
            Self::Fleet(fleet) => fleet.put(domain, kept).await,
        }
    }

    /// The fleet's copy of the validations under way, when there is a fleet.
    pub fn fleet(&self) -> Option<&FleetVault> {
        match self {
            Self::Files(_) => None,
            Self::Fleet(fleet) => Some(fleet),
        }
    }
}
