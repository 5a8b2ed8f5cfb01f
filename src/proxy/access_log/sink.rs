//! Where access-log lines go: the bounded [`Writer`] to a thread of the log's own, which
//! appends them to the file (or stderr) and flushes after each batch (the lines waiting, up
//! to 1,024). A full queue drops the line rather than hold a request; lost lines are counted
//! and warned about once a minute. The thread ends, its lines flushed, when the last request
//! of the snapshot that opened it is done. Lines queued but not yet flushed are counted, so a
//! shutdown can wait for them.

use crate::clock::Clock;
use crate::telemetry::writer::{Batch, Bounds, Cause, Report, Writer};
use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Duration;

/// Lines waiting at most (about 16 MB of a flood's log), and written between two flushes.
const BOUNDS: Bounds = Bounds {
    queue: 65_536,
    batch: 1024,
    linger: Duration::ZERO,
};

/// The sending end of the log's writer thread.
pub(super) struct Sink {
    lines: Writer<String>,
}

impl Sink {
    /// Lines appended to the file at `path` (created if missing).
    pub(super) fn file(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Self::writing_to(Box::new(file))
    }

    /// Lines written to stderr.
    pub(super) fn stderr() -> std::io::Result<Self> {
        Self::writing_to(Box::new(std::io::stderr()))
    }

    fn writing_to(out: Box<dyn Write + Send>) -> std::io::Result<Self> {
        let report = Report {
            name: "access log",
            unit: "lines",
            when_full: "the log cannot keep up",
            metric: None,
        };
        let (lines, batches) = Writer::new(report, BOUNDS, Clock::System);
        batches.drain_on_thread("access-log", move || {
            let mut out = BufWriter::new(out);
            move |batch: &mut Batch<'_, String>| write_lines(&mut out, batch)
        })?;
        Ok(Self { lines })
    }

    /// Queues `line`; drops it when the writer is that far behind.
    pub(super) fn send(&self, line: String) {
        self.lines.send(line);
    }

    /// Whether every line queued so far is flushed.
    pub(super) fn is_written(&self) -> bool {
        self.lines.is_written()
    }
}

/// Appends `batch` to `out` and flushes it; lines that fail are lost (all of the batch's if
/// the flush fails).
fn write_lines(out: &mut impl Write, batch: &Batch<'_, String>) {
    let mut failed = 0;
    let mut error = None;
    for line in batch.iter() {
        if let Err(e) = writeln!(out, "{line}") {
            failed += 1;
            error = Some(e);
        }
    }
    if let Err(e) = out.flush() {
        failed = batch.len();
        error = Some(e);
    }
    if let Some(e) = error {
        let why = format!("the log could not be written: {e}");
        batch.lost(failed as u64, Cause::Failed(&why));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink whose writes fail after `room` bytes.
    struct Full {
        room: usize,
        written: Vec<u8>,
    }

    impl Write for Full {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            if data.len() > self.room {
                return Err(std::io::Error::other("no space left on device"));
            }
            self.room -= data.len();
            self.written.extend_from_slice(data);
            Ok(data.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn report() -> Report {
        Report {
            name: "access log",
            unit: "lines",
            when_full: "the log cannot keep up",
            metric: None,
        }
    }

    #[test]
    fn lines_are_written_one_a_line_and_failures_are_lost() {
        let (lines, mut batches) = Writer::new(report(), BOUNDS, Clock::set_at(0));
        for line in ["GET / status=200", "GET /a status=429", "GET /b status=403"] {
            lines.send(line.to_owned());
        }
        let mut out = Full {
            room: 40,
            written: Vec::new(),
        };
        let batch = futures::executor::block_on(batches.next()).expect("a batch");
        write_lines(&mut out, &batch);
        drop(batch);
        let written = String::from_utf8(out.written).unwrap();
        assert_eq!(written, "GET / status=200\nGET /a status=429\n");
        assert_eq!(lines.lost(), 1, "the line that did not fit");
        assert!(lines.is_written());
    }
}
