//! `sample_ratio`: which requests' spans are kept. Refusals and allowed requests have a ratio
//! each; the choice follows the trace id (the same trace is kept or dropped everywhere that
//! samples by ratio), and a trusted caller's sampled parent is always followed.

use opentelemetry::trace::TraceId;

/// The ratios of requests whose spans are kept, each from 0 to 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// Of requests forwarded to a backend.
    pub allowed: f64,
    /// Of requests Floodgate answered itself (429, 403, a challenge, a shed 503, a 400).
    pub refused: f64,
}

impl Default for Sampling {
    fn default() -> Self {
        Self {
            allowed: 1.0,
            refused: 1.0,
        }
    }
}

impl Sampling {
    /// Whether a trace with `trace_id` is kept at `ratio`: its low 63 bits below the ratio's
    /// share of them (OpenTelemetry's `TraceIdRatioBased`).
    pub fn keeps(ratio: f64, trace_id: TraceId) -> bool {
        if ratio >= 1.0 {
            return true;
        }
        let bytes = trace_id.to_bytes();
        let mut low = [0u8; 8];
        low.copy_from_slice(&bytes[8..]);
        let drawn = u64::from_be_bytes(low) >> 1;
        let bound = (ratio.max(0.0) * (1u64 << 63) as f64) as u64;
        drawn < bound
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_keeps_its_share_of_trace_ids() {
        let ids = (0..10_000u128)
            .map(|i| TraceId::from(i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)));
        let kept = ids.filter(|id| Sampling::keeps(0.25, *id)).count();
        assert!((2_200..2_800).contains(&kept), "{kept}");
        assert!(!Sampling::keeps(0.0, TraceId::from(u128::MAX)));
        assert!(Sampling::keeps(1.0, TraceId::from(u128::MAX)));
    }
}
