//! [`Traps`]: the trap's tables as the proxy uses them, on either store: who read
//! /robots.txt, whom the trap banned (read on the hot path from memory), the trap path.

use super::bans::BanTable;
use super::error::TrapError;
use super::fleet::TrapFleet;
use super::mirror::Mirror;
use super::path::{is_path, kept_in, random_trap_path};
use super::readers::{Noted, ReaderTable};
use super::settings::TrapSettings;
use super::target::Wanted;
use super::target::{address_digest, network_digest, Field, TrapBan, TrapScope, TrapTarget};
use crate::clock::Clock;
use crate::identity::{Identity, IdentityKey};
use crate::limiter::RedisDriver;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Reads of /robots.txt one instance of a fleet remembers itself (the fleet's table is in
/// Redis).
const READERS_HERE: usize = 10_000;

/// A reader seen here within this is not told to the fleet again.
const QUIET_MS: u64 = 60_000;

/// Where the tables live.
enum Keeping {
    /// In this process; the trap path in this file when given.
    Memory { path_file: Option<PathBuf> },
    /// In Redis, for the fleet.
    Fleet(Mirror),
}

/// The trap's tables.
pub struct Traps {
    key: IdentityKey,
    settings: TrapSettings,
    window_ms: AtomicU64,
    /// Every ban (memory), or the fleet's mirrored.
    bans: BanTable,
    /// Every reader (memory), or the ones seen here lately.
    readers: ReaderTable,
    keeping: Keeping,
    path: tokio::sync::OnceCell<String>,
    clock: Clock,
}

impl Traps {
    /// Tables in this process, digesting with `key` (the store's identity digest key), bounded
    /// by `settings`. The trap path is kept in `path_file` when given (a file of its own,
    /// created 0600; e.g. beside `admin.state_file`), else drawn anew by each process.
    pub fn in_memory(key: IdentityKey, settings: TrapSettings, path_file: Option<PathBuf>) -> Self {
        let readers = ReaderTable::new(settings.max_readers);
        Self::new(key, settings, readers, Keeping::Memory { path_file })
    }

    /// The fleet's tables in Redis through `driver`, digesting with `key` (the fleet's
    /// identity digest key: every instance must use the same), bounded by `settings` (every
    /// instance should use the same). The bans are empty here until the first
    /// [`refresh`](Self::refresh).
    pub fn on_redis(key: IdentityKey, settings: TrapSettings, driver: Arc<RedisDriver>) -> Self {
        let mirror = Mirror::new(TrapFleet::new(driver));
        let readers = ReaderTable::new(READERS_HERE);
        Self::new(key, settings, readers, Keeping::Fleet(mirror))
    }

    fn new(
        key: IdentityKey,
        settings: TrapSettings,
        readers: ReaderTable,
        keeping: Keeping,
    ) -> Self {
        Self {
            key,
            window_ms: AtomicU64::new(millis(settings.window)),
            bans: BanTable::new(settings.max_bans, settings.fold_at),
            settings,
            readers,
            keeping,
            path: tokio::sync::OnceCell::new(),
            clock: Clock::System,
        }
    }

    /// The same tables, expiring bans by `clock` in [`refresh`](Self::refresh).
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }

    /// Remembers reads of /robots.txt for `window` from now on (`trap_window`, on a reload).
    pub fn set_window(&self, window: Duration) {
        self.window_ms.store(millis(window), Ordering::Relaxed);
    }

    /// Whether the tables are the fleet's.
    pub fn is_shared(&self) -> bool {
        matches!(self.keeping, Keeping::Fleet(_))
    }

    /// Notes that `ip` fetched /robots.txt at `now_ms` (its digest only). On Redis, an
    /// address seen here within a minute is not written again.
    pub async fn read_robots(&self, ip: IpAddr, now_ms: u64) -> Result<(), TrapError> {
        let reader = address_digest(&self.key, ip);
        let cutoff = now_ms.saturating_sub(self.window_ms.load(Ordering::Relaxed));
        match &self.keeping {
            Keeping::Memory { .. } => {
                self.readers.note(reader, now_ms, 0, cutoff);
                Ok(())
            }
            Keeping::Fleet(mirror) => match self.readers.note(reader, now_ms, QUIET_MS, cutoff) {
                Noted::Recent => Ok(()),
                Noted::New => {
                    let max = self.settings.max_readers;
                    mirror.fleet.reader(&reader, now_ms, cutoff, max).await
                }
            },
        }
    }

    /// Whether `ip` fetched /robots.txt within `window` before `now_ms`. An error when the
    /// fleet cannot say (the caller then does not ban).
    pub async fn has_read(
        &self,
        ip: IpAddr,
        window: Duration,
        now_ms: u64,
    ) -> Result<bool, TrapError> {
        let reader = address_digest(&self.key, ip);
        let since = now_ms.saturating_sub(millis(window));
        if self.readers.read_since(&reader, since) {
            return Ok(true);
        }
        match &self.keeping {
            Keeping::Memory { .. } => Ok(false),
            Keeping::Fleet(mirror) => mirror.fleet.has_read(&reader, since).await,
        }
    }

    /// Bans `target` for `for_` from `now_ms`, fleet-wide on Redis (every instance holds it
    /// within a second). When Redis fails the ban is still held here, and the error returned.
    pub async fn ban(
        &self,
        target: TrapTarget,
        for_: Duration,
        now_ms: u64,
    ) -> Result<(), TrapError> {
        let wanted = Wanted::of(&target, &self.key);
        let until_ms = now_ms.saturating_add(millis(for_));
        let Keeping::Fleet(mirror) = &self.keeping else {
            self.bans.ban(&wanted, until_ms, now_ms);
            return Ok(());
        };
        let bounds = (self.settings.max_bans, self.settings.fold_at);
        match mirror.fleet.ban(&wanted, (until_ms, now_ms), bounds).await {
            Ok(made) => {
                self.bans.put(made.field, made.held);
                Ok(())
            }
            Err(e) => {
                self.bans.ban(&wanted, until_ms, now_ms);
                Err(e)
            }
        }
    }

    /// The trap's ban of a request from `ip` carrying `identity` (its source and digest) at
    /// `now_ms`: of the address, of its /48, or of the identity. From memory, no I/O.
    pub fn banned(
        &self,
        ip: Option<IpAddr>,
        identity: Option<(&str, &Identity)>,
        now_ms: u64,
    ) -> Option<TrapBan> {
        if self.bans.is_empty() {
            return None;
        }
        let by_identity = || {
            let (source, digest) = identity?;
            let field = Field::new(TrapScope::Identity, *digest);
            self.bans.find(&field, Some(source), now_ms)
        };
        let by_address = || {
            let ip = ip?;
            let field = Field::new(TrapScope::Address, address_digest(&self.key, ip));
            self.bans.find(&field, None, now_ms).or_else(|| {
                let field = Field::new(TrapScope::Network48, network_digest(&self.key, ip)?);
                self.bans.find(&field, None, now_ms)
            })
        };
        by_address().or_else(by_identity)
    }

    /// Reads the bans made elsewhere (on Redis; the lead's steering loop calls it every
    /// [`READ_EVERY`](super::READ_EVERY)) and drops the oldest bans that ended.
    pub async fn refresh(&self) -> Result<(), TrapError> {
        self.bans.expire(self.clock.now_ms());
        match &self.keeping {
            Keeping::Memory { .. } => Ok(()),
            Keeping::Fleet(mirror) => mirror.refresh(&self.bans).await,
        }
    }

    /// The trap path when the config names none: the fleet's (made by the first instance to
    /// ask, the same on every instance and across restarts), or this process's (kept in the
    /// path file when given). Asked once; an error is asked again next time.
    pub async fn trap_path(&self) -> Result<String, TrapError> {
        let path = self.path.get_or_try_init(|| async {
            match &self.keeping {
                Keeping::Memory {
                    path_file: Some(file),
                } => kept_in(file),
                Keeping::Memory { path_file: None } => random_trap_path(),
                Keeping::Fleet(mirror) => {
                    let path = mirror.fleet.path(&random_trap_path()?).await?;
                    is_path(&path)
                        .then_some(path.clone())
                        .ok_or(TrapError::BadPath(path))
                }
            }
        });
        path.await.cloned()
    }

    /// How many bans are held here (some may have ended since the last refresh).
    pub fn bans_held(&self) -> usize {
        self.bans.len()
    }

    /// How many readers of /robots.txt are remembered here.
    pub fn readers_here(&self) -> usize {
        self.readers.len()
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
