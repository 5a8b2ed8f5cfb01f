//! One fetch of a host's robots.txt from its backend, bounded: at most [`MAX_BODY`] bytes kept
//! (the read stops there; RFC 9309 §2.5 asks for at least 500 KiB), [`MAX_REDIRECTS`]
//! redirects on the same backend, and one timeout for the whole of it.

use super::{Fetched, Settings, Target, Unavailable};
use crate::telemetry::Causes;
use bytes::{Bytes, BytesMut};
use http::header::{HOST, LOCATION};
use reqwest::redirect::Policy;
use reqwest::StatusCode;

/// The most of a robots.txt that is read.
pub const MAX_BODY: usize = 512 * 1024;

/// The most redirects followed in a row (RFC 9309 §2.3.1.2: at least five).
pub const MAX_REDIRECTS: usize = 5;

/// Fetches robots.txt files (one HTTP client, shared by every host's refresher).
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    settings: Settings,
}

/// The HTTP client could not be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the HTTP client for robots.txt: {0}")]
pub struct ClientError(String);

impl Fetcher {
    /// A fetcher with `settings`' timeout; its refreshers run every `settings.refresh`.
    pub fn new(settings: Settings) -> Result<Self, ClientError> {
        let client = reqwest::Client::builder()
            .user_agent(concat!("floodgate/", env!("CARGO_PKG_VERSION")))
            .redirect(Policy::none())
            .no_proxy()
            .connect_timeout(settings.timeout)
            // A fetch every `refresh` gains nothing from an idle connection kept open.
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| ClientError(Causes(&e).to_string()))?;
        Ok(Self { client, settings })
    }

    /// The settings this fetcher was made with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Fetches `target`'s robots.txt once, within the timeout.
    pub async fn fetch(&self, target: &Target) -> Fetched {
        tokio::time::timeout(self.settings.timeout, self.follow(target))
            .await
            .unwrap_or(Fetched::Unavailable(Unavailable::Timeout))
    }

    /// The first request and up to [`MAX_REDIRECTS`] more.
    async fn follow(&self, target: &Target) -> Fetched {
        let mut hop = target.first();
        for _ in 0..=MAX_REDIRECTS {
            let request = self
                .client
                .get(hop.url.clone())
                .header(HOST, target.host_header().clone());
            let answer = match request.send().await {
                Ok(answer) => answer,
                Err(e) => return Fetched::Unavailable(transport(e)),
            };
            let status = answer.status();
            if !status.is_redirection() {
                return outcome(status, answer).await;
            }
            let Some(location) = answer.headers().get(LOCATION) else {
                return Fetched::Unavailable(Unavailable::NoLocation);
            };
            let location = String::from_utf8_lossy(location.as_bytes());
            hop = match target.redirect(&hop, &location) {
                Ok(next) => next,
                Err(e) => return Fetched::Unavailable(e),
            };
        }
        Fetched::Unavailable(Unavailable::TooManyRedirects(MAX_REDIRECTS))
    }
}

/// What a final (not redirecting) answer means.
async fn outcome(status: StatusCode, answer: reqwest::Response) -> Fetched {
    if status.is_success() {
        match read_at_most(answer, MAX_BODY).await {
            Ok(body) => Fetched::Rules(body),
            Err(e) => Fetched::Unavailable(transport(e)),
        }
    } else if status.is_client_error() {
        Fetched::NoRules
    } else {
        Fetched::Unavailable(Unavailable::Status(status.as_u16()))
    }
}

/// The first `limit` bytes of the body; the rest is never read (the connection is dropped).
async fn read_at_most(mut answer: reqwest::Response, limit: usize) -> reqwest::Result<Bytes> {
    let expected = answer.content_length().unwrap_or(0);
    let mut body = BytesMut::with_capacity(usize::try_from(expected).unwrap_or(limit).min(limit));
    while let Some(chunk) = answer.chunk().await? {
        let room = limit - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() == limit {
            break;
        }
    }
    Ok(body.freeze())
}

fn transport(e: reqwest::Error) -> Unavailable {
    Unavailable::Transport(Causes(&e.without_url()).to_string())
}
