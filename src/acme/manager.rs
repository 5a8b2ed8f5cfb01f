//! The background service that keeps the certificates: every [`TICK`] it loads what the
//! vault holds (another instance's orders, a restart's), and, when this instance orders (it
//! holds the fleet's lock, or it is alone), orders each domain that is due. A failed order
//! leaves the certificate in force, logs the domain and the step, and waits before the next.

use super::answers::Answers;
use super::client::AcmeHttp;
use super::error::{AcmeError, Step};
use super::kept::{Certificates, Kept, Lead, Written};
use super::order::Ordering;
use super::renewal::{due, Backoff};
use super::settings::AcmeSettings;
use super::vault::Vault;
use crate::clock::Clock;
use crate::telemetry::{CertificateMetrics, OrderResult};
use crate::tls::{Certified, ServedCertificates};
use arc_swap::ArcSwap;
use async_trait::async_trait;
use instant_acme::{Account, AccountCredentials, ExternalAccountKey, NewAccount};
use parking_lot::Mutex;
use pingora::server::ShutdownWatch;
use pingora::services::background::BackgroundService;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// How often the vault is read and the domains looked at.
pub(super) const TICK: Duration = Duration::from_secs(1);

/// The certificates' keeper.
pub struct AcmeManager {
    settings: ArcSwap<AcmeSettings>,
    served: Arc<ServedCertificates>,
    vault: Arc<Vault>,
    answers: Arc<Answers>,
    metrics: CertificateMetrics,
    /// Raised by a reload, so new domains are ordered at once.
    woken: Notify,
    state: tokio::sync::Mutex<State>,
    /// Raised by a reload: the next load reads every kept certificate.
    reread: std::sync::atomic::AtomicBool,
    backoffs: Mutex<HashMap<String, Backoff>>,
    /// What renewals fall due and failures back off by.
    clock: Clock,
}

/// What one tick leaves for the next.
#[derive(Default)]
struct State {
    /// The vault's version last loaded.
    known: u64,
    /// The account, with the directory it is at.
    account: Option<(String, Account)>,
}

impl AcmeManager {
    /// Keeps the certificates of `settings` in `served`, with the state in `vault`, renewing
    /// by `clock`.
    pub fn new(
        settings: AcmeSettings,
        served: Arc<ServedCertificates>,
        vault: Arc<Vault>,
        metrics: CertificateMetrics,
        clock: Clock,
    ) -> Self {
        served.set_managed(&settings.domains);
        Self {
            settings: ArcSwap::from_pointee(settings),
            served,
            answers: Arc::new(Answers::new(vault.clone())),
            vault,
            metrics,
            woken: Notify::new(),
            state: tokio::sync::Mutex::default(),
            reread: std::sync::atomic::AtomicBool::new(false),
            backoffs: Mutex::default(),
            clock,
        }
    }

    /// The time, in Unix seconds (what certificates' `not_after` counts in).
    fn unix_now(&self) -> i64 {
        i64::try_from(self.clock.now_s()).unwrap_or(i64::MAX)
    }

    /// The validations' answers, for the listeners.
    pub fn answers(&self) -> Arc<Answers> {
        self.answers.clone()
    }

    /// Takes `settings` from a reload: new domains are ordered at once, dropped ones are no
    /// longer served.
    pub fn update(&self, settings: AcmeSettings) {
        if **self.settings.load() == settings {
            return;
        }
        self.served.set_managed(&settings.domains);
        self.settings.store(Arc::new(settings));
        self.backoffs.lock().clear();
        // Read every kept certificate again at the next tick: a name just managed may have
        // been ordered by another instance before this one reloaded.
        self.reread
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.woken.notify_one();
    }

    /// One look: load what the vault holds, then order what is due.
    pub async fn tick(&self) {
        let mut state = self.state.lock().await;
        if let Err(e) = self.load(&mut state).await {
            log::warn!("{e}; the certificates in force stay");
        }
        match self.vault.lead().await {
            Ok(Lead::Ordering) => self.order_due(&mut state).await,
            Ok(Lead::Elsewhere) => {}
            Err(e) => log::warn!("{e}; no order is placed until it answers"),
        }
        self.metrics.set_expiries(&self.served.expiries());
    }

