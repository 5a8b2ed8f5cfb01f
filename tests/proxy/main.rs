//! The proxy on the memory store (and a Redis only where a scenario names it), end to end with
//! the real binary, a real upstream and real clients: limits, identity, rules, pools, the
//! front proxy's headers and protocols, TLS, operations, the hardening findings, robots.txt and
//! Privacy Pass tokens.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/issuer.rs"]
mod issuer;
#[path = "../common/tokens.rs"]
mod tokens;

mod explained;
mod front_headers;
mod front_proxy;
mod h2fp;
mod hardening;
mod identity;
mod limits;
mod memory;
mod one_record;
mod operations;
mod overload;
mod pools;
mod privacy_pass;
mod proofs;
mod robots;
mod rules;
mod tls;
mod traces;
