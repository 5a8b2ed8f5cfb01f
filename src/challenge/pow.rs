//! The server's side of the `pow` challenge: one SHA-256 decides whether a solution is good.
//!
//! The hash is SHA-256 over the bytes `nonce ++ ":" ++ solution`, where `solution` is a
//! decimal counter (`0`, `1`, `2`, …); a solution is good when the hash starts with
//! `difficulty` zero bits. The page's script (`assets/pow.js`) hashes exactly those bytes.

use sha2::{Digest, Sha256};

/// The most digits a solution may have (`u64::MAX` has 20).
pub const MAX_SOLUTION_DIGITS: usize = 20;

/// Whether `solution` solves the `pow` challenge `nonce` at `difficulty` bits: it is 1 to
/// [`MAX_SOLUTION_DIGITS`] ASCII digits without a sign or a leading zero (except `0` itself),
/// and SHA-256 over `nonce:solution` starts with `difficulty` zero bits. One hash, no
/// allocation.
pub fn solved(nonce: &str, solution: &str, difficulty: u8) -> bool {
    if !is_canonical_number(solution) {
        return false;
    }
    let hash = Sha256::new()
        .chain_update(nonce)
        .chain_update(b":")
        .chain_update(solution)
        .finalize();
    leading_zero_bits(&hash) >= u32::from(difficulty)
}

/// Whether `text` is a decimal number as the page's counter writes it.
fn is_canonical_number(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits =
        (1..=MAX_SOLUTION_DIGITS).contains(&bytes.len()) && bytes.iter().all(u8::is_ascii_digit);
    digits && (bytes[0] != b'0' || bytes.len() == 1)
}

/// How many zero bits `hash` starts with.
fn leading_zero_bits(hash: &[u8]) -> u32 {
    let mut bits = 0;
    for &byte in hash {
        if byte != 0 {
            return bits + byte.leading_zeros();
        }
        bits += 8;
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest solution at `difficulty`, by brute force (the page's search).
    fn first_solution(nonce: &str, difficulty: u8) -> u64 {
        (0..)
            .find(|n| solved(nonce, &n.to_string(), difficulty))
            .unwrap()
    }

    #[test]
    fn a_solution_found_by_brute_force_is_good_and_its_neighbours_are_not() {
        let nonce = "AbC-_9.nonce";
        let n = first_solution(nonce, 8);
        assert!(solved(nonce, &n.to_string(), 8));
        assert!((0..n).all(|m| !solved(nonce, &m.to_string(), 8)));
        let hash = Sha256::digest(format!("{nonce}:{n}"));
        assert_eq!(hash[0], 0, "eight leading zero bits");
    }

    #[test]
    fn difficulty_counts_bits_not_bytes() {
        let nonce = "bits";
        let n = first_solution(nonce, 4).to_string();
        let bits = leading_zero_bits(&Sha256::digest(format!("{nonce}:{n}")));
        assert!(bits >= 4);
        assert!(solved(nonce, &n, bits as u8));
        assert!(!solved(nonce, &n, bits as u8 + 1));
        assert!(
            solved(nonce, &n, 0),
            "difficulty 0 takes any well-formed solution"
        );
    }

    #[test]
    fn a_known_vector_pins_the_input_format() {
        // SHA-256("abc:0"), the same vector the page's script checks itself against.
        let hash = Sha256::digest(b"abc:0");
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, KNOWN_ABC_0);
        assert_eq!(leading_zero_bits(&[0, 0, 0x10, 0xff]), 19);
        assert_eq!(leading_zero_bits(&[0; 32]), 256);
    }

    /// SHA-256 of the bytes `abc:0`.
    const KNOWN_ABC_0: &str = "5f36efce86f68877cee18fda5637abb2a1bb409f4326cc741fdf13200aa26980";

    #[test]
    fn malformed_solutions_are_refused_before_hashing() {
        for bad in [
            "",
            "-1",
            "+1",
            "01",
            "00",
            " 1",
            "1 ",
            "1.0",
            "1e3",
            "0x10",
            "١",
            "123456789012345678901",
        ] {
            assert!(!solved("n", bad, 0), "{bad:?} is no solution");
        }
        for good in [
            "0",
            "7",
            "10",
            "18446744073709551615",
            "99999999999999999999",
        ] {
            assert!(solved("n", good, 0), "{good:?} is well formed");
        }
    }
}
