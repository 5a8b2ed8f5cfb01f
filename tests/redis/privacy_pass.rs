//! Privacy Pass across a fleet: two instances on one Redis share the fleet's key, so a token
//! minted for one instance's challenge is served on the other (with a pass cookie); its nonce
//! is spent fleet-wide, so the same token again, on either, is the challenge again, counted as
//! replayed by the instance that saw it.

use crate::common::fleet::{Fleet, Store};
use crate::issuer::TestIssuer;
use crate::tokens::{
    challenge, challenged, config_keyed, counted, pass_cookie, presenting, ISSUER,
};

#[test]
fn a_token_for_one_instances_challenge_is_served_on_another_once() {
    let a = TestIssuer::a();
    let fleet = Fleet::start(Store::Redis(2), &config_keyed(&a), "");
    let (one, two) = (&fleet.proxies[0], &fleet.proxies[1]);
    let token = a.mint(&challenge(one, &a));

    let served = presenting(two, &token);
    assert_eq!(served.status(), 200, "one's challenge, redeemed on two");
    assert!(pass_cookie(&served).is_some(), "with a pass");
    assert_eq!(counted(two, ISSUER, "redeemed"), 1.0);
    assert_eq!(fleet.upstream.served(), 1);

    for (name, proxy) in [("one", one), ("two", two)] {
        challenged(presenting(proxy, &token), &a);
        assert_eq!(counted(proxy, ISSUER, "replayed"), 1.0, "on {name}");
    }
    assert_eq!(counted(one, ISSUER, "redeemed"), 0.0);
    assert_eq!(fleet.upstream.served(), 1, "a replay is served nowhere");
}
