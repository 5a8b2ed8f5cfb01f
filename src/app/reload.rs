//! Config reload: on SIGHUP, or when the file changes (`server.watch_config`), the file is
//! validated and its reloadable parts are swapped in at once. Requests already under way finish
//! under the config they started with; an invalid file leaves the running config serving.
//! Bucket stores are kept, so buckets of unchanged policies carry over.

use super::Stores;
use crate::acme::AcmeManager;
use crate::admin::Tokens;
use crate::config::{self, Config};
use crate::proxy::Snapshot;
use crate::rls::RlsRules;
use crate::telemetry::ReloadResult;
use crate::tls::{Certified, ServedCertificates};
use arc_swap::ArcSwap;
use async_trait::async_trait;
use parking_lot::Mutex;
use pingora::server::ShutdownWatch;
use pingora::services::background::BackgroundService;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Watches for reload requests and performs them.
pub struct Reloader {
    path: PathBuf,
    running: Mutex<Config>,
    snapshot: Arc<ArcSwap<Snapshot>>,
    stores: Stores,
    hangup: Arc<AtomicBool>,
    tokens: Option<Arc<Tokens>>,
    /// The rate limit service's rules, when it runs.
    rls: Option<Arc<ArcSwap<RlsRules>>>,
    /// The TLS listener's certificates, when it runs: the files are read again on each reload.
    served: Option<Arc<ServedCertificates>>,
    /// The ACME client, when `[tls.acme]` was configured at start.
    acme: Option<Arc<AcmeManager>>,
}

impl Reloader {
    /// A reloader of `running`'s file into `snapshot`; `hangup` is raised by the SIGHUP
    /// handler.
    pub fn new(
        running: Config,
        snapshot: Arc<ArcSwap<Snapshot>>,
        stores: Stores,
        hangup: Arc<AtomicBool>,
    ) -> Self {
        Self {
            path: running.path.clone(),
            running: Mutex::new(running),
            snapshot,
            stores,
            hangup,
            tokens: None,
            rls: None,
            served: None,
            acme: None,
        }
    }

    /// The same reloader, also reading the TLS listener's certificate files again and
    /// handing `[tls.acme]` to its client on each reload.
    pub fn with_certificates(
        mut self,
        served: Option<Arc<ServedCertificates>>,
        acme: Option<Arc<AcmeManager>>,
    ) -> Self {
        self.served = served;
        self.acme = acme;
        self
    }

    /// The same reloader, also reading the control API's token file again on each reload.
    pub fn with_tokens(mut self, tokens: Arc<Tokens>) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// The same reloader, also swapping in the rate limit service's rules (read again from
    /// `rls.config_dir` with the config).
    pub fn with_rls(mut self, rules: Option<Arc<ArcSwap<RlsRules>>>) -> Self {
        self.rls = rules;
        self
    }

    /// Loads the file again and swaps it in. Returns the settings that changed but need a
    /// restart, or why the file was refused.
    pub fn reload(&self) -> Result<Vec<&'static str>, String> {
        let new = config::load(&self.path).map_err(|e| e.to_string())?;
        let previous = self.snapshot.load_full();
        let snapshot = self
            .stores
            .snapshot(&new, Some(&previous))
            .map_err(|e| e.to_string())?;
        let files = new.server.tls.as_ref().and_then(|tls| tls.files.as_ref());
        let file_certificate = match files {
            Some(files) => Some(
                Certified::from_files(&files.cert_file, &files.key_file)
                    .map_err(|e| format!("server.tls_cert_file: {e}"))?,
            ),
            None => None,
        };
        if let Some(tokens) = &self.tokens {
            tokens
                .reload(new.admin.token_file.as_deref())
                .map_err(|e| e.to_string())?;
        }
        if let Some(served) = &self.served {
            served.set_file(file_certificate);
            let certificates = &self.stores.metrics.certificates;
            certificates.set_expiries(&served.expiries());
        }
        if let (Some(acme), Some(settings)) = (&self.acme, &new.acme) {
            acme.update(settings.clone());
        }
        if let (Some(rules), Some(settings)) = (&self.rls, &new.rls) {
            rules.store(settings.rules.clone());
        }
        let mut running = self.running.lock();
        let restart = needs_restart(&running, &new);
        self.snapshot.store(Arc::new(snapshot));
        *running = new;
        Ok(restart)
    }

    fn reload_and_report(&self, why: &str) {
        let reloads = &self.stores.metrics.reloads;
        match self.reload() {
            // Logged before counted: whoever watches the counter finds the line written.
            Ok(restart) => {
                log::info!("config reloaded from {} ({why})", self.path.display());
                for setting in restart {
                    log::warn!(
                        "`{setting}` changed; it takes effect only after a restart (or an upgrade)"
                    );
                }
                reloads.inc(ReloadResult::Success);
            }
            Err(e) => {
                log::error!("config reload ({why}) refused; the running config stays: {e}");
                reloads.inc(ReloadResult::Failure);
            }
        }
    }

    fn modified(&self) -> Option<SystemTime> {
        std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok()
    }
}

