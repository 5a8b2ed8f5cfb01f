//! Holding crawlers to the site's robots.txt: the file parsed as RFC 9309 says a crawler must
//! read it ([`RobotsTxt`], what it says about a request: [`Verdict`], [`CrawlDelay`]), which of
//! its groups a request's User-Agent names ([`Agents`]), the file Floodgate writes from
//! `[robots] groups` ([`managed`]) or the backend's copy read in the background ([`fetch`]),
//! the trap and its fleet-wide tables ([`trap`], [`spring`]), and what one config runs
//! ([`SiteRobots`], made by the [`RobotsKeeper`] that outlives reloads). This room reads the
//! crawler catalogue (`bots`), the request's traits (`identity`) and the stores; the proxy
//! asks it, and the gate decides on the facts it gives, never the other way round.

mod agents;
mod delay;
pub mod fetch;
mod judge;
mod keeper;
pub mod managed;
mod memo;
mod pattern;
mod rules;
mod served;
mod settings;
mod site;
pub mod spring;
pub mod trap;

pub(crate) use pattern::allow_reaches;

pub use agents::{Agents, MAX_USER_AGENT};
pub use delay::CrawlDelay;
pub use judge::judge;
pub use keeper::{Followed, RobotsError, RobotsKeeper};
pub use managed::{managed_file, managed_text, ROBOTS_ONLY};
pub use rules::{Obeyed, RobotsTxt, Verdict, MAX_PARSED, MAX_TOKENS};
pub use served::Served;
pub use settings::{
    is_product_token, Group, GroupAgent, RobotsSettings, Source, UnknownAgent, DEFAULT_REFRESH,
    DEFAULT_TRAP_BAN, DEFAULT_TRAP_WINDOW, MIN_REFRESH,
};
pub use site::{SiteRobots, ROBOTS_TXT};
