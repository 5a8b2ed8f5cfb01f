//! Reads against a real HTTP server on a loopback port (the robots fetch tests' server): the
//! bounds, the keys put in force, kept on failure, rotated, held back until their time, and
//! the refresher's life.

#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../../../robots/fetch/tests/server.rs"]
mod server;

use super::*;
use crate::clock::Clock;
use crate::privacy_pass::directory::{DirectorySettings, ListedError};
use crate::privacy_pass::test_issuer::{directory_json, TestIssuer};
use crate::privacy_pass::IssuerKey;
use server::{Reply, Server};

fn settings(timeout: Duration, clock: Clock) -> DirectorySettings {
    DirectorySettings {
        refresh: Duration::from_secs(3600),
        retry: Duration::from_secs(60),
        timeout,
        clock,
    }
}

fn url(server: &Server) -> DirectoryUrl {
    DirectoryUrl::parse(&format!("{}{}", server.url(), super::super::WELL_KNOWN)).unwrap()
}

fn json(body: String) -> impl Fn(&str) -> Reply {
    move |_| Reply::Answer(200, vec![], body.clone().into_bytes())
}

fn status(code: u16) -> impl Fn(&str) -> Reply {
    move |_| Reply::Answer(code, vec!["Location: /elsewhere".into()], b"{}".to_vec())
}

fn key(issuer: &TestIssuer) -> IssuerKey {
    IssuerKey::from_token_key(&issuer.token_key()).unwrap()
}

fn keyless() -> Arc<Issuer> {
    Arc::new(Issuer::new("issuer.example", vec![], &[]).unwrap())
}

async fn fetch(server: &Server, timeout: Duration) -> Result<Listed, DirectoryError> {
    let fetcher = Fetcher::new(settings(timeout, Clock::System)).unwrap();
    fetcher.fetch(&url(server)).await
}

#[tokio::test]
async fn a_directory_is_read_and_every_bad_answer_is_an_error() {
    let a = TestIssuer::a();
    let server = Server::start(json(directory_json(&[(&a, None)]))).await;
    let listed = fetch(&server, Duration::from_secs(5)).await.unwrap();
    assert_eq!(listed.live_at(0), [key(&a)]);
    assert!(server.heads()[0].starts_with("GET /.well-known/private-token-issuer-directory "));
    let second = Duration::from_secs(5);
    server.set(status(404));
    assert_eq!(
        fetch(&server, second).await,
        Err(DirectoryError::Status(404))
    );
    server.set(status(301));
    assert_eq!(
        fetch(&server, second).await,
        Err(DirectoryError::Status(301)),
        "not followed"
    );
    server.set(|_| Reply::Answer(200, vec![], b"<html>".to_vec()));
    let not_json = fetch(&server, second).await;
    assert!(matches!(
        not_json,
        Err(DirectoryError::Listed(ListedError::NotDirectory(_)))
    ));
}

