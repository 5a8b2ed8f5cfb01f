//! The hickory resolver behind the checks: the configured server (`bots.resolver`, UDP and
//! TCP) or the system's (`/etc/resolv.conf`), with short timeouts and no hosts file.

use super::DnsError;
use crate::bots::DnsSettings;
use hickory_resolver::config::{ConnectionConfig, NameServerConfig, ResolveHosts, ResolverConfig};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::{Resolver, TokioResolver};
use std::net::SocketAddr;
use std::time::Duration;

/// How long one query to the server may take (the lookup as a whole is bounded too).
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(2);

/// A resolver for `settings`; must be called inside the runtime that will run its lookups.
pub(crate) fn build(settings: &DnsSettings) -> Result<TokioResolver, DnsError> {
    let mut builder = match settings.resolver {
        Some(server) => Resolver::builder_with_config(
            ResolverConfig::from_name_servers(vec![name_server(server)]),
            TokioRuntimeProvider::default(),
        ),
        None => TokioResolver::builder_tokio().map_err(DnsError::SystemConfig)?,
    };
    let options = builder.options_mut();
    options.timeout = QUERY_TIMEOUT;
    options.attempts = 1;
    // Verification asks the DNS, never /etc/hosts (which may name any address anything).
    options.use_hosts_file = ResolveHosts::Never;
    builder.build().map_err(DnsError::Resolver)
}

/// One server at `server`, over UDP and TCP (for truncated answers).
fn name_server(server: SocketAddr) -> NameServerConfig {
    let on_port = |mut connection: ConnectionConfig| {
        connection.port = server.port();
        connection
    };
    NameServerConfig::new(
        server.ip(),
        true,
        vec![
            on_port(ConnectionConfig::udp()),
            on_port(ConnectionConfig::tcp()),
        ],
    )
}
