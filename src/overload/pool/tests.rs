use super::*;
use crate::telemetry::Metrics;

fn guard(total: u32, queue_time_ms: u64, max_queued: Option<u32>) -> Arc<PoolGuard> {
    let metrics = Metrics::new();
    let settings = OverloadSettings {
        max_in_flight: MaxInFlight::Fleet(total),
        latency_target: None,
        queue_time: Duration::from_millis(queue_time_ms),
        max_queued,
    };
    let fleet = Arc::new(FleetSize::new(Some(1), IntGauge::new("f", "f").unwrap()));
    Arc::new(PoolGuard::new(
        "p".into(),
        Arc::new(settings),
        fleet,
        &metrics.overload,
    ))
}

#[tokio::test(start_paused = true)]
async fn a_request_that_waits_too_long_is_shed_and_leaves_no_trace() {
    let pool = guard(1, 1000, None);
    let held = pool.acquire(Priority::Normal).await.expect("a free slot");
    let waited = pool.acquire(Priority::Normal).await;
    assert!(matches!(waited, Err(Refusal::Waited)));
    assert_eq!(pool.load(), (1, 1, 0));
    assert!(pool.overloaded());
    drop(held);
    assert_eq!(pool.load(), (0, 1, 0));
}

#[tokio::test(start_paused = true)]
async fn a_freed_slot_goes_to_the_waiter() {
    let pool = guard(1, 1000, None);
    let held = pool.acquire(Priority::Normal).await.expect("a free slot");
    let waiter = tokio::spawn({
        let pool = pool.clone();
        async move { pool.acquire(Priority::High).await.is_ok() }
    });
    tokio::task::yield_now().await;
    assert_eq!(pool.load(), (1, 1, 1));
    drop(held);
    assert!(waiter.await.unwrap());
    assert_eq!(pool.load(), (0, 1, 0));
}

#[tokio::test(start_paused = true)]
async fn a_request_that_ends_while_waiting_gives_back_what_it_was_handed() {
    let pool = guard(1, 1000, None);
    let held = pool.acquire(Priority::Normal).await.expect("a free slot");
    let waiter = tokio::spawn({
        let pool = pool.clone();
        async move {
            let _permit = pool.acquire(Priority::Normal).await;
            std::future::pending::<()>().await
        }
    });
    tokio::task::yield_now().await;
    waiter.abort();
    let _ = waiter.await;
    drop(held);
    assert_eq!(pool.load(), (0, 1, 0));
    let again = pool.acquire(Priority::Normal).await;
    assert!(again.is_ok());
}

#[tokio::test(start_paused = true)]
async fn a_full_line_refuses_at_once() {
    let pool = guard(1, 1000, Some(1));
    let _held = pool.acquire(Priority::Normal).await.expect("a free slot");
    let first = tokio::spawn({
        let pool = pool.clone();
        async move { pool.acquire(Priority::Normal).await.err() }
    });
    tokio::task::yield_now().await;
    assert!(matches!(
        pool.acquire(Priority::Normal).await,
        Err(Refusal::Full)
    ));
    // A higher priority takes the waiter's place.
    let high = tokio::spawn({
        let pool = pool.clone();
        async move { pool.acquire(Priority::High).await.is_ok() }
    });
    assert_eq!(first.await.unwrap(), Some(Refusal::Displaced));
    drop(_held);
    assert!(high.await.unwrap());
}

#[tokio::test(start_paused = true)]
async fn an_adaptive_pool_grows_while_requests_wait_and_answers_come_fast() {
    let metrics = Metrics::new();
    let settings = OverloadSettings {
        max_in_flight: MaxInFlight::Auto {
            floor: 2,
            ceiling: 100,
        },
        latency_target: None,
        queue_time: Duration::from_millis(50),
        max_queued: Some(100),
    };
    let fleet = Arc::new(FleetSize::new(Some(1), IntGauge::new("f", "f").unwrap()));
    let pool = Arc::new(PoolGuard::new(
        "p".into(),
        Arc::new(settings),
        fleet,
        &metrics.overload,
    ));
    for _ in 0..600 {
        let mut held = Vec::new();
        while let Ok(Ok(permit)) =
            tokio::time::timeout(Duration::from_millis(1), pool.acquire(Priority::Normal)).await
        {
            held.push(permit);
        }
        tokio::time::advance(Duration::from_millis(10)).await;
        for permit in held {
            permit.answered_in(Duration::from_millis(10));
        }
    }
    assert!(pool.load().1 > 10, "the limit stayed at {}", pool.load().1);
}

#[test]
fn a_fleet_that_grew_shrinks_the_share_without_a_request() {
    let metrics = Metrics::new();
    let settings = OverloadSettings {
        max_in_flight: MaxInFlight::Fleet(8),
        latency_target: None,
        queue_time: Duration::from_secs(1),
        max_queued: None,
    };
    let fleet = Arc::new(FleetSize::new(None, IntGauge::new("f", "f").unwrap()));
    let pool = PoolGuard::new(
        "p".into(),
        Arc::new(settings),
        fleet.clone(),
        &metrics.overload,
    );
    assert_eq!(pool.load(), (0, 8, 0));
    fleet.learn(3);
    pool.retune();
    assert_eq!(pool.load(), (0, 2, 0));
    assert_eq!(pool.gauges.limit.get(), 2);
}
