//! Knowing the bot (issues 58, 59, 62), end to end: crawlers verified by reverse DNS against a
//! DNS server on loopback, the ranges catalogue update, geo databases, signed agents, and the
//! challenge met by a plain HTTP client (`common::visitor`).

#[path = "../common/mod.rs"]
mod common;

mod challenge;
mod crawler_scenarios;
mod curl;
mod dns;
mod geo;
mod geo_scenarios;
mod score;
mod signed;
mod update;
