use super::*;
use prometheus::IntCounter;
use std::time::Duration;

const SMALL: Bounds = Bounds {
    queue: 2,
    batch: 8,
    linger: Duration::ZERO,
};

fn report(metric: Option<IntCounter>) -> Report {
    Report {
        name: "test",
        unit: "items",
        when_full: "the drain is behind",
        metric,
    }
}

fn counter() -> IntCounter {
    IntCounter::new("test_items_dropped_total", "items dropped").unwrap()
}

#[test]
fn a_full_queue_drops_counts_and_warns_at_most_once_a_minute() {
    let clock = Clock::set_at(1_700_000_000_000);
    let metric = counter();
    // The batches are never taken: a drain that is stuck.
    let (writer, _stuck) = Writer::new(report(Some(metric.clone())), SMALL, clock.clone());
    let writer = writer.weighing(|n: &u64| *n);
    assert_eq!(writer.send(1), Sent::Queued);
    assert_eq!(writer.send(1), Sent::Queued);
    let warned = Sent::Dropped(Say::Warn { held_back: 0 });
    assert_eq!(writer.send(3), warned, "the first loss is said");
    assert_eq!(writer.send(4), Sent::Dropped(Say::Quiet));
    clock.advance(59_999);
    assert_eq!(
        writer.send(5),
        Sent::Dropped(Say::Quiet),
        "within the minute"
    );
    clock.advance(1);
    let again = Sent::Dropped(Say::Warn { held_back: 2 });
    assert_eq!(writer.send(6), again, "a minute on, with the two held back");
    assert_eq!(writer.lost(), 3 + 4 + 5 + 6, "counted as weighed");
    assert_eq!(metric.get(), writer.lost(), "and in the metric");
    assert!(!writer.is_written(), "two items wait");
}

#[test]
fn items_count_as_written_once_their_batch_is_let_go() {
    let (writer, mut batches) = Writer::new(report(None), SMALL, Clock::set_at(0));
    assert!(writer.is_written(), "nothing sent");
    writer.send("a");
    writer.send("b");
    assert!(!writer.is_written());
    let batch = futures::executor::block_on(batches.next()).expect("a batch");
    assert_eq!(**batch, ["a", "b"]);
    assert!(!writer.is_written(), "taken is not written");
    drop(batch);
    assert!(writer.is_written());
    assert_eq!(writer.send("c"), Sent::Queued, "the queue has room again");
}

#[test]
fn a_batch_holds_at_most_its_size() {
    let bounds = Bounds {
        queue: 8,
        batch: 3,
        linger: Duration::ZERO,
    };
    let (writer, mut batches) = Writer::new(report(None), bounds, Clock::set_at(0));
    for i in 0..5 {
        writer.send(i);
    }
    let mut next = || futures::executor::block_on(batches.next()).map(|b| b.to_vec());
    assert_eq!(next(), Some(vec![0, 1, 2]));
    assert_eq!(next(), Some(vec![3, 4]));
    drop(writer);
    assert_eq!(next(), None, "every sender gone, nothing waits");
}

#[test]
fn a_stopped_drain_and_a_failed_write_are_losses() {
    let clock = Clock::set_at(0);
    let metric = counter();
    let (writer, mut batches) = Writer::new(report(Some(metric.clone())), SMALL, clock);
    writer.send(1);
    let batch = futures::executor::block_on(batches.next()).expect("a batch");
    batch.lost(7, Cause::Failed(&"the disk is full"));
    drop(batch);
    assert_eq!((writer.lost(), metric.get()), (7, 7));
    drop(batches);
    let sent = writer.send(2);
    assert_eq!(sent, Sent::Dropped(Say::Quiet), "warned within the minute");
    assert_eq!(writer.lost(), 8);
    assert!(writer.is_written(), "nothing is left to wait for");
}

#[tokio::test(start_paused = true)]
async fn a_batch_gathers_what_comes_within_the_linger() {
    let bounds = Bounds {
        queue: 8,
        batch: 3,
        linger: Duration::from_millis(500),
    };
    let (writer, mut batches) = Writer::new(report(None), bounds, Clock::set_at(0));
    writer.send(1);
    let writer = Arc::new(writer);
    let later = writer.clone();
    let sender = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        later.send(2);
        tokio::time::sleep(Duration::from_secs(1)).await;
        later.send(3);
    });
    let first = batches.next().await.map(|b| b.to_vec());
    assert_eq!(
        first,
        Some(vec![1, 2]),
        "2 came within the linger, 3 after it"
    );
    let second = batches.next().await.map(|b| b.to_vec());
    assert_eq!(second, Some(vec![3]));
    sender.await.unwrap();
}

#[test]
fn a_thread_drains_until_every_sender_is_gone() {
    let (writer, batches) = Writer::new(report(None), SMALL, Clock::set_at(0));
    let (written, seen) = std::sync::mpsc::channel();
    batches
        .drain_on_thread("test-writer", move || {
            move |batch: &mut Batch<'_, u32>| {
                let _ = written.send(batch.to_vec());
            }
        })
        .unwrap();
    writer.send(1);
    assert_eq!(seen.recv(), Ok(vec![1]));
    drop(writer);
    assert!(seen.recv().is_err(), "the thread ended, its drain dropped");
}
