//! Fleet-wide rates on the Redis store: every instance writes its last second's figures into
//! one small hash (field: instance id, value: `<redis time ms> <json>`), and reads every
//! instance's back in the same script; fields older than [`FRESH_MS`] are dropped there, so a
//! stopped instance stops counting within seconds. The hash expires when no instance writes.

use std::collections::BTreeMap;

/// How old an instance's figures may be and still count.
pub(super) const FRESH_MS: u64 = 3_000;

/// Writes `ARGV[2]` (JSON) as instance `ARGV[1]`'s figures, drops fields older than
/// `ARGV[3]` ms (Redis's clock: every instance compares on one), returns the fresh values.
pub(super) const SHARE_SCRIPT: &str = r#"
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local fresh = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], now_ms .. ' ' .. ARGV[2])
redis.call('PEXPIRE', KEYS[1], fresh * 4)
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  local at = tonumber(string.match(all[i + 1], '^(%d+) '))
  if at == nil or at < now_ms - fresh then
    redis.call('HDEL', KEYS[1], all[i])
  else
    out[#out + 1] = all[i + 1]
  end
end
return out
"#;

/// The sum of the instances' figures (`<ms> <json>` lines as the script returns them) by
/// policy, and how many instances they came from; unreadable lines are skipped.
pub(super) fn sum(lines: &[String]) -> (BTreeMap<String, [u64; 2]>, u32) {
    let mut total: BTreeMap<String, [u64; 2]> = BTreeMap::new();
    let mut instances = 0;
    for line in lines {
        let Some((_, json)) = line.split_once(' ') else {
            continue;
        };
        let Ok(figures) = serde_json::from_str::<BTreeMap<String, [u64; 2]>>(json) else {
            continue;
        };
        instances += 1;
        for (policy, [allowed, throttled]) in figures {
            let slot = total.entry(policy).or_default();
            slot[0] += allowed;
            slot[1] += throttled;
        }
    }
    (total, instances)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fleet_sums_its_instances_by_policy() {
        let lines = vec![
            r#"1000 {"api":[10,2],"login":[1,0]}"#.to_owned(),
            r#"1001 {"api":[5,3]}"#.to_owned(),
            "garbage".to_owned(),
            "1002 {not json".to_owned(),
        ];
        let (total, instances) = sum(&lines);
        assert_eq!(instances, 2);
        assert_eq!(total["api"], [15, 5]);
        assert_eq!(total["login"], [1, 0]);
    }
}
