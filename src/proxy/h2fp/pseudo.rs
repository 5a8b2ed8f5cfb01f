//! The order of the pseudo-headers (`m`ethod, `a`uthority, `s`cheme, `p`ath) at the start of a
//! request's header block, HPACK-decoded (`loona-hpack`, Huffman and static table included)
//! from a fresh decoder: the connection's first block is the only one read, so its dynamic
//! table starts empty. Pseudo-headers come before every other field (RFC 9113 §8.3), so the
//! decoding stops mattering at the first regular field, and a block cut short (the reader
//! keeps its first 4 KiB) still shows them.

/// The most pseudo-header letters kept (a request has four; a repeated one is malformed).
const MAX_LETTERS: usize = 8;

/// The pseudo-header letters of the header block `block` (its first bytes), in order and
/// `,`-separated: `m,a,s,p` for Chrome. Pseudo-headers the format has no letter for
/// (`:protocol`) are left out; so is anything after a field that cannot be decoded.
pub(super) fn pseudo_order(block: &[u8]) -> String {
    let mut letters: Vec<u8> = Vec::with_capacity(4);
    let mut regular_seen = false;
    let mut decoder = loona_hpack::Decoder::new();
    // An error (a block cut short, or not HPACK) ends the decoding: what came before stands.
    let _ = decoder.decode_with_cb(block, |name, _value| {
        if regular_seen || letters.len() == MAX_LETTERS {
            return;
        }
        match letter(&name) {
            Letter::Pseudo(l) => letters.push(l),
            Letter::OtherPseudo => {}
            Letter::Regular => regular_seen = true,
        }
    });
    let mut order = String::with_capacity(letters.len() * 2);
    for (i, l) in letters.iter().enumerate() {
        if i > 0 {
            order.push(',');
        }
        order.push(char::from(*l));
    }
    order
}

/// What a field name is to the fingerprint.
enum Letter {
    /// A pseudo-header the format names, by its letter.
    Pseudo(u8),
    /// A pseudo-header it does not (`:protocol`, `:status`).
    OtherPseudo,
    /// A regular field: the pseudo-headers are over.
    Regular,
}

/// What the field `name` is to the fingerprint.
fn letter(name: &[u8]) -> Letter {
    match name {
        b":method" => Letter::Pseudo(b'm'),
        b":authority" => Letter::Pseudo(b'a'),
        b":scheme" => Letter::Pseudo(b's'),
        b":path" => Letter::Pseudo(b'p'),
        [b':', ..] => Letter::OtherPseudo,
        _ => Letter::Regular,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(fields: &[(&[u8], &[u8])]) -> Vec<u8> {
        let mut encoder = loona_hpack::Encoder::new();
        encoder.encode(fields.iter().map(|(n, v)| (*n, *v)))
    }

    #[test]
    fn the_order_of_indexed_and_literal_pseudo_headers_is_read() {
        // 0x82 :method GET, 0x87 :scheme https, 0x84 :path / (static table), then a literal
        // :authority with an indexed name.
        let block = [0x82, 0x87, 0x84, 0x41, 0x01, b'x'];
        assert_eq!(pseudo_order(&block), "m,s,p,a");
        let chrome = encoded(&[
            (b":method", b"GET"),
            (b":authority", b"example.com"),
            (b":scheme", b"https"),
            (b":path", b"/index.html"),
            (b"user-agent", b"x"),
        ]);
        assert_eq!(pseudo_order(&chrome), "m,a,s,p");
    }

    #[test]
    fn huffman_coded_literal_names_are_read() {
        // A literal field with a literal, Huffman-coded name `:path` (RFC 7541 appendix B):
        // 0x40 (incremental indexing, new name), length 0x84 | H, then its code, then `/`.
        let name: [u8; 4] = [0xb9, 0x58, 0xd3, 0x3f];
        let mut block = vec![0x82, 0x40, 0x80 | name.len() as u8];
        block.extend_from_slice(&name);
        block.extend_from_slice(&[0x01, b'/']);
        assert_eq!(pseudo_order(&block), "m,p");
    }

    #[test]
    fn the_order_ends_at_the_first_regular_field_or_at_garbage() {
        let block = encoded(&[(b":method", b"GET"), (b"x-a", b"1"), (b":path", b"/")]);
        assert_eq!(pseudo_order(&block), "m");
        let cut = encoded(&[(b":method", b"GET"), (b":path", &[b'a'; 300])]);
        assert_eq!(pseudo_order(&cut[..20]), "m");
        assert_eq!(pseudo_order(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), "");
        assert_eq!(pseudo_order(&[]), "");
        let protocol = encoded(&[(b":method", b"CONNECT"), (b":protocol", b"websocket")]);
        assert_eq!(pseudo_order(&protocol), "m");
    }
}
