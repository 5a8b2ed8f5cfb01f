//! The proxy on the memory store (and a Redis only where a scenario names it), end to end with
//! the real binary, a real upstream and real clients: limits, identity, rules, pools, the
//! front proxy's headers and protocols, TLS, operations, the hardening findings and robots.txt.

#[path = "../common/mod.rs"]
mod common;

mod explained;
mod front_headers;
mod front_proxy;
mod h2fp;
mod hardening;
mod identity;
mod limits;
mod memory;
mod operations;
mod overload;
mod pools;
mod proofs;
mod robots;
mod rules;
mod tls;
mod traces;
