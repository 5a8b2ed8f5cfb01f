//! Floodgate: a pingora reverse proxy that throttles each caller with a token bucket.
//!
//! The request's path is `identity` (who is calling?) → `policy` (which buckets, what cost?)
//! → `limiter` (take the tokens, all or nothing) → `gate` (the typed outcome) → `proxy`
//! (render it, or forward) → `telemetry` (and `trace`, its spans). `app` wires those into a pingora server from a
//! validated [`config::Config`]. Dependencies point one way: app → config → proxy → gate →
//! identity, policy, limiter, telemetry.
#![warn(missing_docs, rust_2018_idioms, unreachable_pub)]
#![forbid(unsafe_code)]

pub mod acme;
pub mod admin;
pub mod app;
pub mod bots;
pub mod challenge;
pub mod check;
pub mod clock;
pub mod config;
pub mod console;
pub mod control;
pub mod crowdsec;
pub mod explain;
pub mod gate;
pub mod identity;
pub mod limiter;
pub mod location;
pub mod overload;
pub mod policy;
pub mod privacy_pass;
pub mod proof;
pub mod proxy;
pub mod rls;
pub mod robots;
pub mod tap;
pub mod telemetry;
pub mod tls;
pub mod trace;
