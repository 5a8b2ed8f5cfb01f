//! Cluster routing: the slot a key's hash tag falls in. Every key of one caller carries the
//! caller's digest as its hash tag, so one call touches one slot; calls are grouped by it.

/// The Redis Cluster slot of hash tag `tag` (CRC16/XMODEM mod 16384).
pub fn slot_of(tag: &[u8]) -> u16 {
    crc16::State::<crc16::XMODEM>::calculate(tag) % 16384
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_the_cluster_spec() {
        // The example of the Redis Cluster specification.
        assert_eq!(
            crc16::State::<crc16::XMODEM>::calculate(b"123456789"),
            0x31C3
        );
        assert_eq!(slot_of(b"user1000"), 3443);
    }
}
