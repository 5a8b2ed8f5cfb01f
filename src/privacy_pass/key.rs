//! An issuer's public key, as RFC 9578 §6.5 publishes it: base64url of a DER
//! SubjectPublicKeyInfo for RSASSA-PSS with SHA-384, MGF1-SHA-384 and a 48-byte salt. Only RSA
//! 2048 is taken (token type 0x0002). Its id is the SHA-256 of those DER bytes as published;
//! its signatures are checked by `ring` (RSASSA-PSS-SHA384, the finished signature of RFC 9474's
//! RSABSSA-SHA384-PSS-Deterministic: no message randomizer, so plain PSS over the message).

use base64::alphabet::URL_SAFE;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use ring::signature::{UnparsedPublicKey, RSA_PSS_2048_8192_SHA384};
use sha2::{Digest, Sha256};
use std::fmt;
use x509_parser::oid_registry::{
    OID_NIST_HASH_SHA384, OID_PKCS1_RSAENCRYPTION, OID_PKCS1_RSASSAPSS,
};
use x509_parser::prelude::FromDer;
use x509_parser::public_key::RSAPublicKey;
use x509_parser::signature_algorithm::RsaSsaPssParams;
use x509_parser::x509::SubjectPublicKeyInfo;

/// base64url, padded or not (RFC 9577 and 9578 write it unpadded; some issuers pad).
pub(crate) const BASE64URL: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The modulus size of token type 0x0002, in bits.
pub const MODULUS_BITS: usize = 2048;

/// The salt length of RSABSSA-SHA384-PSS, in bytes (SHA-384's length; `ring`'s too).
pub const SALT_LEN: u32 = 48;

/// The longest `token_key` text read: a 2048-bit key's SPKI is about 560 characters.
const MAX_TEXT: usize = 2048;

/// The id of MGF1 (RFC 8017).
const MGF1: &str = "1.2.840.113549.1.1.8";

/// An issuer's RSA-2048 public key.
#[derive(Clone, PartialEq, Eq)]
pub struct IssuerKey {
    /// The text as configured or published, unpadded.
    text: String,
    id: [u8; 32],
    /// The PKCS#1 RSAPublicKey inside the SPKI, as `ring` reads it.
    pkcs1: Vec<u8>,
}

/// Why a key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// Not base64url, or longer than any 2048-bit key.
    #[error("not base64url text")]
    NotBase64,
    /// Not a DER SubjectPublicKeyInfo (or bytes follow it).
    #[error("not a DER SubjectPublicKeyInfo")]
    NotSpki,
    /// The algorithm is neither id-RSASSA-PSS nor rsaEncryption.
    #[error("not an RSASSA-PSS key (algorithm {0})")]
    NotRsaPss(String),
    /// RSASSA-PSS with other parameters than SHA-384, MGF1-SHA-384, salt 48.
    #[error("RSASSA-PSS parameters other than SHA-384, MGF1 with SHA-384 and a 48-byte salt")]
    Parameters,
    /// The key inside is not an RSA public key, or its exponent is unusable.
    #[error("not an RSA public key")]
    NotRsa,
    /// The modulus is not 2048 bits.
    #[error("a {0}-bit RSA key, where token type 2 needs 2048 bits")]
    Size(usize),
}

impl IssuerKey {
    /// The key from its `token-key` text (base64url of the SPKI DER, padded or not). Both the
    /// RFC 9578 form (id-RSASSA-PSS with SHA-384 parameters, or without parameters) and a plain
    /// rsaEncryption SPKI are taken.
    pub fn from_token_key(b64url: &str) -> Result<Self, KeyError> {
        let text = b64url.trim();
        if text.len() > MAX_TEXT {
            return Err(KeyError::NotBase64);
        }
        let der = BASE64URL.decode(text).map_err(|_| KeyError::NotBase64)?;
        let pkcs1 = rsa_2048(&der)?;
        Ok(Self {
            text: text.trim_end_matches('=').to_owned(),
            id: Sha256::digest(&der).into(),
            pkcs1,
        })
    }

    /// The key's id: SHA-256 of its SPKI DER (RFC 9578 §6.5 `token_key_id`).
    pub fn key_id(&self) -> [u8; 32] {
        self.id
    }

    /// The key as base64url text, unpadded (a `WWW-Authenticate` challenge's `token-key`).
    pub fn token_key(&self) -> &str {
        &self.text
    }

    /// Whether `signature` is this key's RSASSA-PSS (SHA-384, MGF1-SHA-384, salt 48) over
    /// `message`.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        UnparsedPublicKey::new(&RSA_PSS_2048_8192_SHA384, &self.pkcs1)
            .verify(message, signature)
            .is_ok()
    }
}

impl fmt::Debug for IssuerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id: String = self.id[..8].iter().map(|b| format!("{b:02x}")).collect();
        write!(f, "IssuerKey({id}…)")
    }
}

/// The PKCS#1 key of an RSA-2048 SPKI for RSASSA-PSS.
fn rsa_2048(der: &[u8]) -> Result<Vec<u8>, KeyError> {
    let (rest, spki) = SubjectPublicKeyInfo::from_der(der).map_err(|_| KeyError::NotSpki)?;
    if !rest.is_empty() {
        return Err(KeyError::NotSpki);
    }
    let algorithm = &spki.algorithm;
    if algorithm.algorithm == OID_PKCS1_RSASSAPSS {
        if let Some(params) = &algorithm.parameters {
            pss_sha384(params)?;
        }
    } else if algorithm.algorithm != OID_PKCS1_RSAENCRYPTION {
        return Err(KeyError::NotRsaPss(algorithm.algorithm.to_id_string()));
    }
    let pkcs1 = spki.subject_public_key.data.as_ref();
    let (rest, key) = RSAPublicKey::from_der(pkcs1).map_err(|_| KeyError::NotRsa)?;
    if !rest.is_empty() {
        return Err(KeyError::NotRsa);
    }
    match bits(key.modulus) {
        MODULUS_BITS => {}
        other => return Err(KeyError::Size(other)),
    }
    // ring takes odd exponents from 3 up to 2^33 - 1.
    match key.try_exponent() {
        Ok(e) if e >= 3 && e % 2 == 1 && e < (1 << 33) => Ok(pkcs1.to_vec()),
        _ => Err(KeyError::NotRsa),
    }
}

/// Checks RSASSA-PSS-params (RFC 4055) for SHA-384, MGF1-SHA-384 and a 48-byte salt.
fn pss_sha384(params: &x509_parser::der_parser::asn1_rs::Any<'_>) -> Result<(), KeyError> {
    let params = RsaSsaPssParams::try_from(params).map_err(|_| KeyError::Parameters)?;
    let mgf = params
        .mask_gen_algorithm()
        .map_err(|_| KeyError::Parameters)?;
    let sha384 = *params.hash_algorithm_oid() == OID_NIST_HASH_SHA384
        && mgf.mgf.to_id_string() == MGF1
        && mgf.hash == OID_NIST_HASH_SHA384;
    match sha384 && params.salt_length() == SALT_LEN && params.trailer_field() == 1 {
        true => Ok(()),
        false => Err(KeyError::Parameters),
    }
}

/// The bit length of a big-endian unsigned integer.
fn bits(be: &[u8]) -> usize {
    let Some(first) = be.iter().position(|&b| b != 0) else {
        return 0;
    };
    (be.len() - first) * 8 - be[first].leading_zeros() as usize
}

#[cfg(test)]
mod tests;
