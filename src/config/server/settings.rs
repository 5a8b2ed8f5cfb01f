//! `[server]` as run: the listeners, workers and shutdown, with their defaults and how
//! `--test` describes them.

use super::super::instance_files::default_for;
use crate::proxy::{AccessLogSettings, ConnectionLimits, FrontSettings};
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `[server]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSettings {
    /// Proxy listener address; `None` when there is no `[upstream]` to proxy to (an instance
    /// that only decides, for `[check]` or `[rls]`).
    pub listen: Option<SocketAddr>,
    /// Worker threads of the proxy service.
    pub threads: usize,
    /// On SIGTERM, listeners close and in-flight requests have this long to finish.
    pub grace_period: Duration,
    /// After the grace period, how long the final shutdown step may take.
    pub shutdown_timeout: Duration,
    /// Every policy counts but never blocks.
    pub shadow: bool,
    /// One access-log line per request, in this format, to this file (or stderr); `None`
    /// when the access log is off.
    pub access_log: Option<AccessLogSettings>,
    /// Reload when the config file changes, not only on SIGHUP.
    pub watch_config: bool,
    /// Where the process id is written once the listeners are this process's, and removed
    /// from at a clean exit (the upgrade steps read it).
    pub pid_file: PathBuf,
    /// The socket a new binary takes the listeners from during an upgrade.
    pub upgrade_sock: String,
    /// A TLS listener, besides the plain one.
    pub tls: Option<TlsListener>,
    /// Deadlines and caps of downstream connections.
    pub limits: ConnectionLimits,
    /// Whether the plain listener also accepts cleartext HTTP/2 with prior knowledge.
    pub h2c: bool,
    /// The request id header and `Via`.
    pub front: FrontSettings,
}

/// `server.tls_listen` with its certificate chain and key (PEM files).
#[derive(Debug, Clone, PartialEq)]
pub struct TlsListener {
    /// Address of the TLS listener.
    pub listen: SocketAddr,
    /// The certificate files, served for names ACME does not manage; `None` when the
    /// listener runs on ACME certificates alone.
    pub files: Option<TlsFiles>,
    /// Whether HTTP/2 is offered by ALPN besides HTTP/1.1.
    pub h2: bool,
    /// Whether each connection's ClientHello is read for its JA4 fingerprint
    /// (`server.tls_ja4`).
    pub ja4: bool,
}

/// `server.tls_cert_file` and `server.tls_key_file`, re-read on every reload.
#[derive(Debug, Clone, PartialEq)]
pub struct TlsFiles {
    /// Certificate chain, PEM.
    pub cert_file: String,
    /// Private key, PEM.
    pub key_file: String,
}

impl ServerSettings {
    /// The settings of an empty `[server]` in the config file at `config`: no proxy listener,
    /// a worker per core, 5 s to finish and 5 s to stop, and the config file's own pid file
    /// and upgrade socket (`instance_files`).
    pub fn defaults_for(config: &Path) -> Self {
        Self {
            listen: None,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            grace_period: Duration::from_secs(5),
            shutdown_timeout: Duration::from_secs(5),
            shadow: false,
            access_log: None,
            watch_config: false,
            pid_file: default_for(config, "pid"),
            upgrade_sock: default_for(config, "sock").display().to_string(),
            tls: None,
            limits: ConnectionLimits::default(),
            h2c: false,
            front: FrontSettings::default(),
        }
    }
}

impl fmt::Display for ServerSettings {
    /// `--test`'s lines for the proxy listener, shutdown and the instance's files.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h2c = if self.h2c { ", HTTP/1 and h2c" } else { "" };
        match self.listen {
            Some(listen) => writeln!(
                f,
                "proxy listener  {listen} ({} threads{h2c})",
                self.threads
            )?,
            None => writeln!(
                f,
                "proxy listener  none: no [upstream] ({} threads)",
                self.threads
            )?,
        }
        writeln!(
            f,
            "shutdown        in-flight requests get {:?}, then {:?} to stop",
            self.grace_period, self.shutdown_timeout
        )?;
        writeln!(f, "pid file        {}", self.pid_file.display())?;
        writeln!(f, "upgrade socket  {}", self.upgrade_sock)
    }
}

impl fmt::Display for ConnectionLimits {
    /// `--test`'s line for downstream connections.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per_ip = self
            .max_connections_per_ip
            .map_or(String::new(), |n| format!(", {n} per client address"));
        writeln!(
            f,
            "connections     at most {}{per_ip}; a request head within {:?} and {} bytes; idle {:?} between requests",
            self.max_connections, self.header_timeout, self.max_header_bytes, self.keepalive_timeout
        )
    }
}
