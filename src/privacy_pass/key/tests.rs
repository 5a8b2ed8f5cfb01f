//! Reading keys: the RFC 9578 form and plain rsaEncryption taken, every other size, kind or
//! parameter refused; signatures of the blind flow verified, altered ones not.

use super::*;
use crate::privacy_pass::test_issuer::{Fields, TestIssuer};

/// A DER element: `tag`, its length, `body`.
fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    match body.len() {
        n @ 0..=127 => out.push(n as u8),
        n @ 128..=255 => out.extend([0x81, n as u8]),
        n => out.extend([0x82, (n >> 8) as u8, n as u8]),
    }
    out.extend_from_slice(body);
    out
}

/// An SPKI of algorithm `oid` (its DER body) around an RSA key of `bits` bits.
fn spki(oid: &[u8], bits: usize, exponent: &[u8]) -> String {
    let mut modulus = vec![0x5a; bits.div_ceil(8)];
    modulus[0] = 1 << ((bits - 1) % 8);
    if modulus[0] & 0x80 != 0 {
        modulus.insert(0, 0); // a positive INTEGER
    }
    let key = tlv(0x30, &[tlv(0x02, &modulus), tlv(0x02, exponent)].concat());
    let algorithm = tlv(0x30, &[tlv(0x06, oid), vec![0x05, 0x00]].concat());
    let bits = tlv(0x03, &[&[0u8][..], &key].concat());
    BASE64URL.encode(tlv(0x30, &[algorithm, bits].concat()))
}

const RSA_ENCRYPTION: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const EC_PUBLIC_KEY: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];

fn fields(issuer: &TestIssuer) -> Fields {
    Fields {
        token_type: 2,
        nonce: [1; 32],
        challenge_digest: [2; 32],
        token_key_id: issuer.key_id(),
    }
}

#[test]
fn the_rfc_9578_form_is_read_its_id_is_the_sha256_of_its_der() {
    let issuer = TestIssuer::a();
    let key = IssuerKey::from_token_key(&issuer.token_key()).unwrap();
    assert_eq!(key.key_id(), issuer.key_id());
    assert_eq!(key.token_key(), issuer.token_key());
    let with_e3 = spki(RSA_ENCRYPTION, 2048, &[3]);
    let der = BASE64URL.decode(&with_e3).unwrap();
    let padded = base64::engine::general_purpose::URL_SAFE.encode(&der);
    assert!(padded.ends_with('='), "{padded}");
    let from_padded = IssuerKey::from_token_key(&padded).unwrap();
    assert_eq!(from_padded, IssuerKey::from_token_key(&with_e3).unwrap());
    assert_eq!(from_padded.token_key(), with_e3, "written unpadded");
    assert!(format!("{key:?}").len() < 40, "{key:?}");
}

#[test]
fn a_plain_rsa_encryption_spki_is_read_too() {
    let text = spki(RSA_ENCRYPTION, 2048, &[1, 0, 1]);
    let key = IssuerKey::from_token_key(&text).unwrap();
    let der = BASE64URL.decode(&text).unwrap();
    assert_eq!(key.key_id(), <[u8; 32]>::from(Sha256::digest(der)));
}

#[test]
fn keys_of_other_sizes_or_kinds_are_refused() {
    for bits in [1024, 2047, 2049, 3072, 4096] {
        let text = spki(RSA_ENCRYPTION, bits, &[1, 0, 1]);
        assert_eq!(IssuerKey::from_token_key(&text), Err(KeyError::Size(bits)));
    }
    let ec = spki(EC_PUBLIC_KEY, 2048, &[1, 0, 1]);
    let refused = IssuerKey::from_token_key(&ec);
    assert_eq!(
        refused,
        Err(KeyError::NotRsaPss("1.2.840.10045.2.1".into()))
    );
    for exponent in [&[1u8][..], &[2], &[1, 0, 0]] {
        let text = spki(RSA_ENCRYPTION, 2048, exponent);
        assert_eq!(IssuerKey::from_token_key(&text), Err(KeyError::NotRsa));
    }
}

#[test]
fn pss_parameters_other_than_sha384_and_salt_48_are_refused() {
    let der = TestIssuer::a().spki().to_vec();
    // The salt length's byte, and the last byte of the hash and MGF1 hash OIDs
    // (2.16.840.1.101.3.4.2.2 → .1, SHA-256).
    let salt_at = der
        .windows(5)
        .position(|w| w == [0xa2, 0x03, 0x02, 0x01, 48])
        .unwrap()
        + 4;
    let mut salt = der.clone();
    salt[salt_at] = 32;
    let hash_at = der
        .windows(9)
        .position(|w| w == [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04])
        .unwrap()
        + 10;
    let mut hash = der.clone();
    hash[hash_at] = 1;
    for bad in [salt, hash] {
        let text = BASE64URL.encode(&bad);
        assert_eq!(IssuerKey::from_token_key(&text), Err(KeyError::Parameters));
    }
}

#[test]
fn text_that_is_no_spki_is_refused() {
    let der = TestIssuer::a().spki().to_vec();
    let trailing = BASE64URL.encode([&der[..], &[0]].concat());
    assert_eq!(IssuerKey::from_token_key(&trailing), Err(KeyError::NotSpki));
    let cut = BASE64URL.encode(&der[..100]);
    assert_eq!(IssuerKey::from_token_key(&cut), Err(KeyError::NotSpki));
    for text in ["", "not base64!", "a+b/", &"A".repeat(4000)] {
        assert!(IssuerKey::from_token_key(text).is_err(), "{text:?}");
    }
    assert_eq!(IssuerKey::from_token_key("a+b/"), Err(KeyError::NotBase64));
}

#[test]
fn a_finished_blind_signature_verifies_and_nothing_else_does() {
    let (a, b) = (TestIssuer::a(), TestIssuer::b());
    let key = IssuerKey::from_token_key(&a.token_key()).unwrap();
    let token = a.sign(fields(&a));
    let (input, signature) = token.split_at(98);
    assert!(key.verify(input, signature));
    let mut flipped = signature.to_vec();
    flipped[100] ^= 1;
    assert!(!key.verify(input, &flipped));
    let mut other_input = input.to_vec();
    other_input[5] ^= 0x80;
    assert!(!key.verify(&other_input, signature));
    assert!(!key.verify(input, &signature[1..]));
    let by_b = b.sign(fields(&a));
    assert!(
        !key.verify(&by_b[..98], &by_b[98..]),
        "another issuer's signature"
    );
}
