//! JA4 against the example of FoxIO's specification, and its edge cases.

use super::*;

/// The extensions of the specification's example, in its order, with contents that parse.
fn example_extensions() -> Vec<(u16, Vec<u8>)> {
    let sigalgs: Vec<u8> = [
        0x0403u16, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601,
    ]
    .iter()
    .flat_map(|a| a.to_be_bytes())
    .collect();
    vec![
        (0x001b, vec![2, 0, 2]),
        (0x0000, sni("example.com")),
        (0x0033, vec![0, 0]),
        (0x0010, alpn_data(&[b"h2", b"http/1.1"])),
        (0x4469, vec![0, 3, 2, b'h', b'2']),
        (0x0017, vec![]),
        (0x002d, vec![1, 1]),
        (
            0x000d,
            [&(sigalgs.len() as u16).to_be_bytes()[..], &sigalgs].concat(),
        ),
        (0x0005, vec![1, 0, 0, 0, 0]),
        (0x0023, vec![]),
        (0x0012, vec![]),
        (0x002b, vec![4, 3, 4, 3, 3]),
        (0xff01, vec![0]),
        (0x000b, vec![1, 0]),
        (0x000a, vec![0, 4, 0, 0x1d, 0, 0x17]),
        (0x0015, vec![0; 8]),
    ]
}

/// The specification's example cipher suites, in its order.
const EXAMPLE_CIPHERS: [u16; 15] = [
    0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c,
    0x009d, 0x002f, 0x0035,
];

fn sni(host: &str) -> Vec<u8> {
    let name = host.as_bytes();
    let mut data = ((name.len() + 3) as u16).to_be_bytes().to_vec();
    data.push(0);
    data.extend_from_slice(&(name.len() as u16).to_be_bytes());
    data.extend_from_slice(name);
    data
}

fn alpn_data(names: &[&[u8]]) -> Vec<u8> {
    let list: Vec<u8> = names
        .iter()
        .flat_map(|n| [&[n.len() as u8][..], n].concat())
        .collect();
    [&(list.len() as u16).to_be_bytes()[..], &list].concat()
}

/// A ClientHello handshake message (legacy version TLS 1.2) offering `ciphers` and
/// `extensions`.
fn client_hello(ciphers: &[u16], extensions: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let mut body = vec![3, 3];
    body.extend_from_slice(&[0x5a; 32]);
    body.push(0);
    body.extend_from_slice(&((ciphers.len() * 2) as u16).to_be_bytes());
    body.extend(ciphers.iter().flat_map(|c| c.to_be_bytes()));
    body.extend_from_slice(&[1, 0]);
    let mut block = Vec::new();
    for (kind, data) in extensions {
        block.extend_from_slice(&kind.to_be_bytes());
        block.extend_from_slice(&(data.len() as u16).to_be_bytes());
        block.extend_from_slice(data);
    }
    body.extend_from_slice(&(block.len() as u16).to_be_bytes());
    body.extend_from_slice(&block);
    let len = (body.len() as u32).to_be_bytes();
    [&[1, len[1], len[2], len[3]][..], &body].concat()
}

fn ja4_text(hello: &[u8]) -> String {
    ja4(hello).map(|j| j.to_string()).unwrap_or_default()
}

#[test]
fn the_hashes_of_the_specification() {
    let ciphers = "002f,0035,009c,009d,1301,1302,1303,c013,c014,c02b,c02c,c02f,c030,cca8,cca9";
    assert_eq!(hash12(ciphers), "8daaf6152771");
    let extensions = "0005,000a,000b,000d,0012,0015,0017,001b,0023,002b,002d,0033,4469,ff01";
    let sigalgs = "0403,0804,0401,0503,0805,0501,0806,0601";
    assert_eq!(hash12(&format!("{extensions}_{sigalgs}")), "e5627efa2ab1");
    assert_eq!(hash12(extensions), "6d807ffa2a79");
    assert_eq!(hash12(""), "000000000000");
}

