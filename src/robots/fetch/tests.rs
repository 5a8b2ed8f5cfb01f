//! Fetches against a real HTTP server on a loopback port: what each answer becomes, the
//! bounds (size, redirects, time), the `Host` sent, and the refresher's life.

mod server;

use super::*;
use crate::clock::Clock;
use bytes::Bytes;
use server::{host_of, pattern, Reply, Server};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

const HOST: &str = "example.com";
const FILE: &[u8] = b"User-agent: GPTBot\nDisallow: /\n";

fn fetcher(timeout: Duration) -> Fetcher {
    Fetcher::new(Settings {
        refresh: Duration::from_secs(3600),
        timeout,
        clock: Clock::System,
    })
    .unwrap()
}

async fn fetch(server: &Server) -> Fetched {
    let target = Target::new(HOST, &server.url()).unwrap();
    fetcher(Duration::from_secs(5)).fetch(&target).await
}

fn status(code: u16) -> impl Fn(&str) -> Reply {
    move |_| Reply::Answer(code, vec![], b"<html>error</html>".to_vec())
}

#[tokio::test]
async fn a_file_is_read_whole_asked_with_the_configured_host() {
    let server = Server::ok(FILE).await;
    assert_eq!(
        fetch(&server).await,
        Fetched::Rules(Bytes::from_static(FILE))
    );
    let heads = server.heads();
    assert_eq!(heads.len(), 1);
    assert!(
        heads[0].starts_with("GET /robots.txt HTTP/1.1\r\n"),
        "{heads:?}"
    );
    assert_eq!(host_of(&heads[0]), Some(HOST), "{heads:?}");
}

#[tokio::test]
async fn a_4xx_means_no_rules_and_a_5xx_unavailable() {
    let server = Server::start(status(404)).await;
    assert_eq!(fetch(&server).await, Fetched::NoRules);
    server.set(status(403));
    assert_eq!(fetch(&server).await, Fetched::NoRules);
    server.set(status(503));
    let down = Fetched::Unavailable(Unavailable::Status(503));
    assert_eq!(fetch(&server).await, down);
}

#[tokio::test]
async fn a_10_mb_file_is_cut_at_512_kib_and_the_rest_never_read() {
    const TEN_MB: usize = 10 << 20;
    let mut server = Server::start(|_| Reply::Endless(TEN_MB)).await;
    let started = Instant::now();
    let Fetched::Rules(body) = fetch(&server).await else {
        panic!("a file");
    };
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(body.len(), MAX_BODY);
    assert!(
        body[..] == pattern(MAX_BODY)[..],
        "the first 512 KiB, as sent"
    );
    let sent = tokio::time::timeout(Duration::from_secs(3), server.sent())
        .await
        .expect("the server's writes end once the fetch hangs up");
    assert!(sent < TEN_MB, "the reader hung up: {sent} bytes written");
}

#[tokio::test]
async fn binary_garbage_is_just_bytes() {
    let garbage: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 256) as u8).collect();
    let answer = garbage.clone();
    let server = Server::start(move |_| Reply::Answer(200, vec![], answer.clone())).await;
    assert_eq!(fetch(&server).await, Fetched::Rules(Bytes::from(garbage)));
}

#[tokio::test]
async fn a_redirect_on_the_backend_is_followed_with_the_configured_host() {
    let server = Server::start(|path| match path {
        "/robots.txt" => {
            Reply::Answer(301, vec![format!("Location: https://{HOST}/r.txt")], vec![])
        }
        _ => Reply::Answer(200, vec![], FILE.to_vec()),
    })
    .await;
    assert_eq!(
        fetch(&server).await,
        Fetched::Rules(Bytes::from_static(FILE))
    );
    let heads = server.heads();
    assert!(heads[1].starts_with("GET /r.txt "), "{heads:?}");
    assert!(heads.iter().all(|h| host_of(h) == Some(HOST)), "{heads:?}");
}

#[tokio::test]
async fn a_redirect_loop_is_unavailable_after_five() {
    let to_itself = |_: &str| Reply::Answer(302, vec!["Location: /robots.txt".into()], vec![]);
    let server = Server::start(to_itself).await;
    let looped = Unavailable::TooManyRedirects(MAX_REDIRECTS);
    assert_eq!(fetch(&server).await, Fetched::Unavailable(looped));
    assert_eq!(server.heads().len(), 1 + MAX_REDIRECTS);
}

#[tokio::test]
async fn a_redirect_elsewhere_or_nowhere_is_unavailable() {
    let away = "http://other.example/robots.txt";
    let server =
        Server::start(move |_| Reply::Answer(301, vec![format!("Location: {away}")], vec![])).await;
    let elsewhere = Unavailable::Redirect(away.to_owned());
    assert_eq!(fetch(&server).await, Fetched::Unavailable(elsewhere));
    assert_eq!(server.heads().len(), 1, "never asked of anyone");
    server.set(|_| Reply::Answer(302, vec![], vec![]));
    let nowhere = Fetched::Unavailable(Unavailable::NoLocation);
    assert_eq!(fetch(&server).await, nowhere);
}

