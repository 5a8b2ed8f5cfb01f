//! Issue 58, knowing the bot, end to end: the real binary, curl from 127.0.x.y addresses with
//! crawlers' User-Agents, a DNS server on loopback answering PTR and A records, and
//! MaxMind-format databases written by the tests.

mod common;

#[path = "bots/crawler_scenarios.rs"]
mod crawler_scenarios;
#[path = "bots/curl.rs"]
mod curl;
#[path = "bots/geo_scenarios.rs"]
mod geo_scenarios;
