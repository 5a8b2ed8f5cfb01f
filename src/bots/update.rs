//! `floodgate bots update DIR`: download the address ranges each crawler publishes (its
//! catalogue entry's `ranges_url`) into `DIR/<name>.json`, the files `bots.ranges_dir` reads.
//! A file is checked before it replaces the old one, and replaced whole (temporary file, then
//! rename); a failed download or a bad file keeps the old file and fails the run after the
//! rest were tried. Then the browsers' fingerprints the bot score compares against
//! (`score::refresh`: FoxIO's JA4 mapping read into `DIR/browsers.toml`).

use super::catalogue::{Catalogue, Crawler};
use super::score::refresh::{merged, BROWSERS_FILE};
use super::score::Published;
use super::Ranges;
use crate::clock::Clock;
use crate::telemetry::Causes;
use futures::future::join_all;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// How long and how large a download may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Connecting to the server.
    pub connect_timeout: Duration,
    /// The whole download.
    pub timeout: Duration,
    /// The largest file accepted (Google's largest ranges file is well under 100 KiB).
    pub max_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(60),
            max_bytes: 8 << 20,
        }
    }
}

/// Why one file was not written, or why nothing could be tried.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    /// The HTTP client or its runtime could not be made.
    #[error("cannot start the HTTP client: {0}")]
    Client(String),
    /// The directory could not be made.
    #[error("cannot create {}: {error}", dir.display())]
    Dir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The file could not be downloaded.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The file is not a ranges file.
    #[error("not a ranges file: {0}")]
    NotRanges(String),
    /// The file could not be written.
    #[error("cannot write {}: {error}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

/// Why a download failed (one per URL, shared by the crawlers that publish there).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The server could not be reached or the transfer broke off.
    #[error("download failed: {0}")]
    Download(String),
    /// The server answered with a status other than 200.
    #[error("the server answered {0}")]
    Status(u16),
    /// The file is larger than [`Limits::max_bytes`].
    #[error("larger than {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
}

/// What became of one crawler's ranges file.
#[derive(Debug)]
pub struct Outcome {
    /// The crawler's name.
    pub crawler: String,
    /// The file name in the directory.
    pub file: String,
    /// Where it was fetched from.
    pub url: String,
    /// The prefixes and bytes written, or why the old file was kept.
    pub result: Result<Written, UpdateError>,
}

/// A ranges file written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// How many prefixes it lists.
    pub prefixes: usize,
    /// Its size.
    pub bytes: usize,
}