#[tokio::test]
async fn a_server_that_hangs_is_unavailable_within_the_timeout() {
    let server = Server::start(|_| Reply::Hang).await;
    let target = Target::new(HOST, &server.url()).unwrap();
    let started = Instant::now();
    let fetched = fetcher(Duration::from_millis(300)).fetch(&target).await;
    assert_eq!(fetched, Fetched::Unavailable(Unavailable::Timeout));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn no_listener_is_unavailable() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let backend = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let target = Target::new(HOST, &backend).unwrap();
    let fetched = fetcher(Duration::from_secs(5)).fetch(&target).await;
    assert!(
        matches!(fetched, Fetched::Unavailable(Unavailable::Transport(_))),
        "{fetched:?}"
    );
}

/// A refresher of `server`'s file every `refresh`, on `clock`, saying each change.
fn follow(
    server: &Server,
    refresh: Duration,
    clock: Clock,
) -> (
    Following,
    mpsc::UnboundedReceiver<Arc<RobotsCopy>>,
    watch::Sender<bool>,
) {
    let settings = Settings {
        refresh,
        timeout: Duration::from_secs(2),
        clock,
    };
    let (changed, changes) = mpsc::unbounded_channel();
    let (stop, shutdown) = watch::channel(false);
    let target = Target::new(HOST, &server.url()).unwrap();
    let on_change = Box::new(move |copy: &Arc<RobotsCopy>| {
        let _ = changed.send(Arc::clone(copy));
    });
    let following = Fetcher::new(settings)
        .unwrap()
        .spawn_with(target, shutdown, on_change);
    (following, changes, stop)
}

async fn next_change(changes: &mut mpsc::UnboundedReceiver<Arc<RobotsCopy>>) -> Arc<RobotsCopy> {
    tokio::time::timeout(Duration::from_secs(3), changes.recv())
        .await
        .expect("a change within 3 s")
        .expect("the refresher runs")
}

#[tokio::test]
async fn a_5xx_keeps_the_last_copy_for_24_hours_then_nothing() {
    const DAY_MS: u64 = 24 * 60 * 60 * 1000;
    let server = Server::ok(FILE).await;
    let clock = Clock::set_at(1_700_000_000_000);
    let (following, mut changes, _stop) = follow(&server, Duration::from_secs(3600), clock.clone());
    let first = next_change(&mut changes).await;
    assert_eq!(first.rules().map(|b| &b[..]), Some(FILE), "read at start");
    assert_eq!(following.current(), first);

    server.set(status(500));
    clock.advance(DAY_MS - 1);
    let down = Fetched::Unavailable(Unavailable::Status(500));
    assert_eq!(following.refresh_now().await, down);
    assert_eq!(following.current(), first, "the last copy, as read");
    clock.advance(1);
    assert_eq!(following.refresh_now().await, down);
    assert_eq!(
        *following.current(),
        RobotsCopy::NoCopy,
        "24 h after it was read"
    );
    assert_eq!(*next_change(&mut changes).await, RobotsCopy::NoCopy);

    server.set(status(404));
    following.refresh_now().await;
    assert!(matches!(*following.current(), RobotsCopy::NoRules { .. }));
}

#[tokio::test]
async fn the_refresher_follows_a_changed_file_and_stops_when_told() {
    let server = Server::ok(FILE).await;
    let refresh = Duration::from_millis(200);
    let (mut following, mut changes, stop) = follow(&server, refresh, Clock::System);
    assert_eq!(
        next_change(&mut changes).await.rules().map(|b| &b[..]),
        Some(FILE)
    );
    server.set(|_| Reply::Answer(200, vec![], b"Disallow: /new\n".to_vec()));
    let changed = next_change(&mut changes).await;
    assert_eq!(
        changed.rules().map(|b| &b[..]),
        Some(&b"Disallow: /new\n"[..])
    );
    assert_eq!(following.current(), changed);
    assert!(server.heads().len() >= 2, "read again after refresh");

    stop.send(true).unwrap();
    tokio::time::timeout(Duration::from_secs(1), following.stopped())
        .await
        .expect("stopped when told");
}

#[tokio::test]
async fn dropping_the_handle_stops_the_refresher() {
    let server = Server::ok(FILE).await;
    let refresh = Duration::from_millis(100);
    let (following, mut changes, _stop) = follow(&server, refresh, Clock::System);
    next_change(&mut changes).await;
    drop(following);
    // The task, and the hook it holds, are gone: the channel closes.
    let closed = tokio::time::timeout(Duration::from_secs(1), changes.recv()).await;
    assert!(matches!(closed, Ok(None)), "{closed:?}");
}