#[test]
fn the_example_of_the_specification() {
    let hello = client_hello(&EXAMPLE_CIPHERS, &example_extensions());
    assert_eq!(ja4_text(&hello), "t13d1516h2_8daaf6152771_e5627efa2ab1");
}

#[test]
fn grease_is_ignored_everywhere() {
    let mut ciphers = vec![0x0a0a];
    ciphers.extend_from_slice(&EXAMPLE_CIPHERS);
    let mut extensions = vec![(0x1a1a, vec![]), (0xfafa, vec![0])];
    extensions.extend(example_extensions());
    for (kind, data) in &mut extensions {
        match kind {
            0x002b => *data = vec![6, 0x2a, 0x2a, 3, 4, 3, 3],
            0x000d => data.splice(0..2, [0, 18, 0x3a, 0x3a]).for_each(drop),
            _ => {}
        }
    }
    let hello = client_hello(&ciphers, &extensions);
    assert_eq!(ja4_text(&hello), "t13d1516h2_8daaf6152771_e5627efa2ab1");
}

#[test]
fn no_sni_alpn_or_supported_versions() {
    let extensions: Vec<_> = example_extensions()
        .into_iter()
        .filter(|(kind, _)| ![0x0000, 0x0010, 0x002b].contains(kind))
        .collect();
    let hello = client_hello(&EXAMPLE_CIPHERS, &extensions);
    let text = ja4_text(&hello);
    assert!(text.starts_with("t12i151300_8daaf6152771_"), "{text}");
}

#[test]
fn no_signature_algorithms_no_underscore() {
    let extensions: Vec<_> = example_extensions()
        .into_iter()
        .filter(|(kind, _)| *kind != 0x000d)
        .collect();
    let hello = client_hello(&EXAMPLE_CIPHERS, &extensions);
    let without_000d = "0005,000a,000b,0012,0015,0017,001b,0023,002b,002d,0033,4469,ff01";
    let expected = format!("t13d1515h2_8daaf6152771_{}", hash12(without_000d));
    assert_eq!(ja4_text(&hello), expected);
}

#[test]
fn no_ciphers_and_no_extensions_are_zeros() {
    let hello = client_hello(&[], &[(0x0000, sni("a.example"))]);
    assert_eq!(ja4_text(&hello), "t12d000100_000000000000_000000000000");
}

#[test]
fn the_alpn_characters() {
    let cases: [(&[u8], &str); 10] = [
        (b"h2", "h2"),
        (b"http/1.1", "h1"),
        (b"x", "xx"),
        (&[0xab], "ab"),
        (&[0x20], "20"),
        (&[0xab, 0xcd], "ad"),
        (&[0x20, 0x61], "21"),
        (&[0x30, 0xab], "3b"),
        (&[0x30, 0x31, 0xab, 0xcd], "3d"),
        (&[0x30, 0xab, 0xcd, 0x31], "01"),
    ];
    for (value, expected) in cases {
        assert_eq!(alpn(Some(value)), expected, "{value:?}");
    }
    assert_eq!(alpn(Some(b"")), "00");
    assert_eq!(alpn(None), "00");
}

#[test]
fn bad_input_is_none_never_a_panic() {
    let hello = client_hello(&EXAMPLE_CIPHERS, &example_extensions());
    for cut in 0..hello.len() {
        assert_eq!(ja4(&hello[..cut]), None, "truncated at {cut}");
    }
    let mut server_hello = hello.clone();
    server_hello[0] = 2;
    assert_eq!(ja4(&server_hello), None);
    let mut bad_extension = client_hello(&EXAMPLE_CIPHERS, &[(0x0017, vec![1])]);
    assert_eq!(
        ja4(&bad_extension),
        None,
        "extended_master_secret must be empty"
    );
    bad_extension.truncate(4);
    assert_eq!(ja4(&bad_extension), None);
}

#[test]
fn counts_are_capped_at_99() {
    let ciphers: Vec<u16> = (1..=120).collect();
    let extensions: Vec<_> = (0x0100..0x0178).map(|k| (k, vec![])).collect();
    let text = ja4_text(&client_hello(&ciphers, &extensions));
    assert!(text.starts_with("t12i999900_"), "{text}");
}
