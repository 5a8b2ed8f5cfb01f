//! Where access-log lines go: a bounded queue to a writer thread, which appends them to the
//! file (or stderr) and flushes whenever the queue runs dry. A full queue drops the line
//! rather than hold a request; drops are logged once a minute. The thread ends, its lines
//! flushed, when the last request of the snapshot that opened it is done.

use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Lines waiting at most: about 16 MB of a flood's log.
const QUEUE: usize = 65_536;

/// The sending end of the log's writer thread.
pub(super) struct Sink {
    lines: SyncSender<String>,
    dropped: Arc<AtomicU64>,
}

impl Sink {
    /// Lines appended to the file at `path` (created if missing).
    pub(super) fn file(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self::writing_to(Box::new(file)))
    }

    /// Lines written to stderr.
    pub(super) fn stderr() -> Self {
        Self::writing_to(Box::new(std::io::stderr()))
    }

    fn writing_to(out: Box<dyn Write + Send>) -> Self {
        let (lines, queue) = sync_channel(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let counted = dropped.clone();
        let spawned = std::thread::Builder::new()
            .name("access-log".into())
            .spawn(move || write_lines(queue, BufWriter::new(out), &counted));
        if let Err(e) = spawned {
            log::error!("the access log's writer cannot start: {e}");
        }
        Self { lines, dropped }
    }

    /// Queues `line`; drops it when the writer is that far behind.
    pub(super) fn send(&self, line: String) {
        if let Err(TrySendError::Full(_)) = self.lines.try_send(line) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn write_lines(
    queue: Receiver<String>,
    mut out: BufWriter<Box<dyn Write + Send>>,
    dropped: &AtomicU64,
) {
    let mut told: Option<Instant> = None;
    loop {
        let line = match queue.try_recv() {
            Ok(line) => line,
            Err(_) => {
                let _ = out.flush();
                match queue.recv() {
                    Ok(line) => line,
                    Err(_) => break,
                }
            }
        };
        let failed = writeln!(out, "{line}").is_err();
        if (failed || dropped.load(Ordering::Relaxed) > 0)
            && told.is_none_or(|t| t.elapsed() > MINUTE)
        {
            let lost = dropped.swap(0, Ordering::Relaxed);
            log::warn!("access-log lines were lost ({lost} dropped: the log cannot keep up; write failed: {failed})");
            told = Some(Instant::now());
        }
    }
    let _ = out.flush();
}

const MINUTE: Duration = Duration::from_secs(60);