/// What of the TLS listener a reload cannot change: its address and protocols (its
/// certificates are read again).
fn tls_listener(
    server: &crate::config::ServerSettings,
) -> Option<(std::net::SocketAddr, bool, bool)> {
    server.tls.as_ref().map(|tls| (tls.listen, tls.h2, tls.ja4))
}

/// The settings a reload cannot apply: listeners, workers, the stores.
fn needs_restart(old: &Config, new: &Config) -> Vec<&'static str> {
    let (o, n) = (&old.server, &new.server);
    [
        ("server.listen", o.listen != n.listen),
        ("server.threads", o.threads != n.threads),
        ("server.grace_period", o.grace_period != n.grace_period),
        (
            "server.shutdown_timeout",
            o.shutdown_timeout != n.shutdown_timeout,
        ),
        ("server.watch_config", o.watch_config != n.watch_config),
        ("server.pid_file", o.pid_file != n.pid_file),
        ("server.upgrade_sock", o.upgrade_sock != n.upgrade_sock),
        ("server.tls_listen", tls_listener(o) != tls_listener(n)),
        (
            "tls.acme",
            old.acme.is_some() != new.acme.is_some()
                || old.acme.as_ref().map(|a| &a.state_dir)
                    != new.acme.as_ref().map(|a| &a.state_dir),
        ),
        ("server.h2c", o.h2c != n.h2c),
        (
            "server.header_timeout",
            o.limits.header_timeout != n.limits.header_timeout,
        ),
        (
            "server.keepalive_timeout",
            o.limits.keepalive_timeout != n.limits.keepalive_timeout,
        ),
        (
            "server.max_header_bytes",
            o.limits.max_header_bytes != n.limits.max_header_bytes,
        ),
        (
            "server.max_connections",
            o.limits.max_connections != n.limits.max_connections,
        ),
        (
            "server.max_connections_per_ip",
            o.limits.max_connections_per_ip != n.limits.max_connections_per_ip,
        ),
        (
            "upstream.ca_file",
            old.upstream.ca_file != new.upstream.ca_file,
        ),
        ("admin.listen", old.admin.listen != new.admin.listen),
        (
            "admin.protect_metrics",
            old.admin.protect_metrics != new.admin.protect_metrics,
        ),
        (
            "admin.max_connections",
            old.admin.max_connections != new.admin.max_connections,
        ),
        ("check", old.check != new.check),
        (
            "rls.listen",
            old.rls.as_ref().map(|r| r.listen) != new.rls.as_ref().map(|r| r.listen),
        ),
        (
            "rls.max_concurrent_streams",
            old.rls.as_ref().map(|r| r.max_concurrent_streams)
                != new.rls.as_ref().map(|r| r.max_concurrent_streams),
        ),
        ("crowdsec", old.crowdsec != new.crowdsec),
        ("identity.hash_key", old.hash_key != new.hash_key),
        ("store", old.store != new.store),
    ]
    .into_iter()
    .filter_map(|(name, changed)| changed.then_some(name))
    .collect()
}

#[async_trait]
impl BackgroundService for Reloader {
    async fn start(&self, mut shutdown: ShutdownWatch) {
        let watch = self.running.lock().server.watch_config;
        let mut seen = self.modified();
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        let mut ticks: u64 = 0;
        loop {
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = tick.tick() => {}
            }
            ticks += 1;
            if self.hangup.swap(false, Ordering::AcqRel) {
                self.reload_and_report("SIGHUP");
                seen = self.modified();
            } else if watch && ticks.is_multiple_of(10) {
                let now = self.modified();
                if now != seen {
                    seen = now;
                    self.reload_and_report("file changed");
                }
            }
        }
    }
}
