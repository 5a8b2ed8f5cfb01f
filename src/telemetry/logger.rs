//! The process's logger: `env_logger` (`RUST_LOG`, by default `floodgate=info,pingora=warn`)
//! behind a filter that lowers pingora's lines about events that are part of normal work, so
//! that what stays at ERROR and WARN is what an operator should act on:
//! - `failed to acquire reusable stream`: a pooled backend connection was closed (or taken)
//!   while it waited in the pool; pingora connects anew. Ordinary traffic → DEBUG.
//! - `No incoming socket transfer, sleep 1s and try again`: a new instance started with
//!   `--upgrade` waits for the running one to hand over its sockets, as designed → INFO. If the
//!   hand-over never comes, pingora still says so at ERROR (`Error accepting socket transfer`,
//!   or the failed start).

use log::{Level, LevelFilter, Log, Metadata, Record};

/// The filter `RUST_LOG` replaces.
const DEFAULT_FILTER: &str = "floodgate=info,pingora=warn";

/// A pingora line lowered: the target it comes from, how its message begins, and the level
/// it is written at instead of ERROR.
struct Lowered {
    target: &'static str,
    begins: &'static str,
    level: Level,
}

const LOWERED: [Lowered; 2] = [
    Lowered {
        target: "pingora_core::connectors",
        begins: "failed to acquire reusable stream",
        level: Level::Debug,
    },
    Lowered {
        target: "pingora_core::server::transfer_fd",
        begins: "No incoming socket transfer",
        level: Level::Info,
    },
];

/// The level `record` is written at: its own, or a lower one for a line of [`LOWERED`].
fn level_of(record: &Record<'_>) -> Level {
    if record.level() != Level::Error || !record.target().starts_with("pingora") {
        return record.level();
    }
    let lowered = LOWERED.iter().find(|l| record.target() == l.target);
    let Some(lowered) = lowered else {
        return record.level();
    };
    let begins = match record.args().as_str() {
        Some(text) => text.starts_with(lowered.begins),
        None => record.args().to_string().starts_with(lowered.begins),
    };
    if begins {
        lowered.level
    } else {
        record.level()
    }
}

/// `env_logger` with pingora's routine lines lowered.
struct Quiet {
    inner: env_logger::Logger,
}

impl Log for Quiet {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        self.inner.enabled(metadata)
    }

    fn log(&self, record: &Record<'_>) {
        let level = level_of(record);
        if level == record.level() {
            return self.inner.log(record);
        }
        let lowered = Record::builder()
            .args(*record.args())
            .level(level)
            .target(record.target())
            .module_path(record.module_path())
            .file(record.file())
            .line(record.line())
            .build();
        if self.inner.enabled(lowered.metadata()) {
            self.inner.log(&lowered);
        }
    }

    fn flush(&self) {
        self.inner.flush()
    }
}

/// Installs the logger; does nothing if one is installed already.
pub fn init() {
    let inner =
        env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(DEFAULT_FILTER))
            .build();
    let max: LevelFilter = inner.filter();
    if log::set_boxed_logger(Box::new(Quiet { inner })).is_ok() {
        log::set_max_level(max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(target: &str, level: Level, message: std::fmt::Arguments<'_>) -> Level {
        let record = Record::builder()
            .args(message)
            .level(level)
            .target(target)
            .build();
        level_of(&record)
    }

    #[test]
    fn routine_pingora_lines_are_lowered_and_others_kept() {
        let pool = "pingora_core::connectors";
        let transfer = "pingora_core::server::transfer_fd";
        let reuse = level(
            pool,
            Level::Error,
            format_args!("failed to acquire reusable stream"),
        );
        assert_eq!(reuse, Level::Debug);
        let wait = std::time::Duration::from_secs(1);
        let waiting = level(
            transfer,
            Level::Error,
            format_args!("No incoming socket transfer, sleep {wait:?} and try again"),
        );
        assert_eq!(waiting, Level::Info);
        // Real failures keep their level.
        let failed = level(
            transfer,
            Level::Error,
            format_args!("Error accepting socket transfer: {}", "EBADF"),
        );
        assert_eq!(failed, Level::Error);
        let other = level(pool, Level::Error, format_args!("connection refused"));
        assert_eq!(other, Level::Error);
        // The same words from another module are not pingora's routine.
        let ours = level(
            "floodgate::proxy",
            Level::Error,
            format_args!("failed to acquire reusable stream"),
        );
        assert_eq!(ours, Level::Error);
    }
}
