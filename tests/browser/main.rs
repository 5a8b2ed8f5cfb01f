//! Tests with a real headless Chromium (`common::browser`): the harness itself, the challenge
//! solved in a browser (a Privacy Pass issuer trusted or not), the operators' console, JA4
//! fingerprints of real clients, the challenge of overload protection solved while the backend
//! is overloaded, the bot score of real clients, and robots.txt's trap sparing a browser made
//! to fetch it.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/issuer.rs"]
mod issuer;
#[path = "../common/tokens.rs"]
mod tokens;

mod challenge;
mod console;
mod h2fp;
mod harness;
mod ja4;
mod overload;
mod robots;
mod score;
