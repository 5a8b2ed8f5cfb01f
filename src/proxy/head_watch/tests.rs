//! The deadlines of watched connections, swept at chosen instants.

use super::*;
use std::future::Future;
use std::pin::pin;
use std::task::Context;

fn expired(watch: &HeadWatch) -> bool {
    let mut cx = Context::from_waker(Waker::noop());
    pin!(watch.expired()).as_mut().poll(&mut cx).is_ready()
}

#[test]
fn the_first_head_runs_from_the_accept_and_a_reused_connection_idles_first() {
    let watches = HeadWatches::new(Duration::from_secs(10), Duration::from_secs(60));
    let watch = watches.accepted();
    let t0 = watch.state.lock().since;
    let at = |s| t0 + Duration::from_secs(s);
    watches.sweep(at(10));
    assert!(!expired(&watch), "exactly at the deadline is still in time");
    watch.complete();
    watches.sweep(at(100));
    assert!(
        !expired(&watch),
        "a request being served has no deadline here"
    );

    // After the request the connection idles (keep-alive) until the next head's first
    // byte, then that head has its time.
    watch.request_done(at(100));
    assert_eq!(watch.allowance(5), Some(5));
    watches.sweep(at(150));
    assert!(!expired(&watch));
    watch.read(1, || at(155));
    assert_eq!(watch.allowance(5), Some(4));
    watches.sweep(at(165));
    assert!(!expired(&watch), "ten seconds from the first byte");
    watches.sweep(at(166));
    assert!(expired(&watch));
    watch.complete();
    assert_eq!(watch.allowance(5), None);
}

#[test]
fn an_idle_connection_expires_after_the_keepalive_timeout_and_closed_ones_are_forgotten() {
    let watches = HeadWatches::new(Duration::from_secs(10), Duration::from_secs(2));
    let watch = watches.accepted();
    let t0 = watch.state.lock().since;
    watch.complete();
    watch.request_done(t0);
    watches.sweep(t0 + Duration::from_millis(2000));
    assert!(!expired(&watch));
    watches.sweep(t0 + Duration::from_millis(2001));
    assert!(expired(&watch));

    let other = watches.accepted();
    assert_eq!(watches.watched.lock().len(), 2);
    drop(watch);
    watches.sweep(t0);
    assert_eq!(watches.watched.lock().len(), 1);
    drop(other);
    watches.sweep(t0);
    assert!(watches.watched.lock().is_empty());
}

#[test]
fn a_waiting_task_is_woken_once_its_connection_expires() {
    struct Count(std::sync::atomic::AtomicUsize);
    impl std::task::Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let watches = HeadWatches::new(Duration::from_secs(10), Duration::from_secs(60));
    let watch = watches.accepted();
    let t0 = watch.state.lock().since;
    let count = Arc::new(Count(Default::default()));
    let waker = Waker::from(count.clone());
    let mut cx = Context::from_waker(&waker);
    let mut waiting = pin!(watch.expired());
    assert!(waiting.as_mut().poll(&mut cx).is_pending());
    assert!(waiting.as_mut().poll(&mut cx).is_pending());
    watches.sweep(t0 + Duration::from_secs(5));
    assert_eq!(count.0.load(Ordering::SeqCst), 0);
    watches.sweep(t0 + Duration::from_secs(11));
    assert_eq!(count.0.load(Ordering::SeqCst), 1);
    assert!(waiting.as_mut().poll(&mut cx).is_ready());
}

#[test]
fn an_unwatched_connection_never_expires() {
    let watch = HeadWatch::unwatched();
    assert_eq!(watch.allowance(5), None);
    let deadlines = Deadlines {
        head: Duration::ZERO,
        idle: Duration::ZERO,
    };
    watch.sweep(Instant::now() + Duration::from_secs(1), &deadlines);
    assert!(!expired(&watch));
}

#[test]
fn an_answer_before_the_head_is_whole_is_a_refusal_kept_once() {
    let watches = HeadWatches::new(Duration::from_secs(10), Duration::from_secs(60));
    let watch = watches.accepted();
    watch.complete();
    watch.answering(200, b"GET / HTTP/1.1\r\n");
    assert_eq!(watch.take_refused(), None, "a whole head's answer");

    watch.request_done(Instant::now());
    watch.read(3, Instant::now);
    let long = [b'x'; 1000];
    watch.answering(400, &long);
    watch.answering(431, b"later");
    let refused = watch.take_refused().expect("refused");
    assert_eq!(refused.status, 400);
    assert_eq!(refused.head.len(), REFUSED_HEAD_BYTES);
    assert_eq!(watch.take_refused(), None);
}
