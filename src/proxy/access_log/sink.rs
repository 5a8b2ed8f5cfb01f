//! Where access-log lines go: a bounded queue to a writer thread, which appends them to the
//! file (or stderr) and flushes whenever the queue runs dry. A full queue drops the line
//! rather than hold a request; drops are logged once a minute. The thread ends, its lines
//! flushed, when the last request of the snapshot that opened it is done. Lines queued but
//! not yet flushed are counted, so a shutdown can wait for them.

use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Lines waiting at most: about 16 MB of a flood's log.
const QUEUE: usize = 65_536;

/// The sending end of the log's writer thread.
pub(super) struct Sink {
    lines: SyncSender<String>,
    dropped: Arc<AtomicU64>,
    /// Lines queued and not yet flushed.
    unwritten: Arc<AtomicUsize>,
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
        let unwritten = Arc::new(AtomicUsize::new(0));
        let counts = Counts {
            dropped: dropped.clone(),
            unwritten: unwritten.clone(),
        };
        let spawned = std::thread::Builder::new()
            .name("access-log".into())
            .spawn(move || write_lines(queue, BufWriter::new(out), &counts));
        if let Err(e) = spawned {
            log::error!("the access log's writer cannot start: {e}");
        }
        Self {
            lines,
            dropped,
            unwritten,
        }
    }

    /// Queues `line`; drops it when the writer is that far behind.
    pub(super) fn send(&self, line: String) {
        // Counted before the writer can see it, so the count never goes below zero.
        self.unwritten.fetch_add(1, Ordering::AcqRel);
        if let Err(e) = self.lines.try_send(line) {
            self.unwritten.fetch_sub(1, Ordering::AcqRel);
            if let TrySendError::Full(_) = e {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Whether every line queued so far is flushed.
    pub(super) fn is_written(&self) -> bool {
        self.unwritten.load(Ordering::Acquire) == 0
    }
}

/// What the writer counts: lines dropped, lines not yet flushed.
struct Counts {
    dropped: Arc<AtomicU64>,
    unwritten: Arc<AtomicUsize>,
}

fn write_lines(
    queue: Receiver<String>,
    mut out: BufWriter<Box<dyn Write + Send>>,
    counts: &Counts,
) {
    let dropped = &*counts.dropped;
    let mut told: Option<Instant> = None;
    let mut unflushed = 0;
    loop {
        let line = match queue.try_recv() {
            Ok(line) => line,
            Err(_) => {
                let _ = out.flush();
                counts.unwritten.fetch_sub(unflushed, Ordering::AcqRel);
                unflushed = 0;
                match queue.recv() {
                    Ok(line) => line,
                    Err(_) => break,
                }
            }
        };
        unflushed += 1;
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
