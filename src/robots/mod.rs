//! Holding crawlers to robots.txt: the file parsed as RFC 9309 says a crawler must read it
//! ([`RobotsTxt`], what it says about a request: [`Verdict`], [`CrawlDelay`]), which of its
//! groups a request's User-Agent names ([`Agents`]), the file Floodgate writes from
//! `[robots] groups` ([`managed`]), and the settings of `[robots]` ([`RobotsSettings`]).
//! This room reads the crawler catalogue (`bots`) and the bot categories (`identity`); the
//! proxy and the gate use it, never the other way round.

mod agents;
mod delay;
pub mod managed;
mod pattern;
mod rules;
mod settings;

pub(crate) use pattern::allow_reaches;

pub use agents::{Agents, MAX_USER_AGENT};
pub use delay::CrawlDelay;
pub use managed::{managed_file, managed_text, ROBOTS_ONLY};
pub use rules::{RobotsTxt, Verdict, MAX_PARSED, MAX_TOKENS};
pub use settings::{
    is_product_token, Group, GroupAgent, RobotsSettings, Source, UnknownAgent, DEFAULT_REFRESH,
    DEFAULT_TRAP_BAN, DEFAULT_TRAP_WINDOW, MIN_REFRESH,
};
