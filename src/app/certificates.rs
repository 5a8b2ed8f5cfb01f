//! The TLS listener's certificates: the files (`server.tls_cert_file`) and, with `[tls.acme]`,
//! the ACME client that orders the rest, its state kept in Redis for the fleet (keys sealed
//! with a key derived from the fleet's identity key) or in `tls.acme.state_dir`.

use super::{BuildError, Stores};
use crate::acme::{AcmeManager, FileVault, FleetVault, Vault};
use crate::config::Config;
use crate::limiter::StoreSettings;
use crate::tls::{Certified, ServedCertificates, TlsFront, Validations};
use std::sync::Arc;

/// What the TLS listener serves, and what keeps it.
pub(super) struct Certificates {
    /// The served set; `None` without a TLS listener.
    pub(super) served: Option<Arc<ServedCertificates>>,
    /// The ACME client, when `[tls.acme]` is configured (its service is added by `build`).
    pub(super) acme: Option<Arc<AcmeManager>>,
}

impl Certificates {
    /// The certificates of `config`, the file one read now.
    pub(super) fn new(config: &Config, stores: &Stores, id: &str) -> Result<Self, BuildError> {
        let Some(tls) = &config.server.tls else {
            return Ok(Self {
                served: None,
                acme: None,
            });
        };
        let served = Arc::new(ServedCertificates::default());
        if let Some(files) = &tls.files {
            let file = Certified::from_files(&files.cert_file, &files.key_file)
                .map_err(|e| BuildError::Tls(e.to_string()))?;
            served.set_file(Some(file));
        }
        let acme = match &config.acme {
            Some(settings) => {
                let vault = vault(config, stores, id)?;
                let metrics = stores.metrics.certificates.clone();
                let manager = AcmeManager::new(
                    settings.clone(),
                    served.clone(),
                    vault,
                    metrics,
                    stores.clock.clone(),
                );
                Some(Arc::new(manager))
            }
            None => None,
        };
        stores.metrics.certificates.set_expiries(&served.expiries());
        Ok(Self {
            served: Some(served),
            acme,
        })
    }

    /// The ACME client, when there is one.
    pub(super) fn manager(&self) -> Option<Arc<AcmeManager>> {
        self.acme.clone()
    }

    /// The TLS side of the proxy's listener.
    pub(super) fn front(&self, config: &Config) -> Result<Option<TlsFront>, BuildError> {
        let (Some(tls), Some(served)) = (&config.server.tls, &self.served) else {
            return Ok(None);
        };
        let validations = self.manager().map(|m| m.answers() as Arc<dyn Validations>);
        TlsFront::new(served.clone(), tls.h2, tls.ja4, validations)
            .map(Some)
            .map_err(|e| BuildError::Tls(e.to_string()))
    }
}

/// Where the ACME state is kept: the fleet's Redis, or the state directory.
fn vault(config: &Config, stores: &Stores, id: &str) -> Result<Arc<Vault>, BuildError> {
    let vault = match (&stores.redis, &config.store) {
        (Some(redis), StoreSettings::Redis(_)) => {
            let key = stores
                .digest_key
                .derive("floodgate acme state sealing key v1");
            Vault::Fleet(Box::new(FleetVault::new(redis.clone(), id.to_owned(), key)))
        }
        _ => {
            let dir = config.acme.as_ref().and_then(|a| a.state_dir.as_deref());
            let dir = dir.ok_or_else(|| BuildError::Tls("tls.acme.state_dir is not set".into()))?;
            Vault::Files(FileVault::new(dir).map_err(|e| BuildError::Tls(e.to_string()))?)
        }
    };
    Ok(Arc::new(vault))
}
