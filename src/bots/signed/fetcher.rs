//! Fetches key directories on a thread of its own (never on a request's path), and keeps what
//! they bring in [`Directories`]. Counts `floodgate_signed_directory_fetches_total`.

use super::directory::{self, DirectoryError};
use super::keys::{Directories, Found};
use crate::bots::dns::Background;
use crate::telemetry::{FetchResult, SignedMetrics};
use parking_lot::Mutex;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The fetching thread, its HTTPS client and the directories known.
pub(crate) struct Fetcher {
    background: Background,
    client: reqwest::Client,
    shared: Arc<Shared>,
}

/// What a fetch, ending on the fetching thread, writes to.
struct Shared {
    directories: Mutex<Directories>,
    metrics: SignedMetrics,
}

impl Fetcher {
    /// A fetcher trusting `ca_file`'s certificates besides the public roots.
    pub(crate) fn new(
        ca_file: Option<&Path>,
        metrics: SignedMetrics,
    ) -> Result<Self, DirectoryError> {
        let background = Background::start("floodgate-signed")
            .map_err(|e| DirectoryError::Client(format!("cannot start its thread: {e}")))?;
        let client = {
            let _inside = background.handle().enter();
            directory::client(ca_file)?
        };
        Ok(Self {
            background,
            client,
            shared: Arc::new(Shared {
                directories: Mutex::new(Directories::default()),
                metrics,
            }),
        })
    }

    /// `agent`'s keys as known at `now`; starts a fetch when one is due.
    pub(crate) fn keys(&self, agent: &Arc<str>, now: Instant) -> Found {
        let found = self.shared.directories.lock().find(agent, now);
        if found.fetch {
            self.start(agent.clone());
        }
        found
    }

    /// Starts a fetch of `agent`'s directory if it was not fetched lately: a signature named a
    /// key id its keys lack.
    pub(crate) fn refresh(&self, agent: &Arc<str>, now: Instant) {
        if self.shared.directories.lock().refresh(agent, now) {
            self.start(agent.clone());
        }
    }

    fn start(&self, agent: Arc<str>) {
        let (client, shared) = (self.client.clone(), self.shared.clone());
        self.background.spawn(async move {
            let fetched = directory::fetch(&client, &agent).await;
            let result = match &fetched {
                Ok(_) => FetchResult::Ok,
                Err(e) => {
                    log::warn!("the key directory of signed agent {agent}: {e}");
                    FetchResult::Error
                }
            };
            shared.metrics.fetches.inc(result);
            let mut directories = shared.directories.lock();
            directories.settle(&agent, fetched.ok(), Instant::now());
        });
    }
}
