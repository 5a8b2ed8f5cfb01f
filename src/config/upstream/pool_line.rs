//! `--test`'s line for one pool of `[upstream]`: backends, balance, Host, health.

use crate::proxy::{Backend, PoolSettings};
use std::fmt;

/// `--test`'s line for one pool (its name in a column of its own).
pub(crate) struct PoolLine<'a>(pub(crate) &'a PoolSettings);

impl fmt::Display for PoolLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pool = self.0;
        let backends: Vec<String> = pool.backends.iter().map(backend).collect();
        let mut line = format!("{} ({}", backends.join(", "), pool.balance.as_str());
        if let Some(host) = &pool.host {
            line.push_str(&format!("; Host {host}"));
        }
        let h = &pool.health;
        if let Some(c) = &h.active {
            line.push_str(&format!(
                "; GET {} every {:?} (timeout {:?}), out after {}, back after {}",
                c.path, c.interval, c.timeout, c.unhealthy_after, c.healthy_after
            ));
        }
        match h.eject_after {
            0 => line.push_str("; no ejection)"),
            n => line.push_str(&format!("; ejected {:?} after {n} failures)", h.eject_for)),
        }
        writeln!(f, "pool {:<10} {line}", pool.name)
    }
}

/// One backend: its scheme, address, verified name and weight.
fn backend(b: &Backend) -> String {
    let weight = match b.weight {
        1 => String::new(),
        w => format!(" weight {w}"),
    };
    match &b.tls_name {
        Some(name) => format!("https://{} (verified as {name}){weight}", b.address),
        None if b.h2c => format!("h2c://{}{weight}", b.address),
        None => format!("{}{weight}", b.address),
    }
}
