//! Every number `lua/take.lua` shares with the Rust arithmetic, read from the script and checked
//! against its Rust twin: a constant changed on one side only fails here, not in production.

use floodgate_limiter::bucket::{
    EPSILON, LEASE_WINDOW_US, MAX_CAPACITY, MAX_DEBT_SECONDS, MAX_REFILL_US, MICROS_PER_SECOND,
};
use floodgate_limiter::{ModeCode, Penalty};

const TAKE: &str = include_str!("../../../lua/take.lua");

/// The value the script's `local NAME = …` (or `local A, NAME = …, …`) line gives `name`.
fn lua_constant(script: &str, name: &str) -> f64 {
    let found = script.lines().find_map(|line| {
        let line = line.split("--").next()?.trim();
        let (names, values) = line.strip_prefix("local ")?.split_once('=')?;
        let names: Vec<&str> = names.split(',').map(str::trim).collect();
        let values: Vec<&str> = values.split(',').map(str::trim).collect();
        let at = names.iter().position(|n| *n == name)?;
        values.get(at)?.parse::<f64>().ok()
    });
    found.unwrap_or_else(|| panic!("lua/take.lua has no numeric `local {name} = …`"))
}

#[test]
fn the_take_scripts_arithmetic_constants_are_the_rusts() {
    assert_eq!(lua_constant(TAKE, "EPSILON"), EPSILON);
    assert_eq!(lua_constant(TAKE, "MICROS"), MICROS_PER_SECOND);
    assert_eq!(lua_constant(TAKE, "WINDOW"), LEASE_WINDOW_US as f64);
    assert_eq!(lua_constant(TAKE, "MAX_DEBT_SECONDS"), MAX_DEBT_SECONDS);
    assert_eq!(MAX_DEBT_SECONDS * MICROS_PER_SECOND, MAX_REFILL_US);
    assert_eq!(lua_constant(TAKE, "MAX_QUOTA_DEBT"), MAX_CAPACITY);
}

#[test]
fn a_quota_is_marked_by_the_rate_the_wire_sends_for_it() {
    use floodgate_limiter::{BucketSpec, Periods};
    let quota = BucketSpec::quota(10.0, Periods::unending()).unwrap();
    assert_eq!(lua_constant(TAKE, "CALENDAR"), quota.rate_per_second());
}

#[test]
fn the_take_scripts_modes_and_penalties_are_the_rusts() {
    let modes = [
        ("ENFORCE", ModeCode::Enforce),
        ("SHADOW", ModeCode::Shadow),
        ("SETTLE", ModeCode::Settle),
        ("LEASE", ModeCode::Lease),
        ("RETURN", ModeCode::Return),
    ];
    for (name, code) in modes {
        assert_eq!(lua_constant(TAKE, name), f64::from(code as u8), "{name}");
    }
    let penalties = [
        ("NO_PENALTY", Penalty::None),
        ("PENALTY_STARTED", Penalty::Started),
        ("PENALTY_STANDING", Penalty::Standing),
    ];
    for (name, penalty) in penalties {
        assert_eq!(
            lua_constant(TAKE, name),
            f64::from(penalty.wire()),
            "{name}"
        );
    }
}

#[test]
fn every_mode_of_a_take_has_its_code() {
    use floodgate_limiter::Mode;
    let codes = [
        Mode::Enforce.code(),
        Mode::Shadow.code(),
        Mode::Settle.code(),
        Mode::Lease.code(),
        Mode::Return {
            leased: 1.0,
            window: 0,
        }
        .code(),
    ];
    let numbers: Vec<u8> = codes.iter().map(|c| *c as u8).collect();
    assert_eq!(numbers, [0, 1, 2, 3, 4]);
}
