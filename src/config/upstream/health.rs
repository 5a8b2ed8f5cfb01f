//! `[upstream.health]` and a pool's `health` table → its health settings. A pool's keys
//! override `upstream.health`'s, key by key. Each value is typed, so toml locates a bad one
//! where it stands; its message names the table it is written in: `upstream.health.interval`,
//! or `upstream.pools.<name>.health.interval` (a key type is fixed, so a pool's is named as
//! the reference names it, and the location says which pool).

use super::values::ProbePath;
use crate::config::value::{Bounded, Key, PositivePeriod};
use crate::proxy::{ActiveCheck, HealthSettings};
use serde::Deserialize;
use std::marker::PhantomData;
use std::time::Duration;

/// Where a health table is written, as its keys' names.
pub(crate) trait HealthTable {
    /// `path`'s name; the others alike.
    const PATH: &'static str;
    const INTERVAL: &'static str;
    const TIMEOUT: &'static str;
    const UNHEALTHY_AFTER: &'static str;
    const HEALTHY_AFTER: &'static str;
    const EJECT_AFTER: &'static str;
    const EJECT_FOR: &'static str;
}

/// Declares a [`HealthTable`] whose keys are under `$prefix`.
macro_rules! health_table {
    ($(#[$doc:meta])* $table:ident = $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub(crate) struct $table;
        impl HealthTable for $table {
            const PATH: &'static str = concat!($prefix, ".path");
            const INTERVAL: &'static str = concat!($prefix, ".interval");
            const TIMEOUT: &'static str = concat!($prefix, ".timeout");
            const UNHEALTHY_AFTER: &'static str = concat!($prefix, ".unhealthy_after");
            const HEALTHY_AFTER: &'static str = concat!($prefix, ".healthy_after");
            const EJECT_AFTER: &'static str = concat!($prefix, ".eject_after");
            const EJECT_FOR: &'static str = concat!($prefix, ".eject_for");
        }
    };
}

health_table!(
    /// `[upstream.health]`.
    UpstreamHealth = "upstream.health"
);
health_table!(
    /// A pool's `health` table.
    PoolHealth = "upstream.pools.<name>.health"
);

/// Declares key types generic over the [`HealthTable`] they are written in.
macro_rules! health_keys {
    ($($(#[$doc:meta])* $key:ident = $name:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            #[derive(Debug)]
            pub(crate) struct $key<T>(PhantomData<T>);
            impl<T: HealthTable> Key for $key<T> {
                const NAME: &'static str = T::$name;
            }
        )*
    };
}

health_keys! {
    /// `path`.
    Path = PATH,
    /// `interval`.
    Interval = INTERVAL,
    /// `timeout`.
    Timeout = TIMEOUT,
    /// `unhealthy_after`.
    UnhealthyAfter = UNHEALTHY_AFTER,
    /// `healthy_after`.
    HealthyAfter = HEALTHY_AFTER,
    /// `eject_after`.
    EjectAfter = EJECT_AFTER,
    /// `eject_for`.
    EjectFor = EJECT_FOR,
}

/// The largest `unhealthy_after`, `healthy_after` and `eject_after`.
const MAX_COUNT: i64 = 1000;

/// `[upstream.health]` or a pool's `health` table (`T` names its keys); a pool's keys
/// override the upstream's.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, bound = "")]
pub(crate) struct HealthFile<T: HealthTable> {
    active: Option<bool>,
    path: Option<ProbePath<Path<T>>>,
    interval: Option<PositivePeriod<Interval<T>>>,
    timeout: Option<PositivePeriod<Timeout<T>>>,
    unhealthy_after: Option<Bounded<UnhealthyAfter<T>, 1, MAX_COUNT>>,
    healthy_after: Option<Bounded<HealthyAfter<T>, 1, MAX_COUNT>>,
    eject_after: Option<Bounded<EjectAfter<T>, 0, MAX_COUNT>>,
    eject_for: Option<PositivePeriod<EjectFor<T>>>,
}

/// The keys one health table gives, whichever table it is.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Given<'a> {
    active: Option<bool>,
    path: Option<&'a str>,
    interval: Option<Duration>,
    timeout: Option<Duration>,
    unhealthy_after: Option<usize>,
    healthy_after: Option<usize>,
    eject_after: Option<u32>,
    eject_for: Option<Duration>,
}

impl<T: HealthTable> HealthFile<T> {
    /// The keys this table gives.
    pub(super) fn given(&self) -> Given<'_> {
        Given {
            active: self.active,
            path: self.path.as_ref().map(ProbePath::get),
            interval: self.interval.as_ref().map(PositivePeriod::get),
            timeout: self.timeout.as_ref().map(PositivePeriod::get),
            unhealthy_after: self.unhealthy_after.as_ref().map(Bounded::count),
            healthy_after: self.healthy_after.as_ref().map(Bounded::count),
            eject_after: self.eject_after.as_ref().map(|n| n.count() as u32),
            eject_for: self.eject_for.as_ref().map(PositivePeriod::get),
        }
    }
}

impl<'a> Given<'a> {
    /// These keys, each one not given taken from `under`.
    fn over(self, under: Given<'a>) -> Given<'a> {
        Given {
            active: self.active.or(under.active),
            path: self.path.or(under.path),
            interval: self.interval.or(under.interval),
            timeout: self.timeout.or(under.timeout),
            unhealthy_after: self.unhealthy_after.or(under.unhealthy_after),
            healthy_after: self.healthy_after.or(under.healthy_after),
            eject_after: self.eject_after.or(under.eject_after),
            eject_for: self.eject_for.or(under.eject_for),
        }
    }
}

/// A pool's health: each key from its own table (`own`), else from `upstream.health`
/// (`inherited`), else the default. Active checks run when either table exists, unless
/// `active = false`.
pub(super) fn health(own: Option<Given<'_>>, inherited: Option<Given<'_>>) -> HealthSettings {
    let tables = own.is_some() || inherited.is_some();
    let given = own.unwrap_or_default().over(inherited.unwrap_or_default());
    let passive = HealthSettings::default();
    let active = ActiveCheck::default();
    HealthSettings {
        active: (tables && given.active != Some(false)).then(|| ActiveCheck {
            path: given.path.map_or(active.path, str::to_owned),
            interval: given.interval.unwrap_or(active.interval),
            timeout: given.timeout.unwrap_or(active.timeout),
            unhealthy_after: given.unhealthy_after.unwrap_or(active.unhealthy_after),
            healthy_after: given.healthy_after.unwrap_or(active.healthy_after),
        }),
        eject_after: given.eject_after.unwrap_or(passive.eject_after),
        eject_for: given.eject_for.unwrap_or(passive.eject_for),
    }
}