/// Downloads the ranges of every crawler with a `ranges_url` into `dir` (made if missing).
/// Each URL is fetched once, all at the same time; the outcomes come in the crawlers' order.
pub fn update(
    crawlers: &[Crawler],
    dir: &Path,
    limits: &Limits,
) -> Result<Vec<Outcome>, UpdateError> {
    std::fs::create_dir_all(dir).map_err(|error| UpdateError::Dir {
        dir: dir.to_owned(),
        error,
    })?;
    let client = reqwest::Client::builder()
        .user_agent(concat!("floodgate/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(limits.connect_timeout)
        .timeout(limits.timeout)
        .build()
        .map_err(|e| UpdateError::Client(Causes(&e).to_string()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| UpdateError::Client(e.to_string()))?;
    let with_url: Vec<(&Crawler, &str)> = crawlers
        .iter()
        .filter_map(|c| Some((c, c.ranges_url.as_deref()?)))
        .collect();
    let mut urls: Vec<&str> = with_url.iter().map(|(_, url)| *url).collect();
    urls.sort_unstable();
    urls.dedup();
    let bodies = runtime.block_on(join_all(
        urls.iter().map(|url| fetch(&client, url, limits.max_bytes)),
    ));
    let fetched: HashMap<&str, Result<Vec<u8>, FetchError>> =
        urls.into_iter().zip(bodies).collect();
    Ok(with_url
        .into_iter()
        .map(|(crawler, url)| {
            let file = crawler.ranges_file_name();
            let result = match fetched.get(url) {
                Some(Ok(body)) => store(dir, &file, body),
                Some(Err(e)) => Err(e.clone().into()),
                None => Err(FetchError::Download("not tried".to_owned()).into()),
            };
            Outcome {
                crawler: crawler.name.to_string(),
                file,
                url: url.to_owned(),
                result,
            }
        })
        .collect())
}

/// The body at `url`, if the server answers 200 with at most `limit` bytes.
async fn fetch(client: &reqwest::Client, url: &str, limit: u64) -> Result<Vec<u8>, FetchError> {
    let download = |e: reqwest::Error| FetchError::Download(Causes(&e.without_url()).to_string());
    let mut answer = client.get(url).send().await.map_err(download)?;
    if answer.status() != reqwest::StatusCode::OK {
        return Err(FetchError::Status(answer.status().as_u16()));
    }
    if answer.content_length().is_some_and(|n| n > limit) {
        return Err(FetchError::TooLarge { limit });
    }
    let mut body = Vec::new();
    while let Some(chunk) = answer.chunk().await.map_err(download)? {
        if (body.len() + chunk.len()) as u64 > limit {
            return Err(FetchError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Checks `body` and writes it to `dir/file` whole: a temporary file renamed over the old one.
fn store(dir: &Path, file: &str, body: &[u8]) -> Result<Written, UpdateError> {
    let prefixes = prefixes_in(body).map_err(UpdateError::NotRanges)?;
    let path = dir.join(file);
    write_whole(dir, &path, body).map_err(|error| UpdateError::Write { path, error })?;
    Ok(Written {
        prefixes,
        bytes: body.len(),
    })
}

fn write_whole(dir: &Path, path: &Path, body: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut out = std::fs::File::create(&temporary)?;
        out.write_all(body)?;
        out.set_permissions(std::fs::Permissions::from_mode(0o644))?;
        out.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// The check a downloaded file passes before it replaces the old one: what the profiler
/// reads ([`Ranges::parse`]), with at least one prefix; how many it lists.
fn prefixes_in(body: &[u8]) -> Result<usize, String> {
    let text = std::str::from_utf8(body).map_err(|e| e.to_string())?;
    match Ranges::parse(text) {
        Ok(ranges) if ranges.is_empty() => Err("the file lists no prefix".to_owned()),
        Ok(ranges) => Ok(ranges.len()),
        Err(e) => Err(e.to_string()),
    }
}

/// The `floodgate bots update DIR [--catalogue FILE]` command: downloads, prints a line per
/// file and a summary. Exit status 0 if every file was written, 1 if any failed (its old file
/// kept), 2 if nothing could be tried (a bad catalogue file, no directory).
pub fn command(
    dir: &Path,
    catalogue: Option<&Path>,
    mapping: Option<&str>,
    clock: &Clock,
) -> ExitCode {
    let catalogue = match catalogue.map(Catalogue::load) {
        None => Catalogue::builtin(),
        Some(Ok(catalogue)) => catalogue,
        Some(Err(e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    run(dir, &catalogue, mapping, clock)
}

/// Downloads the ranges of `catalogue`'s crawlers into `dir` and reports as
/// [`command`] does (with `--config`, the shipped catalogue with the config's
/// `[[bots.crawler]]` entries: `Catalogue::builtin().with_entries(…)`).
/// `mapping`: where FoxIO's JA4 mapping is read (`None`: the shipped `ja4_url`; `"none"`: not
/// read). `clock` dates the browsers' file.
pub fn run(dir: &Path, catalogue: &Catalogue, mapping: Option<&str>, clock: &Clock) -> ExitCode {
    let outcomes = match update(catalogue.crawlers(), dir, &Limits::default()) {
        Ok(outcomes) => outcomes,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let today = today(clock);
    let browsers_failed = match mapping {
        Some("none") => false,
        Some(url) => !browsers(dir, url, &Limits::default(), &today),
        None => !browsers(dir, &Published::ja4_url(), &Limits::default(), &today),
    };
    let failed = report(&outcomes, dir) + usize::from(browsers_failed);
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `clock`'s day (UTC), as the browsers' file is dated.
fn today(clock: &Clock) -> String {
    let now = i64::try_from(clock.now_s()).unwrap_or(0);
    jiff::Timestamp::from_second(now).map_or_else(
        |_| "today".to_owned(),
        |t| t.strftime("%Y-%m-%d").to_string(),
    )
}

/// Reads FoxIO's JA4 mapping at `url` and writes the browsers' fingerprints the score compares
/// against into `dir/browsers.toml` (`score::refresh`), dated `today`; prints what became of
/// it; whether it was written.
fn browsers(dir: &Path, url: &str, limits: &Limits, today: &str) -> bool {
    let file = dir.join(BROWSERS_FILE);
    let written = fetch_one(url, limits).and_then(|body| {
        let mapping = String::from_utf8_lossy(&body);
        let (text, added) =
            merged(&mapping, today).map_err(|e| UpdateError::NotRanges(e.to_string()))?;
        write_whole(dir, &file, text.as_bytes())
            .map_err(|error| UpdateError::Write {
                path: file.clone(),
                error,
            })
            .map(|()| added)
    });
    match written {
        Ok(added) => {
            println!("{BROWSERS_FILE}: the shipped lists and {added} JA4s from <{url}>");
            true
        }
        Err(e) => {
            eprintln!("{BROWSERS_FILE}: kept the old file: {e} <{url}>");
            false
        }
    }
}

/// The body at `url`, fetched on a runtime of its own.
fn fetch_one(url: &str, limits: &Limits) -> Result<Vec<u8>, UpdateError> {
    let client = reqwest::Client::builder()
        .user_agent(concat!("floodgate/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(limits.connect_timeout)
        .timeout(limits.timeout)
        .build()
        .map_err(|e| UpdateError::Client(Causes(&e).to_string()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| UpdateError::Client(e.to_string()))?;
    Ok(runtime.block_on(fetch(&client, url, limits.max_bytes))?)
}

/// Prints one line per file (written on stdout, kept on stderr) and a summary; the number
/// of failures.
fn report(outcomes: &[Outcome], dir: &Path) -> usize {
    let mut failed = 0;
    for outcome in outcomes {
        match &outcome.result {
            Ok(Written { prefixes, bytes }) => println!(
                "{}: {prefixes} prefixes, {bytes} bytes ({})",
                outcome.file, outcome.crawler
            ),
            Err(e) => {
                failed += 1;
                eprintln!(
                    "{}: kept the old file ({}): {} <{}>",
                    outcome.file, outcome.crawler, e, outcome.url
                );
            }
        }
    }
    let written = outcomes.len() - failed;
    println!(
        "{written} of {} ranges files written to {}{}",
        outcomes.len(),
        dir.display(),
        if failed > 0 {
            format!("; {failed} failed, their old files kept")
        } else {
            String::new()
        }
    );
    failed
}

#[cfg(test)]
mod tests;
