//! The open connections of one listener, overall and per client address (an IPv6 /64
//! counting as one): a connection is admitted only while fewer than the caps are open, and
//! counts as open until its [`Admitted`] is dropped.

use crate::telemetry::ConnectionRefusal;
use parking_lot::Mutex;
use prometheus::IntGauge;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

/// The open downstream connections, overall and per client address.
pub(super) struct Connections {
    max: usize,
    max_per_ip: Option<usize>,
    open: Mutex<Open>,
    /// `floodgate_connections_open`, for the proxy's listener.
    gauge: Option<IntGauge>,
}

#[derive(Default)]
struct Open {
    total: usize,
    per_ip: HashMap<IpAddr, usize>,
}

/// One admitted connection; it counts as open until dropped.
pub(super) struct Admitted {
    connections: Arc<Connections>,
    ip: Option<IpAddr>,
}

impl Connections {
    /// At most `max` connections open, and `max_per_ip` from one client, counted in `gauge`.
    pub(super) fn new(max: usize, max_per_ip: Option<usize>, gauge: Option<IntGauge>) -> Self {
        Self {
            max,
            max_per_ip,
            open: Mutex::new(Open::default()),
            gauge,
        }
    }

    /// Counts a connection from `peer` open, or says why it may not be.
    pub(super) fn admit(
        self: &Arc<Self>,
        peer: Option<IpAddr>,
    ) -> Result<Admitted, ConnectionRefusal> {
        let ip = self.max_per_ip.and(peer).map(one_client);
        let mut open = self.open.lock();
        if open.total >= self.max {
            return Err(ConnectionRefusal::Total);
        }
        if let (Some(ip), Some(max)) = (ip, self.max_per_ip) {
            let from_ip = open.per_ip.entry(ip).or_default();
            if *from_ip >= max {
                return Err(ConnectionRefusal::PerIp);
            }
            *from_ip += 1;
        }
        open.total += 1;
        if let Some(gauge) = &self.gauge {
            gauge.inc();
        }
        Ok(Admitted {
            connections: self.clone(),
            ip,
        })
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self.connections.open.lock();
        open.total = open.total.saturating_sub(1);
        if let Some(ip) = self.ip {
            if let Some(from_ip) = open.per_ip.get_mut(&ip) {
                *from_ip -= 1;
                if *from_ip == 0 {
                    open.per_ip.remove(&ip);
                }
            }
        }
        if let Some(gauge) = &self.connections.gauge {
            gauge.dec();
        }
    }
}

/// The address that stands for one client: IPv4 as is, IPv6 folded to its /64.
fn one_client(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connections(max: usize, max_per_ip: Option<usize>) -> Arc<Connections> {
        let gauge = IntGauge::new("open", "open").unwrap();
        Arc::new(Connections::new(max, max_per_ip, Some(gauge)))
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn past_the_cap_connections_are_refused_until_one_closes() {
        let c = connections(2, None);
        let first = c.admit(ip("192.0.2.1")).unwrap();
        let _second = c.admit(ip("192.0.2.2")).unwrap();
        assert_eq!(
            c.admit(ip("192.0.2.3")).err(),
            Some(ConnectionRefusal::Total)
        );
        assert_eq!(c.gauge.as_ref().map(IntGauge::get), Some(2));
        drop(first);
        assert!(c.admit(ip("192.0.2.3")).is_ok());
    }

    #[test]
    fn one_address_and_one_ipv6_network_share_a_per_ip_cap() {
        let c = connections(100, Some(1));
        let _a = c.admit(ip("192.0.2.1")).unwrap();
        assert_eq!(
            c.admit(ip("192.0.2.1")).err(),
            Some(ConnectionRefusal::PerIp)
        );
        assert!(c.admit(ip("192.0.2.9")).is_ok());
        let v6 = c.admit(ip("2001:db8::1")).unwrap();
        assert_eq!(
            c.admit(ip("2001:db8::ffff")).err(),
            Some(ConnectionRefusal::PerIp)
        );
        assert!(c.admit(ip("2001:db8:0:1::1")).is_ok(), "another /64");
        drop(v6);
        assert!(c.admit(ip("2001:db8::2")).is_ok());
        assert!(c.open.lock().per_ip.len() <= 4);
    }
}
