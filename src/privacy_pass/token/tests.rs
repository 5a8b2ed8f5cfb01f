//! Reading `Authorization: PrivateToken …`: the forms RFC 9577 and HTTP allow, and every
//! wrong length and random bytes refused without a panic.

use super::*;
use crate::privacy_pass::test_issuer::{authorization, token_input, Fields, TestIssuer};

fn fields() -> Fields {
    Fields {
        token_type: TOKEN_TYPE,
        nonce: [1; 32],
        challenge_digest: [2; 32],
        token_key_id: [3; 32],
    }
}

fn bytes() -> Vec<u8> {
    let mut bytes = token_input(&fields()).to_vec();
    bytes.extend([4u8; 256]);
    bytes
}

/// A little xorshift: the same "random" bytes on every run.
struct Bytes(u64);

impl Bytes {
    fn next(&mut self) -> u8 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 24) as u8
    }

    fn fill(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next()).collect()
    }
}

#[test]
fn a_token_is_read_field_by_field() {
    let token = Token::from_authorization(authorization(&bytes()).as_bytes()).unwrap();
    assert_eq!(token.token_type, 2);
    assert_eq!(token.nonce, [1; 32]);
    assert_eq!(token.challenge_digest, [2; 32]);
    assert_eq!(token.token_key_id, [3; 32]);
    assert_eq!(token.authenticator, [4; 256]);
    assert_eq!(token.token_input(), token_input(&fields()));
}

#[test]
fn a_minted_token_is_read_and_its_input_is_what_was_signed() {
    let issuer = TestIssuer::a();
    let minted = issuer.sign(fields());
    let token = Token::from_authorization(authorization(&minted).as_bytes()).unwrap();
    assert_eq!(&token.token_input()[..], &minted[..INPUT_LEN]);
    assert_eq!(&token.authenticator[..], &minted[INPUT_LEN..]);
}

#[test]
fn the_scheme_in_any_case_the_value_quoted_or_not_other_parameters_ignored() {
    let text = BASE64URL.encode(bytes());
    let padded = base64::engine::general_purpose::URL_SAFE.encode(bytes());
    let forms = [
        format!("PrivateToken token=\"{text}\""),
        format!("privatetoken token={text}"),
        format!("PRIVATETOKEN  Token = \"{text}\" "),
        format!("  PrivateToken\ttoken=\"{padded}\""),
        format!("PrivateToken token={padded}, ext=\"a, \\\"b\\\"\""),
        format!("PrivateToken ext=1, token=\"{text}\",other=x"),
        format!("PrivateToken ,, token=\"{text}\",,"),
    ];
    for form in forms {
        let read = Token::from_authorization(form.as_bytes());
        assert_eq!(read.map(|t| t.nonce), Ok([1; 32]), "{form}");
        assert!(is_private_token(form.as_bytes()), "{form}");
    }
}

#[test]
fn other_schemes_are_not_privacy_passs() {
    for value in [
        "Bearer abc",
        "PrivateTokens token=x",
        "Private Token token=x",
        "",
        "  ",
    ] {
        let read = Token::from_authorization(value.as_bytes());
        assert_eq!(read, Err(TokenError::OtherScheme), "{value:?}");
        assert!(!is_private_token(value.as_bytes()));
    }
}

#[test]
fn parameters_that_are_not_one_token_are_malformed() {
    let text = BASE64URL.encode(bytes());
    let forms = [
        "PrivateToken".to_owned(),
        "PrivateToken token".to_owned(),
        "PrivateToken token=".to_owned(),
        "PrivateToken challenge=\"abc\"".to_owned(),
        format!("PrivateToken token=\"{text}"),
        format!("PrivateToken token=\"{text}\" junk"),
        format!("PrivateToken token={text} junk"),
        format!("PrivateToken token=\"{text}\", token=\"{text}\""),
        format!("PrivateToken to ken=\"{text}\""),
        format!("PrivateToken token=\"{}\"", text.replace('A', "+")),
        format!("PrivateToken token=\"{text}{}\"", "A".repeat(MAX_HEADER)),
    ];
    for form in forms {
        let read = Token::from_authorization(form.as_bytes());
        assert_eq!(read, Err(TokenError::Malformed), "{form}");
    }
    let latin1 = [b"PrivateToken token=\"".as_slice(), &[0xff, b'"']].concat();
    assert_eq!(
        Token::from_authorization(&latin1),
        Err(TokenError::Malformed)
    );
}

#[test]
fn a_token_of_another_type_is_the_wrong_type_whatever_its_length() {
    let mut voprf = bytes();
    voprf[1] = 1;
    voprf.truncate(2 + 32 + 32 + 32 + 48);
    let read = Token::from_authorization(authorization(&voprf).as_bytes());
    assert_eq!(read, Err(TokenError::WrongType(1)));
    let mut other = bytes();
    other[0] = 0xda;
    assert_eq!(
        Token::from_bytes(&other),
        Err(TokenError::WrongType(0xda02))
    );
}

#[test]
fn tokens_of_every_length_and_random_bytes_are_refused_never_a_panic() {
    let mut random = Bytes(0x9e37_79b9_7f4a_7c15);
    for len in 0..400 {
        let mut typed = random.fill(len);
        if len >= 2 {
            typed[..2].copy_from_slice(&TOKEN_TYPE.to_be_bytes());
        }
        let read = Token::from_authorization(authorization(&typed).as_bytes());
        match len {
            TOKEN_LEN => assert!(read.is_ok(), "{len}"),
            _ => assert_eq!(read, Err(TokenError::Malformed), "{len}"),
        }
        let untyped = random.fill(len);
        let read = Token::from_authorization(authorization(&untyped).as_bytes());
        let fits = len == TOKEN_LEN && untyped[..2] == [0, 2];
        assert_eq!(read.is_ok(), fits, "{len}: {read:?}");
    }
    for round in 0..2000 {
        let len = usize::from(random.next()) * (1 + round % 20);
        let mut value = b"PrivateToken ".to_vec();
        value.extend(random.fill(len));
        assert!(Token::from_authorization(&value).is_err());
        const ALPHABET: &[u8] = b" \t,=\"\\aZ09-_";
        let printable: Vec<u8> = value
            .iter()
            .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()])
            .collect();
        let _ =
            Token::from_authorization(&[b"PrivateToken token=".as_slice(), &printable].concat());
    }
}
