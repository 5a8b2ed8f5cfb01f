//! Tests with a real headless Chromium (`common::browser`): the harness itself, the challenge
//! solved in a browser, the operators' console, and JA4 fingerprints of real clients.

#[path = "../common/mod.rs"]
mod common;

mod challenge;
mod console;
mod harness;
mod ja4;
