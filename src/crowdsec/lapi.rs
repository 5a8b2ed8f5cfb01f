//! The Local API's decision stream, as a remediation component pulls it:
//! `GET /v1/decisions/stream` with the bouncer's key in `X-Api-Key`, `startup=true` for the
//! whole state, then what changed since the key's last pull.

use super::decision::Pulled;
use super::CrowdSecSettings;
use std::time::Duration;

/// Why a pull failed.
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    /// The key file cannot be read.
    #[error("the API key file cannot be read: {0}")]
    KeyFile(String),
    /// LAPI did not answer (refused, timed out).
    #[error("the Local API cannot be reached: {0}")]
    Unreachable(String),
    /// LAPI answered with an error status (403: a wrong key).
    #[error("the Local API answered {0}")]
    Status(u16),
    /// LAPI's answer is not a decision stream.
    #[error("the Local API's answer cannot be read: {0}")]
    Body(String),
}

/// A client of one LAPI.
pub struct Lapi {
    client: reqwest::Client,
    stream_url: String,
    filters: Vec<(&'static str, String)>,
    key_file: std::path::PathBuf,
}

/// How long the whole state may take to arrive (100 000 decisions are about 15 MB).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

impl Lapi {
    /// A client of the LAPI `settings` name, with their filters.
    pub fn new(settings: &CrowdSecSettings) -> Result<Self, PullError> {
        let client = reqwest::Client::builder()
            .user_agent(concat!("floodgate/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| PullError::Unreachable(e.to_string()))?;
        let mut filters = vec![("scopes", settings.scopes.join(","))];
        for (name, list) in [
            ("origins", &settings.origins),
            ("scenarios_containing", &settings.scenarios_containing),
            (
                "scenarios_not_containing",
                &settings.scenarios_not_containing,
            ),
        ] {
            if !list.is_empty() {
                filters.push((name, list.join(",")));
            }
        }
        Ok(Self {
            client,
            stream_url: format!("{}/v1/decisions/stream", settings.url.trim_end_matches('/')),
            filters,
            key_file: settings.api_key_file.clone(),
        })
    }

    /// Pulls the whole state (`startup`) or what changed since this key's last pull, giving
    /// up after `timeout` (a startup pull gets longer).
    pub async fn pull(&self, startup: bool, timeout: Duration) -> Result<Pulled, PullError> {
        let key = std::fs::read_to_string(&self.key_file)
            .map_err(|e| PullError::KeyFile(e.to_string()))?;
        let timeout = if startup { STARTUP_TIMEOUT } else { timeout };
        let answer = self
            .client
            .get(&self.stream_url)
            .query(&[("startup", if startup { "true" } else { "false" })])
            .query(&self.filters)
            .header("X-Api-Key", key.trim())
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| PullError::Unreachable(without_url(e)))?;
        if !answer.status().is_success() {
            return Err(PullError::Status(answer.status().as_u16()));
        }
        answer
            .json::<Pulled>()
            .await
            .map_err(|e| PullError::Body(without_url(e)))
    }
}

/// The error's text without the URL (it is in the config; the log need not repeat it).
fn without_url(e: reqwest::Error) -> String {
    e.without_url().to_string()
}
