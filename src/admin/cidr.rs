//! A cidr ban's network, read strictly: an IPv4-mapped IPv6 network is stored as the IPv4
//! network it matches, host bits set are refused naming the network meant, and a ban of
//! every address of a family (`/0`) needs `"force": true`.

use super::input;
use super::reply::Reply;
use crate::identity::Network;

/// The network a cidr ban's `value` names, or a 400: one that sets host bits names the
/// network meant, and `/0` (everyone) needs `"force": true`.
pub(super) fn cidr_ban(value: &input::Value, force: bool) -> Result<ipnet::IpNet, Reply> {
    let input::Value::One(text) = value else {
        return Err(Reply::bad_field("value", "a cidr ban takes one network"));
    };
    let network = Network::read(text).ok_or_else(|| {
        Reply::bad_field(
            "value",
            "`value` must be an address or a network like 203.0.113.0/24",
        )
    })?;
    if network.host_bits {
        let detail = format!(
            "`value` sets host bits below its prefix: write {} if that network is meant",
            network.net
        );
        return Err(Reply::bad_field("value", &detail));
    }
    if network.is_everyone() && !force {
        let detail = format!(
            "`value` {} bans every caller of its family: send \"force\": true if that is meant",
            network.net
        );
        return Err(Reply::bad_field("value", &detail));
    }
    Ok(network.net)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, force: bool) -> Result<String, String> {
        cidr_ban(&input::Value::One(text.into()), force)
            .map(|net| net.to_string())
            .map_err(|e| String::from_utf8_lossy(&e.body).into_owned())
    }

    #[test]
    fn a_network_is_stored_as_it_matches_or_refused_saying_why() {
        assert_eq!(
            read("::ffff:127.0.0.2/128", false),
            Ok("127.0.0.2/32".into())
        );
        assert_eq!(
            read("::ffff:127.0.0.0/104", false),
            Ok("127.0.0.0/8".into())
        );
        assert_eq!(read("203.0.113.7", false), Ok("203.0.113.7/32".into()));
        let e = read("10.0.0.1/8", false).unwrap_err();
        assert!(
            e.contains("write 10.0.0.0/8") && e.contains(r#""field":"value""#),
            "{e}"
        );
        assert!(read("0.0.0.0/0", false).unwrap_err().contains("force"));
        assert!(read("::/0", false).is_err());
        assert_eq!(read("::/0", true), Ok("::/0".into()));
        assert!(read("10.0.0.0/33", true).is_err());
        let parts = input::Value::Parts(vec!["10.0.0.0/8".into()]);
        assert!(cidr_ban(&parts, false).is_err());
    }
}
