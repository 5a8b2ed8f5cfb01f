//! One read of a directory, bounded: at most [`MAX_BODY`] bytes (a larger one is refused, and
//! the rest never read), one timeout for the whole of it, no redirect followed, no proxy.

use super::{DirectoryUrl, Listed, ListedError};
use crate::clock::Clock;
use crate::telemetry::Causes;
use bytes::BytesMut;
use std::time::Duration;

/// The largest directory read.
pub const MAX_BODY: usize = 256 * 1024;

/// How often a directory is read again unless configured otherwise: every hour.
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(3600);

/// How directories are read and refreshed.
#[derive(Debug, Clone)]
pub struct DirectorySettings {
    /// How often a directory is read again ([`DEFAULT_REFRESH`]).
    pub refresh: Duration,
    /// How soon a failed read is tried again, at most (1 minute; `refresh` if shorter).
    pub retry: Duration,
    /// The most one read may take, connection included (10 seconds).
    pub timeout: Duration,
    /// The wall clock `not-before` is compared with.
    pub clock: Clock,
}

impl Default for DirectorySettings {
    fn default() -> Self {
        Self {
            refresh: DEFAULT_REFRESH,
            retry: Duration::from_secs(60),
            timeout: Duration::from_secs(10),
            clock: Clock::System,
        }
    }
}

/// Reads directories (one HTTP client, shared by every issuer's refresher).
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    settings: DirectorySettings,
}

/// The HTTP client could not be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the HTTP client for issuer directories: {0}")]
pub struct ClientError(String);

/// Why a read gave no keys.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirectoryError {
    /// The connection or transfer failed.
    #[error("download failed: {0}")]
    Transport(String),
    /// No whole answer within the timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// An answer other than 200 (a redirect included).
    #[error("answered {0}")]
    Status(u16),
    /// Larger than [`MAX_BODY`].
    #[error("larger than {MAX_BODY} bytes")]
    TooLarge,
    /// Read, but no usable key in it.
    #[error(transparent)]
    Listed(#[from] ListedError),
}

impl Fetcher {
    /// A fetcher with `settings`' timeout (made inside a Tokio runtime or not).
    pub fn new(settings: DirectorySettings) -> Result<Self, ClientError> {
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .user_agent(concat!("floodgate/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(settings.timeout)
            // A read every hour gains nothing from an idle connection kept open.
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| ClientError(Causes(&e).to_string()))?;
        Ok(Self { client, settings })
    }

    /// The settings this fetcher was made with.
    pub fn settings(&self) -> &DirectorySettings {
        &self.settings
    }

    /// Reads the directory at `url` once, within the timeout.
    pub async fn fetch(&self, url: &DirectoryUrl) -> Result<Listed, DirectoryError> {
        let timeout = self.settings.timeout;
        let body = tokio::time::timeout(timeout, self.body(url))
            .await
            .unwrap_or(Err(DirectoryError::Timeout(timeout)))?;
        Ok(Listed::parse(&body)?)
    }

    /// The body of a 200 answer, at most [`MAX_BODY`] bytes.
    async fn body(&self, url: &DirectoryUrl) -> Result<BytesMut, DirectoryError> {
        let mut answer = self
            .client
            .get(url.url().clone())
            .header(
                http::header::ACCEPT,
                "application/private-token-issuer-directory",
            )
            .send()
            .await
            .map_err(transport)?;
        if answer.status() != reqwest::StatusCode::OK {
            return Err(DirectoryError::Status(answer.status().as_u16()));
        }
        if answer.content_length().is_some_and(|n| n > MAX_BODY as u64) {
            return Err(DirectoryError::TooLarge);
        }
        let mut body = BytesMut::new();
        while let Some(chunk) = answer.chunk().await.map_err(transport)? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(DirectoryError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

fn transport(e: reqwest::Error) -> DirectoryError {
    DirectoryError::Transport(Causes(&e.without_url()).to_string())
}
