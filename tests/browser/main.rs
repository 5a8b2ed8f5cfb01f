//! Tests with a real headless Chromium (`common::browser`): the harness itself, the challenge
//! solved in a browser, the operators' console, JA4 fingerprints of real clients, and the
//! challenge of overload protection solved while the backend is overloaded.

#[path = "../common/mod.rs"]
mod common;

mod challenge;
mod console;
mod h2fp;
mod harness;
mod ja4;
mod overload;
