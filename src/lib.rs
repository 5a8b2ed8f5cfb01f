//! Floodgate: a pingora reverse proxy that throttles each caller with a token bucket.
//!
//! The request's path is `identity` (who is calling?) → `policy` (which buckets, what cost?) →
//! `limiter` (take the tokens, all or nothing) → `respond` (429 or forward) → `metrics`.
//! `proxy` wires those steps into pingora; `server` builds the pingora server from a validated
//! [`config::Config`].
#![warn(missing_docs, rust_2018_idioms, unreachable_pub)]
#![forbid(unsafe_code)]

pub mod access;
pub mod active;
pub mod admin;
pub mod clock;
pub mod config;
pub mod gate;
pub mod identity;
pub mod limiter;
pub mod metrics;
pub mod offenders;
pub mod policy;
pub mod proxy;
pub mod reload;
pub mod respond;
pub mod server;