#[tokio::test]
async fn a_10_mb_directory_is_refused_and_a_hanging_one_times_out() {
    let server = Server::start(|_| Reply::Endless(10 << 20)).await;
    let started = Instant::now();
    assert_eq!(
        fetch(&server, Duration::from_secs(5)).await,
        Err(DirectoryError::TooLarge)
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let server = Server::start(|_| Reply::Hang).await;
    let timeout = Duration::from_millis(300);
    let started = Instant::now();
    assert_eq!(
        fetch(&server, timeout).await,
        Err(DirectoryError::Timeout(timeout))
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn keys_are_put_in_force_kept_on_failure_and_rotated() {
    let (a, b) = (TestIssuer::a(), TestIssuer::b());
    let server = Server::start(json(directory_json(&[(&a, None)]))).await;
    let fetcher = Fetcher::new(settings(Duration::from_secs(5), Clock::System)).unwrap();
    let (_stop, shutdown) = watch::channel(false);
    let following = fetcher.follow(keyless(), url(&server), shutdown);
    assert_eq!(following.refresh_now().await, Ok(1));
    assert_eq!(*following.issuer().keys(), [key(&a)]);
    server.set(status(500));
    assert_eq!(
        following.refresh_now().await,
        Err(DirectoryError::Status(500))
    );
    assert_eq!(*following.issuer().keys(), [key(&a)], "the last good keys");
    server.set(|_| Reply::Answer(200, vec![], vec![b'x'; 100]));
    assert!(following.refresh_now().await.is_err());
    assert_eq!(*following.issuer().keys(), [key(&a)], "kept past garbage");
    server.set(json(directory_json(&[(&b, None), (&a, None)])));
    assert_eq!(following.refresh_now().await, Ok(2));
    assert_eq!(
        following.issuer().offered_key(),
        Some(key(&b)),
        "the preferred first"
    );
    server.set(json(directory_json(&[(&b, None)])));
    following.refresh_now().await.unwrap();
    assert_eq!(*following.issuer().keys(), [key(&b)], "a rotated out");
}

#[tokio::test]
async fn a_key_is_held_back_until_its_not_before_even_if_the_directory_is_down_then() {
    let (a, b) = (TestIssuer::a(), TestIssuer::b());
    let clock = Clock::set_at(1_000_000);
    let listed = directory_json(&[(&b, Some(2_000)), (&a, Some(500))]);
    let server = Server::start(json(listed)).await;
    let fetcher = Fetcher::new(settings(Duration::from_secs(5), clock.clone())).unwrap();
    let (_stop, shutdown) = watch::channel(false);
    let following = fetcher.follow(keyless(), url(&server), shutdown);
    assert_eq!(following.refresh_now().await, Ok(1));
    assert_eq!(*following.issuer().keys(), [key(&a)]);
    assert_eq!(
        following.shared.next_in(false),
        Duration::from_secs(1_001),
        "woken for b"
    );
    server.set(status(503));
    clock.advance(1_000_000);
    assert!(following.refresh_now().await.is_err());
    assert_eq!(
        *following.issuer().keys(),
        [key(&b), key(&a)],
        "b's time came"
    );
}

#[tokio::test]
async fn the_refresher_reads_at_start_and_stops_when_told_or_dropped() {
    let a = TestIssuer::a();
    let server = Server::start(json(directory_json(&[(&a, None)]))).await;
    let fetcher = Fetcher::new(settings(Duration::from_secs(5), Clock::System)).unwrap();
    let (stop, shutdown) = watch::channel(false);
    let mut following = fetcher.follow(keyless(), url(&server), shutdown.clone());
    let mut rounds = following.rounds();
    let first = tokio::time::timeout(Duration::from_secs(5), rounds.wait_for(|n| *n >= 1)).await;
    assert!(first.is_ok(), "read at start");
    assert_eq!(*following.issuer().keys(), [key(&a)]);
    stop.send(true).unwrap();
    tokio::time::timeout(Duration::from_secs(1), following.stopped())
        .await
        .expect("stopped when told");
    let (_stop, shutdown) = watch::channel(false);
    let dropped = fetcher.follow(keyless(), url(&server), shutdown);
    let mut rounds = dropped.rounds();
    drop(dropped);
    let closed = tokio::time::timeout(Duration::from_secs(1), rounds.changed()).await;
    assert!(matches!(closed, Ok(Err(_))), "the task is gone: {closed:?}");
}

#[test]
fn the_next_round_comes_sooner_after_a_failure() {
    let s = settings(Duration::from_secs(10), Clock::System);
    assert_eq!(next_round_in(&s, false, None), Duration::from_secs(3600));
    assert_eq!(next_round_in(&s, true, None), Duration::from_secs(60));
    assert_eq!(next_round_in(&s, false, Some(9)), Duration::from_secs(10));
    assert_eq!(
        next_round_in(&s, true, Some(u64::MAX)),
        Duration::from_secs(60)
    );
}