    /// Installs the certificates the vault holds that differ from those served.
    async fn load(&self, state: &mut State) -> Result<(), AcmeError> {
        if self
            .reread
            .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            state.known = 0;
        }
        let Certificates::All { version, kept } = self.vault.certificates(state.known).await?
        else {
            return Ok(());
        };
        for (domain, kept) in kept {
            self.install(&domain, &kept);
        }
        state.known = version;
        Ok(())
    }

    /// Serves `kept` for `domain` unless it is what is served already.
    fn install(&self, domain: &str, kept: &Kept) {
        match Certified::from_pem(kept.chain.as_bytes(), kept.key.as_bytes()) {
            Ok(certified) => {
                let current = self.served.issued(domain);
                if current.is_some_and(|c| c.leaf() == certified.leaf()) {
                    return;
                }
                log::info!(
                    "TLS: serving a certificate for `{domain}` (expires at {} Unix s)",
                    certified.not_after
                );
                self.served.install(domain, certified);
            }
            Err(e) => log::warn!("ACME: the certificate kept for `{domain}` cannot be served: {e}"),
        }
    }

    /// Orders each domain that is due and not waiting after a failure.
    async fn order_due(&self, state: &mut State) {
        let settings = self.settings.load_full();
        let now = self.unix_now();
        let due: Vec<&String> = settings
            .domains
            .iter()
            .filter(|d| {
                let waiting = self.backoffs.lock().get(*d).is_some_and(|b| b.until > now);
                let current = self.served.issued(d);
                !waiting && due(d, current.as_ref(), settings.renew_before, now)
            })
            .collect();
        for domain in due {
            // An order takes up to minutes: the lock is renewed before each.
            if !matches!(self.vault.lead().await, Ok(Lead::Ordering)) {
                return;
            }
            match self.order_one(&settings, state, domain).await {
                Ok(()) => {
                    self.backoffs.lock().remove(domain);
                    self.metrics.count_order(OrderResult::Issued);
                }
                Err(e) => {
                    self.metrics.count_order(OrderResult::Failed);
                    self.account_failed(state, &e);
                    let mut backoffs = self.backoffs.lock();
                    let next =
                        Backoff::after_failure(backoffs.get(domain).copied(), self.unix_now());
                    backoffs.insert(domain.clone(), next);
                    let left = self
                        .served
                        .issued(domain)
                        .map(|c| c.not_after - self.unix_now());
                    let left = match left {
                        Some(s) => format!(
                            "the certificate in force expires in {}",
                            humantime::format_duration(Duration::from_secs(s.max(0) as u64))
                        ),
                        None => "no certificate is served for it yet".to_owned(),
                    };
                    log::warn!("{e}; {left}; next try in {:?}", next.wait);
                }
            }
        }
    }

    /// Orders `domain`, keeps and serves its certificate.
    async fn order_one(
        &self,
        settings: &AcmeSettings,
        state: &mut State,
        domain: &str,
    ) -> Result<(), AcmeError> {
        let account = self
            .account(settings, state)
            .await
            .map_err(|e| e.of(domain))?;
        let ordering = Ordering {
            account: &account,
            challenge: settings.challenge,
            answers: &self.answers,
            vault: &self.vault,
        };
        log::info!(
            "ACME: ordering a certificate for `{domain}` from {}",
            settings.directory
        );
        let kept = ordering.order(domain).await?;
        Certified::from_pem(kept.chain.as_bytes(), kept.key.as_bytes())
            .map_err(|e| AcmeError::failed(Step::Certificate, &e).of(domain))?;
        match self
            .vault
            .put(domain, &kept)
            .await
            .map_err(|e| e.of(domain))?
        {
            Written::Kept => {}
            Written::LockLost => {
                let why = "the fleet's lock was lost: another instance orders now";
                return Err(AcmeError::at(Step::Store, why).of(domain));
            }
        }
        self.install(domain, &kept);
        Ok(())
    }

    /// Forgets the account after a failure that may be its own (so it is restored again).
    fn account_failed(&self, state: &mut State, e: &AcmeError) {
        if e.step == Step::Account {
            state.account = None;
        }
    }

    /// The account at the configured directory: the one in use, the vault's, or a new one.
    async fn account(
        &self,
        settings: &AcmeSettings,
        state: &mut State,
    ) -> Result<Account, AcmeError> {
        if let Some((directory, account)) = &state.account {
            if *directory == settings.directory {
                return Ok(account.clone());
            }
        }
        let http = || {
            AcmeHttp::new(settings.ca_file.as_deref())
                .map(|h| Box::new(h) as Box<dyn instant_acme::HttpClient>)
                .map_err(|e| AcmeError::at(Step::Account, e))
        };
        let account = match self.vault.account(&settings.directory).await? {
            Some(json) => {
                let credentials: AccountCredentials = serde_json::from_str(&json)
                    .map_err(|e| AcmeError::at(Step::Account, format!("the kept account: {e}")))?;
                Account::builder_with_http(http()?)
                    .from_credentials(credentials)
                    .await
                    .map_err(|e| AcmeError::failed(Step::Account, &e))?
            }
            None => self.enrol(settings, http()?).await?,
        };
        state.account = Some((settings.directory.clone(), account.clone()));
        Ok(account)
    }

    /// Creates the account and keeps it.
    async fn enrol(
        &self,
        settings: &AcmeSettings,
        http: Box<dyn instant_acme::HttpClient>,
    ) -> Result<Account, AcmeError> {
        let contact = format!("mailto:{}", settings.email);
        let new = NewAccount {
            contact: &[&contact],
            terms_of_service_agreed: true,
            only_return_existing: false,
        };
        let eab = settings
            .eab
            .as_ref()
            .map(|eab| ExternalAccountKey::new(eab.kid.clone(), &eab.hmac_key));
        let (account, credentials) = Account::builder_with_http(http)
            .create(&new, settings.directory.clone(), eab.as_ref())
            .await
            .map_err(|e| AcmeError::failed(Step::Account, &e))?;
        let json = serde_json::to_string(&credentials)
            .map_err(|e| AcmeError::failed(Step::Account, &e))?;
        if self.vault.enrol(&settings.directory, &json).await? == Written::LockLost {
            return Err(AcmeError::at(Step::Account, "the fleet's lock was lost"));
        }
        log::info!(
            "ACME: created an account at {} for {}",
            settings.directory,
            settings.email
        );
        Ok(account)
    }
}

#[async_trait]
impl BackgroundService for AcmeManager {
    async fn start(&self, mut shutdown: ShutdownWatch) {
        loop {
            self.tick().await;
            tokio::select! {
                _ = shutdown.changed() => break,
                _ = tokio::time::sleep(TICK) => {}
                _ = self.woken.notified() => {}
            }
        }
        // Another instance takes over at once rather than when the lease runs out.
        self.vault.resign().await;
    }
}
