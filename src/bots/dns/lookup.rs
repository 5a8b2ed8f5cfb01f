//! One address's reverse DNS, each PTR name (a few at most) resolved forward: the names
//! whose A/AAAA answer holds the exact address are confirmed. Whatever fails on the way
//! makes the answer unsettled, never confirmed.

use super::answer::Answer;
use super::resolver::Asker;
use super::suffix::normal;
use hickory_resolver::net::{DnsError, NetError, NoRecords};
use hickory_resolver::proto::op::ResponseCode;
use hickory_resolver::proto::rr::{Name, RData, Record, RecordType};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

/// The most PTR names of one address resolved forward.
pub const MAX_NAMES: usize = 4;
/// The longest a whole lookup (PTR and forward) may take before it counts as failed.
pub const LOOKUP_DEADLINE: Duration = Duration::from_secs(5);

/// `ip`'s reverse DNS, confirmed forward, with the DNS TTL the answer rests on.
pub(crate) async fn look_up(resolver: &Asker, ip: IpAddr) -> (Answer, Option<Duration>) {
    tokio::time::timeout(LOOKUP_DEADLINE, reverse_then_forward(resolver, ip))
        .await
        .unwrap_or((Answer::Failed, None))
}

/// What a forward lookup said of one name.
enum Forward {
    /// The answer holds the address; the record's TTL.
    Confirmed(u32),
    /// The answer (or the absence of one) does not hold it.
    Refuted,
    /// The lookup failed.
    Unsettled,
}

async fn reverse_then_forward(resolver: &Asker, ip: IpAddr) -> (Answer, Option<Duration>) {
    let names = match resolver.ask(&Name::from(ip), RecordType::PTR).await {
        Ok(records) => ptr_names(&records),
        Err(e) if negative(&e) => return (Answer::nothing(), negative_ttl(&e)),
        Err(_) => return (Answer::Failed, None),
    };
    let checks =
        futures::future::join_all(names.iter().map(|(name, _)| confirm(resolver, name, ip)));
    let mut confirmed = Vec::new();
    let mut unsettled = Vec::new();
    let mut confirmed_ttl = None::<u32>;
    for ((name, ptr_ttl), check) in names.iter().zip(checks.await) {
        match check {
            Forward::Confirmed(ttl) => {
                confirmed.push(Arc::from(normal(&name.to_ascii())));
                let ttl = ttl.min(*ptr_ttl);
                confirmed_ttl = Some(confirmed_ttl.map_or(ttl, |t| t.min(ttl)));
            }
            Forward::Refuted => {}
            Forward::Unsettled => unsettled.push(Arc::from(normal(&name.to_ascii()))),
        }
    }
    // A negative answer lasts as long as the PTR records it rests on.
    let ttl = confirmed_ttl.or_else(|| names.iter().map(|(_, ttl)| *ttl).min());
    let answer = Answer::Names {
        confirmed,
        unsettled,
    };
    (answer, ttl.map(|t| Duration::from_secs(u64::from(t))))
}

/// The distinct PTR names of an answer (the first few) with their TTLs.
fn ptr_names(records: &[Record]) -> Vec<(Name, u32)> {
    let mut names: Vec<(Name, u32)> = Vec::new();
    for record in records {
        let RData::PTR(ptr) = &record.data else {
            continue;
        };
        if names.len() == MAX_NAMES {
            break;
        }
        if !names.iter().any(|(seen, _)| seen == &ptr.0) {
            names.push((ptr.0.clone(), record.ttl));
        }
    }
    names
}

/// Whether `name`'s A (for IPv4) or AAAA (for IPv6) answer holds exactly `ip`.
async fn confirm(resolver: &Asker, name: &Name, ip: IpAddr) -> Forward {
    let kind = if ip.is_ipv4() {
        RecordType::A
    } else {
        RecordType::AAAA
    };
    match resolver.ask(name, kind).await {
        Ok(records) => records
            .iter()
            .find(|record| address(&record.data) == Some(ip))
            .map_or(Forward::Refuted, |record| Forward::Confirmed(record.ttl)),
        Err(e) if negative(&e) => Forward::Refuted,
        Err(_) => Forward::Unsettled,
    }
}

fn address(data: &RData) -> Option<IpAddr> {
    match data {
        RData::A(a) => Some(IpAddr::V4(a.0)),
        RData::AAAA(aaaa) => Some(IpAddr::V6(aaaa.0)),
        _ => None,
    }
}

/// Whether the server said the name or record does not exist (NXDOMAIN, or NOERROR with no
/// answer); SERVFAIL, REFUSED and the like are failures, not denials.
fn negative(error: &NetError) -> bool {
    matches!(
        error,
        NetError::Dns(DnsError::NoRecordsFound(NoRecords {
            response_code: ResponseCode::NXDomain | ResponseCode::NoError,
            ..
        }))
    )
}

/// The negative TTL a "no such name" answer carried (from its SOA), if any.
fn negative_ttl(error: &NetError) -> Option<Duration> {
    match error {
        NetError::Dns(DnsError::NoRecordsFound(NoRecords {
            negative_ttl: Some(ttl),
            ..
        })) => Some(Duration::from_secs(u64::from(*ttl))),
        _ => None,
    }
}
