//! An operator's switch holds until its time is up, by the clock the protection is handed: a
//! set clock is moved past the end, nothing waits.

use super::{Level, Overload};
use crate::clock::Clock;
use crate::limiter::FleetSize;
use crate::telemetry::Metrics;
use prometheus::IntGauge;
use std::sync::Arc;
use std::time::Duration;

const T0_MS: u64 = 1_700_000_000_000;

#[tokio::test]
async fn a_switch_holds_until_its_ttl_is_up_then_the_pools_decide_again() {
    let clock = Clock::set_at(T0_MS);
    let fleet = Arc::new(FleetSize::new(Some(1), IntGauge::new("f", "f").unwrap()));
    let overload =
        Overload::new(fleet, Metrics::new().overload.clone(), None).with_clock(clock.clone());
    let switch = overload
        .set(Level::Shed, Duration::from_secs(60), "ops")
        .await;
    let switch = switch.unwrap().unwrap();
    assert_eq!((switch.at_ms, switch.until_ms), (T0_MS, T0_MS + 60_000));
    assert_eq!(overload.level(), Level::Shed);
    clock.advance(59_999);
    assert_eq!(overload.level(), Level::Shed, "a ms before its end");
    assert!(overload.switch().is_some());
    clock.advance(1);
    assert_eq!(overload.level(), Level::Auto, "ended");
    assert!(overload.switch().is_none());
}
