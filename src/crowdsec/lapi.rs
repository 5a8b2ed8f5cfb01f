//! The Local API's decision stream, as a remediation component pulls it:
//! `GET /v1/decisions/stream` with the bouncer's key in `X-Api-Key`, `startup=true` for the
//! whole state, then what changed since the key's last pull. The answer is read as it streams
//! in, never past `crowdsec.max_answer_bytes`: a bigger one is refused (an announced length at
//! once, else at the chunk that passes the cap), so a huge or endless answer cannot take the
//! process's memory.

use super::decision::Pulled;
use super::CrowdSecSettings;
use crate::telemetry::Causes;
use bytes::{Buf, Bytes};
use std::collections::VecDeque;
use std::time::Duration;

/// An answer at least this big is followed by handing freed memory back to the system.
const BIG_ANSWER: usize = 1 << 20;

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
    /// LAPI's answer is bigger than `crowdsec.max_answer_bytes`.
    #[error(
        "the Local API's answer is over crowdsec.max_answer_bytes ({limit} bytes): not read; \
         raise it, or pull fewer decisions (origins, scenarios_containing)"
    )]
    TooLarge {
        /// The cap.
        limit: u64,
    },
}

/// A client of one LAPI.
pub struct Lapi {
    client: reqwest::Client,
    stream_url: String,
    filters: Vec<(&'static str, String)>,
    key_file: std::path::PathBuf,
    max_answer_bytes: u64,
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
            .map_err(|e| PullError::Unreachable(Causes(&e).to_string()))?;
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
            max_answer_bytes: settings.max_answer_bytes,
        })
    }

    /// Pulls the whole state (`startup`) or what changed since this key's last pull, giving
    /// up after `timeout` (a startup pull gets longer).
    pub async fn pull(&self, startup: bool, timeout: Duration) -> Result<Answer, PullError> {
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
        let body = read_capped(answer, self.max_answer_bytes)
            .await
            .inspect_err(|e| {
                // What was read of a refused answer is gone: its memory too.
                if matches!(e, PullError::TooLarge { .. }) {
                    super::give_back_memory();
                }
            })?;
        let big = body.len >= BIG_ANSWER;
        match serde_json::from_reader::<_, Pulled>(std::io::BufReader::new(body)) {
            Ok(pulled) => Ok(Answer { pulled, big }),
            Err(e) => {
                if big {
                    super::give_back_memory();
                }
                Err(PullError::Body(e.to_string()))
            }
        }
    }
}

/// A pull's decisions, and whether the answer was big.
pub struct Answer {
    /// The decisions.
    pub pulled: Pulled,
    /// Whether the answer was big enough that, once its decisions are applied,
    /// [`give_back_memory`](super::give_back_memory) should run.
    pub big: bool,
}

/// An answer's body as it arrived, chunk by chunk (never copied into one buffer): read, a chunk
/// is dropped once decoded.
#[derive(Default)]
struct Chunks {
    chunks: VecDeque<Bytes>,
    /// Bytes received.
    len: usize,
}

impl std::io::Read for Chunks {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let Some(front) = self.chunks.front_mut() else {
            return Ok(0);
        };
        let n = front.len().min(out.len());
        out[..n].copy_from_slice(&front[..n]);
        front.advance(n);
        if front.is_empty() {
            self.chunks.pop_front();
        }
        Ok(n)
    }
}

/// The body of `answer`, read as it streams in and refused once past `limit` bytes: never more
/// than `limit` bytes are held.
async fn read_capped(mut answer: reqwest::Response, limit: u64) -> Result<Chunks, PullError> {
    if answer
        .content_length()
        .is_some_and(|announced| announced > limit)
    {
        return Err(PullError::TooLarge { limit });
    }
    let mut body = Chunks::default();
    while let Some(chunk) = answer
        .chunk()
        .await
        .map_err(|e| PullError::Unreachable(without_url(e)))?
    {
        body.len += chunk.len();
        if body.len as u64 > limit {
            return Err(PullError::TooLarge { limit });
        }
        body.chunks.push_back(chunk);
    }
    Ok(body)
}

/// The error's text with its causes, without the URL (it is in the config; the log need not
/// repeat it).
fn without_url(e: reqwest::Error) -> String {
    Causes(&e.without_url()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_decoded_from_its_chunks_wherever_they_split_it() {
        let text = br#"{"deleted":null,"new":[{"id":7,"duration":"3h59m","origin":"cscli","scenario":"manual","scope":"Ip","type":"ban","value":"192.0.2.1"}]}"#;
        for size in [1, 3, 17, text.len()] {
            let chunks = Chunks {
                chunks: text.chunks(size).map(Bytes::copy_from_slice).collect(),
                len: text.len(),
            };
            let pulled: Pulled = serde_json::from_reader(std::io::BufReader::new(chunks)).unwrap();
            assert_eq!(pulled.new.len(), 1, "chunks of {size}");
            assert_eq!(pulled.new[0].value, "192.0.2.1");
            assert!(pulled.deleted.is_empty());
        }
    }
}
