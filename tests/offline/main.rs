//! Checks that start no service: the book's links, config reference and TOML examples
//! (`floodgate --test` on each), property tests of the code that reads hostile input, and the
//! command line (`--test`, start checks, quiet starts).
//! One binary for what used to be three (issue 64: each test binary links pingora).

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod docs;
mod properties;
