//! The DNS servers behind the checks, asked directly (hickory's name-server pool): the
//! configured one (`bots.resolver`, UDP and TCP) or the system's (`/etc/resolv.conf`). Not
//! hickory's `Resolver`: it answers loopback names itself (RFC 6761), so a local server could
//! never vouch for 127.0.0.x, and it caches a second time what the cache here keeps.

use super::DnsError;
use crate::bots::DnsSettings;
use hickory_resolver::config::{ConnectionConfig, NameServerConfig, ResolverOpts};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::xfer::{DnsHandle, FirstAnswer};
use hickory_resolver::net::{DnsError as Negative, NetError};
use hickory_resolver::proto::op::{DnsRequestOptions, Query};
use hickory_resolver::proto::rr::{Name, RData, Record, RecordType};
use hickory_resolver::{NameServerPool, PoolContext, TlsConfig};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How long one query to the servers may take (the lookup as a whole is bounded too).
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(2);
/// The most CNAMEs followed from a queried name.
const MAX_CHAIN: usize = 8;

/// Asks the configured DNS servers one question at a time.
#[derive(Clone)]
pub(crate) struct Asker {
    pool: NameServerPool<TokioRuntimeProvider>,
    options: DnsRequestOptions,
}

impl std::fmt::Debug for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Asker").finish_non_exhaustive()
    }
}

impl Asker {
    /// The servers `settings` name; must be called inside the runtime that will ask them.
    pub(crate) fn new(settings: &DnsSettings) -> Result<Self, DnsError> {
        let (servers, mut options) = match settings.resolver {
            Some(server) => (vec![name_server(server)], ResolverOpts::default()),
            None => system()?,
        };
        options.timeout = QUERY_TIMEOUT;
        options.attempts = 1;
        let tls = TlsConfig::new().map_err(DnsError::Resolver)?;
        let request = request_options(&options);
        let context = Arc::new(PoolContext::new(options, tls));
        Ok(Self {
            pool: NameServerPool::from_config(servers, context, TokioRuntimeProvider::default()),
            options: request,
        })
    }

    /// The records of type `kind` that `name` holds, following CNAMEs within the answer.
    /// "No such name" and "no such record" are `NetError::Dns(NoRecordsFound)`.
    pub(crate) async fn ask(&self, name: &Name, kind: RecordType) -> Result<Vec<Record>, NetError> {
        let query = Query::query(name.clone(), kind);
        let response = self.pool.lookup(query, self.options).first_answer().await?;
        let response = Negative::from_response(response)?;
        Ok(held_by(name, kind, &response.answers))
    }
}

/// The records of type `kind` owned by `name` or by the end of its CNAME chain.
fn held_by(name: &Name, kind: RecordType, records: &[Record]) -> Vec<Record> {
    let mut owner = name.clone();
    for _ in 0..MAX_CHAIN {
        let next = records.iter().find_map(|r| match &r.data {
            RData::CNAME(target) if r.name == owner => Some(target.0.clone()),
            _ => None,
        });
        match next {
            Some(target) => owner = target,
            None => break,
        }
    }
    records
        .iter()
        .filter(|r| r.name == owner && r.record_type() == kind)
        .cloned()
        .collect()
}

/// The system's servers and options (`/etc/resolv.conf`).
fn system() -> Result<(Vec<NameServerConfig>, ResolverOpts), DnsError> {
    let (config, options) = hickory_resolver::system_conf::read_system_conf()
        .map_err(|e| DnsError::SystemConfig(e.to_string()))?;
    Ok((config.name_servers().to_vec(), options))
}

fn request_options(options: &ResolverOpts) -> DnsRequestOptions {
    let mut request = DnsRequestOptions::default();
    request.recursion_desired = options.recursion_desired;
    request.use_edns = options.edns0;
    request.edns_payload_len = options.edns_payload_len;
    request
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

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_resolver::proto::rr::rdata::{A, CNAME};

    fn name(text: &str) -> Name {
        Name::from_ascii(text).unwrap()
    }

    fn record(owner: &str, data: RData) -> Record {
        Record::from_rdata(name(owner), 300, data)
    }

    #[test]
    fn only_records_of_the_asked_name_or_its_cname_chain_count() {
        let answers = [
            record("other.example.", RData::A(A::new(192, 0, 2, 9))),
            record(
                "crawl.googlebot.com.",
                RData::CNAME(CNAME(name("host.google.com."))),
            ),
            record("host.google.com.", RData::A(A::new(192, 0, 2, 1))),
            record("crawl.googlebot.com.", RData::A(A::new(192, 0, 2, 7))),
        ];
        let held = held_by(&name("Crawl.GoogleBot.com."), RecordType::A, &answers);
        assert_eq!(held, vec![answers[2].clone()]);
        let held = held_by(&name("other.example."), RecordType::A, &answers);
        assert_eq!(held, vec![answers[0].clone()]);
        assert!(held_by(&name("nobody.example."), RecordType::A, &answers).is_empty());
    }

    #[test]
    fn a_cname_loop_ends() {
        let answers = [
            record("a.example.", RData::CNAME(CNAME(name("b.example.")))),
            record("b.example.", RData::CNAME(CNAME(name("a.example.")))),
        ];
        assert!(held_by(&name("a.example."), RecordType::A, &answers).is_empty());
    }
}
