//! What outlives a reload: the trap's fleet-wide tables, the backend's copies being followed
//! (a reload that keeps a host's target, refresh and trap keeps its copy, with no new read),
//! and the thread their reads run on. Each config's [`SiteRobots`] is made here.

use super::fetch::{Fetcher, Following, RobotsCopy, Settings, Target};
use super::site::Copies;
use super::trap::Traps;
use super::{managed_file, RobotsSettings, Served, SiteRobots, Source};
use crate::bots::dns::Background;
use crate::bots::Catalogue;
use crate::clock::Clock;
use crate::telemetry::RobotsCounters;
use arc_swap::ArcSwap;
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;
use tokio::sync::watch;

/// How long making a config waits for the fleet's trap path.
const TRAP_PATH_WAIT: Duration = Duration::from_secs(2);

/// One host's backend copy, followed in the background, and the file served from it.
pub struct Followed {
    _following: Following,
    target: Target,
    refresh: Duration,
    trap: Option<Arc<str>>,
    served: Arc<ArcSwap<Served>>,
}

impl Followed {
    /// The file served and enforced for the host now.
    pub fn served(&self) -> Arc<Served> {
        self.served.load_full()
    }

    fn is(&self, target: &Target, refresh: Duration, trap: &Option<Arc<str>>) -> bool {
        self.target == *target && self.refresh == refresh && self.trap == *trap
    }
}

/// Why robots.txt cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum RobotsError {
    /// The thread the backend's copies are read on could not start.
    #[error("the robots.txt reader thread cannot start: {0}")]
    Thread(String),
    /// The client reading the backend's copies could not be made.
    #[error("the robots.txt reader cannot be made: {0}")]
    Client(String),
}

/// robots.txt's parts that outlive a reload.
pub struct RobotsKeeper {
    traps: Arc<Traps>,
    counters: RobotsCounters,
    clock: Clock,
    background: OnceLock<Background>,
    followed: Mutex<Vec<Weak<Followed>>>,
    /// Never sent: a following ends when its handle drops.
    _shutdown: watch::Sender<bool>,
    shutdown: watch::Receiver<bool>,
}

impl RobotsKeeper {
    /// A keeper of `traps`, counting into `counters`, by `clock`.
    pub fn new(traps: Arc<Traps>, counters: RobotsCounters, clock: Clock) -> Self {
        let (sender, shutdown) = watch::channel(false);
        Self {
            traps,
            counters,
            clock,
            background: OnceLock::new(),
            followed: Mutex::new(Vec::new()),
            _shutdown: sender,
            shutdown,
        }
    }

    /// The trap's tables (refreshed by the app every [`super::trap::READ_EVERY`]).
    pub fn traps(&self) -> &Arc<Traps> {
        &self.traps
    }

    /// robots.txt as `settings` say, for `hosts` (the backend's copies; the first answers for
    /// hosts not named), with `catalogue`'s crawlers for a managed file's categories.
    pub fn site(
        &self,
        settings: &RobotsSettings,
        catalogue: &Catalogue,
        hosts: Vec<Target>,
    ) -> Result<SiteRobots, RobotsError> {
        self.traps.set_window(settings.trap_window);
        let trap = self.trap_path(settings);
        let copies = match settings.source {
            Source::Managed => {
                let txt = managed_file(settings, catalogue, trap.as_deref());
                Copies::Managed(Arc::new(Served::new(txt, None)))
            }
            Source::Backend => Copies::Backend(self.follow_all(hosts, settings.refresh, &trap)?),
        };
        Ok(SiteRobots {
            copies,
            trap,
            window: settings.trap_window,
            ban: settings.trap_ban,
            traps: self.traps.clone(),
            counters: self.counters.clone(),
            clock: self.clock.clone(),
        })
    }

    /// The trap's path: the configured one, else the fleet's (waited for a moment; a fleet
    /// that cannot say leaves the trap unarmed under this config, with a WARN).
    fn trap_path(&self, settings: &RobotsSettings) -> Option<Arc<str>> {
        if let Some(trap) = &settings.trap {
            return Some(Arc::from(trap.as_str()));
        }
        let background = self.background().ok()?;
        let (sender, answer) = std::sync::mpsc::channel();
        let traps = self.traps.clone();
        background.spawn(async move {
            let _ = sender.send(traps.trap_path().await);
        });
        match answer.recv_timeout(TRAP_PATH_WAIT) {
            Ok(Ok(path)) => Some(Arc::from(path)),
            Ok(Err(e)) => {
                log::warn!("the robots.txt trap is not armed: its path cannot be read ({e})");
                None
            }
            Err(_) => {
                log::warn!("the robots.txt trap is not armed: its path was not read in time");
                None
            }
        }
    }

    /// The followed copies of `hosts`: those already followed the same way are kept.
    fn follow_all(
        &self,
        hosts: Vec<Target>,
        refresh: Duration,
        trap: &Option<Arc<str>>,
    ) -> Result<Vec<(String, Arc<Followed>)>, RobotsError> {
        let mut followed = self.followed.lock();
        followed.retain(|weak| weak.strong_count() > 0);
        let mut out = Vec::with_capacity(hosts.len());
        for target in hosts {
            let kept = followed
                .iter()
                .filter_map(Weak::upgrade)
                .find(|f| f.is(&target, refresh, trap));
            let one = match kept {
                Some(one) => one,
                None => {
                    let one = Arc::new(self.follow(target, refresh, trap.clone())?);
                    followed.push(Arc::downgrade(&one));
                    one
                }
            };
            out.push((one.target.host().to_owned(), one));
        }
        Ok(out)
    }

    /// Starts following `target`'s copy every `refresh`, served with `trap`.
    fn follow(
        &self,
        target: Target,
        refresh: Duration,
        trap: Option<Arc<str>>,
    ) -> Result<Followed, RobotsError> {
        let settings = Settings {
            refresh,
            clock: self.clock.clone(),
            ..Settings::default()
        };
        let fetcher = Fetcher::new(settings).map_err(|e| RobotsError::Client(e.to_string()))?;
        let served = Arc::new(ArcSwap::from_pointee(Served::of_copy(
            &RobotsCopy::NoCopy,
            trap.as_deref(),
        )));
        let (into, with_trap) = (served.clone(), trap.clone());
        let on_change = Box::new(move |copy: &Arc<RobotsCopy>| {
            into.store(Arc::new(Served::of_copy(copy, with_trap.as_deref())));
        });
        let background = self.background()?;
        let _inside = background.handle().enter();
        let following = fetcher.spawn_with(target.clone(), self.shutdown.clone(), on_change);
        Ok(Followed {
            _following: following,
            target,
            refresh,
            trap,
            served,
        })
    }

    fn background(&self) -> Result<&Background, RobotsError> {
        if let Some(started) = self.background.get() {
            return Ok(started);
        }
        let started = Background::start("floodgate-robots")
            .map_err(|e| RobotsError::Thread(e.to_string()))?;
        Ok(self.background.get_or_init(|| started))
    }
}
