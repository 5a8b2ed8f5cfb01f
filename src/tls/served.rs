//! The certificates the TLS listener serves, chosen by the name a client asks for (SNI): a
//! name ACME manages gets its ACME certificate, and a managed name that has none yet gets a
//! refused handshake (an alert and a log line), never another name's certificate; any other
//! name, or none, gets the file certificate (`server.tls_cert_file`) when there is one. Each
//! set is swapped in whole: handshakes under way keep the one they started with, so a renewal
//! or a reload never drops a connection.

use super::Certified;
use arc_swap::ArcSwap;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What is served, as one value.
#[derive(Debug, Default, Clone)]
struct Set {
    file: Option<Certified>,
    managed: BTreeSet<String>,
    issued: BTreeMap<String, Certified>,
}

/// The served certificates, shared by the listener and what renews them.
#[derive(Debug, Default)]
pub struct ServedCertificates {
    set: ArcSwap<Set>,
    /// The second a missing certificate was last logged (at most one line a second).
    logged: AtomicU64,
}

impl ServedCertificates {
    /// Serves the file certificate `file` from now on (`None`: none).
    pub fn set_file(&self, file: Option<Certified>) {
        self.set.rcu(|set| Set {
            file: file.clone(),
            ..Set::clone(set)
        });
    }

    /// The names ACME manages from now on, lowercased; issued certificates of names no longer
    /// managed are dropped.
    pub fn set_managed(&self, names: &[String]) {
        let managed: BTreeSet<String> = names.iter().map(|n| n.to_ascii_lowercase()).collect();
        self.set.rcu(|set| {
            let mut issued = set.issued.clone();
            issued.retain(|name, _| managed.contains(name));
            Set {
                file: set.file.clone(),
                managed: managed.clone(),
                issued,
            }
        });
    }

    /// Serves `certified` for the managed `name` from now on.
    pub fn install(&self, name: &str, certified: Certified) {
        let name = name.to_ascii_lowercase();
        self.set.rcu(|set| {
            let mut set = Set::clone(set);
            if set.managed.contains(&name) {
                set.issued.insert(name.clone(), certified.clone());
            }
            set
        });
    }

    /// The certificate served for the managed `name`, if any.
    pub fn issued(&self, name: &str) -> Option<Certified> {
        self.set.load().issued.get(name).cloned()
    }

    /// Every served certificate's expiry (Unix seconds), by the name it is known by: each
    /// managed name, and the file certificate's first name (`file` when it has none).
    pub fn expiries(&self) -> Vec<(String, i64)> {
        let set = self.set.load();
        let issued = set.issued.iter().map(|(n, c)| (n.clone(), c.not_after));
        let file = set.file.iter().map(|c| {
            let name = c
                .names
                .first()
                .cloned()
                .unwrap_or_else(|| "file".to_owned());
            (name, c.not_after)
        });
        issued.chain(file).collect()
    }

    /// The certificate for a handshake asking for `name`.
    pub fn choose(&self, name: Option<&str>) -> Option<Arc<CertifiedKey>> {
        let set = self.set.load();
        let name = name.map(str::to_ascii_lowercase);
        if let Some(name) = &name {
            if let Some(certified) = set.issued.get(name) {
                return Some(certified.key.clone());
            }
            if set.managed.contains(name) {
                self.log_missing(name, "ACME has not issued it yet");
                return None;
            }
        }
        match &set.file {
            Some(file) => Some(file.key.clone()),
            None => {
                let asked = name.as_deref().unwrap_or("(no name sent)");
                self.log_missing(asked, "it is not among tls.acme.domains");
                None
            }
        }
    }

    /// Logs a refused handshake, at most once a second.
    fn log_missing(&self, name: &str, why: &str) {
        let now = crate::clock::monotonic_s();
        if self.logged.swap(now, Ordering::Relaxed) != now {
            log::warn!("TLS: no certificate for `{name}` ({why}): the handshake is refused");
        }
    }
}

impl ResolvesServerCert for ServedCertificates {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.choose(hello.server_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn certified(name: &str) -> Certified {
        let cert = rcgen::generate_simple_self_signed(vec![name.to_owned()]).unwrap();
        let (chain, key) = (cert.cert.pem(), cert.signing_key.serialize_pem());
        Certified::from_pem(chain.as_bytes(), key.as_bytes()).unwrap()
    }

    fn leaf(key: Option<Arc<CertifiedKey>>) -> Option<Vec<u8>> {
        key.map(|k| k.cert[0].as_ref().to_vec())
    }

    #[test]
    fn a_managed_name_gets_its_own_certificate_or_none() {
        let served = ServedCertificates::default();
        let file = certified("file.example");
        served.set_file(Some(file.clone()));
        served.set_managed(&["Shop.Example".to_owned()]);
        assert!(
            served.choose(Some("shop.example")).is_none(),
            "not issued yet"
        );
        let shop = certified("shop.example");
        served.install("shop.example", shop.clone());
        assert_eq!(
            leaf(served.choose(Some("SHOP.example"))),
            Some(shop.leaf().to_vec())
        );
        assert_eq!(
            leaf(served.choose(Some("other.example"))),
            Some(file.leaf().to_vec())
        );
        assert_eq!(leaf(served.choose(None)), Some(file.leaf().to_vec()));
    }

    #[test]
    fn without_a_file_certificate_only_managed_names_are_served() {
        let served = ServedCertificates::default();
        served.set_managed(&["a.example".to_owned()]);
        served.install("a.example", certified("a.example"));
        served.install("b.example", certified("b.example"));
        assert!(served.choose(Some("a.example")).is_some());
        assert!(
            served.choose(Some("b.example")).is_none(),
            "b is not managed"
        );
        assert!(served.choose(None).is_none());
        served.set_managed(&[]);
        assert!(
            served.choose(Some("a.example")).is_none(),
            "no longer managed"
        );
        assert!(served.expiries().is_empty());
    }
}
