//! Issue #61: a start with default settings, and ordinary traffic after it, log nothing at
//! WARN or ERROR (a stock machine's open-file limit lowering the default connection cap is
//! said at INFO; a cap written in the config and lowered is still a warning).

use crate::common::{Proxy, Upstream};

#[test]
fn a_default_start_and_ordinary_traffic_log_no_warning_or_error() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], "");
    for _ in 0..20 {
        assert_eq!(proxy.get("/", &[]).status(), 200);
    }
    assert_eq!(proxy.admin("/readyz").unwrap().status(), 200);
    let log = proxy.log();
    let loud: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(" WARN ") || l.contains(" ERROR "))
        .collect();
    assert!(loud.is_empty(), "{}", loud.join("\n"));
}
