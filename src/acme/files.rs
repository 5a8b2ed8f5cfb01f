//! The ACME state in `tls.acme.state_dir`, for one instance on the memory store: the account
//! as `account-<hash of the directory URL>.json`, each domain's chain and key as
//! `<domain>.crt` and `<domain>.key`. Every file is written 0600 beside itself and renamed
//! into place, so a crash never leaves half a key.

use super::error::{AcmeError, Step};
use super::kept::{Certificates, Kept};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The state directory.
pub struct FileVault {
    dir: PathBuf,
}

impl FileVault {
    /// The state in `dir`, made (0700) if missing.
    pub fn new(dir: &Path) -> Result<Self, AcmeError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| store_error(dir, e))?;
        Ok(Self {
            dir: dir.to_owned(),
        })
    }

    pub(super) fn account(&self, directory: &str) -> Result<Option<String>, AcmeError> {
        read_if_there(&self.account_file(directory))
    }

    pub(super) fn enrol(&self, directory: &str, credentials: &str) -> Result<(), AcmeError> {
        write_private(&self.account_file(directory), credentials)
    }

    /// Every certificate in the directory, when none is known yet (nothing else writes here).
    pub(super) fn certificates(&self, known: u64) -> Result<Certificates, AcmeError> {
        if known != 0 {
            return Ok(Certificates::Unchanged);
        }
        let entries = std::fs::read_dir(&self.dir).map_err(|e| store_error(&self.dir, e))?;
        let mut kept = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(domain) = name.strip_suffix(".crt") else {
                continue;
            };
            let chain = read_if_there(&entry.path())?;
            let key = read_if_there(&self.dir.join(format!("{domain}.key")))?;
            if let (Some(chain), Some(key)) = (chain, key) {
                kept.push((domain.to_owned(), Kept { chain, key }));
            }
        }
        Ok(Certificates::All { version: 1, kept })
    }

    pub(super) fn put(&self, domain: &str, kept: &Kept) -> Result<(), AcmeError> {
        // The key first: a chain is only read with its key beside it.
        write_private(&self.dir.join(format!("{domain}.key")), &kept.key)?;
        write_private(&self.dir.join(format!("{domain}.crt")), &kept.chain)
    }

    fn account_file(&self, directory: &str) -> PathBuf {
        let hash = blake3::hash(directory.as_bytes()).to_hex();
        self.dir.join(format!("account-{}.json", &hash[..16]))
    }
}

fn store_error(path: &Path, e: std::io::Error) -> AcmeError {
    AcmeError::at(Step::Store, format!("{}: {e}", path.display()))
}

fn read_if_there(path: &Path) -> Result<Option<String>, AcmeError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(store_error(path, e)),
    }
}

/// Writes `text` to `path` (0600) through a file beside it renamed into place.
fn write_private(path: &Path, text: &str) -> Result<(), AcmeError> {
    let aside = path.with_extension("tmp");
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&aside)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&aside, path)
    };
    write().map_err(|e| store_error(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn keeps_the_account_and_certificates_in_private_files() {
        let dir = std::env::temp_dir().join(format!("fg-acme-files-{}", std::process::id()));
        let vault = FileVault::new(&dir).unwrap();
        assert_eq!(vault.account("https://ca/dir").unwrap(), None);
        vault.enrol("https://ca/dir", "{\"id\":1}").unwrap();
        assert_eq!(
            vault.account("https://ca/dir").unwrap().as_deref(),
            Some("{\"id\":1}")
        );
        let kept = Kept {
            chain: "CHAIN".into(),
            key: "KEY".into(),
        };
        vault.put("shop.example", &kept).unwrap();
        let Certificates::All { kept: all, .. } = vault.certificates(0).unwrap() else {
            panic!("the first read reads everything");
        };
        assert_eq!(all, vec![("shop.example".to_owned(), kept)]);
        assert_eq!(vault.certificates(1).unwrap(), Certificates::Unchanged);
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let mode = entry.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{:?}", entry.path());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
