//! Targets and headers a hostile probe sent to reach the backend as something else: `GET *`
//! past `path_prefix = "/"`, two `User-Agent` lines (one scored, both forwarded), and
//! `X_Bot_Score` beside the `x-bot-score` Floodgate sets, which a backend folding `_` into `-`
//! may read. Over HTTP/1 (raw) and HTTP/2 (h2c and TLS, Python's `h2`).

use crate::common::{raw, Proxy, Upstream};
use crate::h2fp::{probe, H2Proxy};

const CHROME: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                      Chrome/156.0.0.0 Safari/537.36";

#[test]
fn the_asterisk_target_is_for_options_only_and_options_star_is_answered_by_floodgate() {
    let h2 = H2Proxy::start_with(
        "",
        "\n[[policy]]\nname = \"site\"\ncapacity = 100\nrate = \"100/s\"\n\
         match = { path_prefix = \"/\" }\n",
    );
    let port = h2.proxy.port;
    for method in ["GET", "POST", "HEAD", "DELETE"] {
        let head = format!("{method} * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        assert_eq!(raw::status(&raw::exchange(port, &head)), 400, "{method} *");
    }
    let answer = raw::exchange(
        port,
        "OPTIONS * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(raw::status(&answer), 200, "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("allow: get, head, post, put, patch, delete, options"),
        "{answer}"
    );
    for mode in ["h2c", "tls"] {
        let ask = |method| {
            probe(
                mode,
                h2.port(mode),
                &["flood", "none", "0", "-", method, "*"],
            )
        };
        assert_eq!(ask("GET"), "400", "{mode}");
        assert_eq!(ask("OPTIONS"), "200", "{mode}");
    }
    assert_eq!(h2.upstream.served(), 0, "no asterisk reached the backend");
    assert_eq!(raw::get(port, "/", ""), 200);
}

#[test]
fn two_lines_of_a_header_floodgate_decides_on_get_400() {
    let h2 = H2Proxy::start_with(
        "",
        "score_header = \"x-bot-score\"\n\n[identity]\nsources = [\"header:x-api-key\", \"ip\"]\n",
    );
    let port = h2.proxy.port;
    let twice = [
        format!("User-Agent: curl/8.5.0\r\nUser-Agent: {CHROME}\r\n"),
        "Authorization: Bearer a\r\nAuthorization: Bearer b\r\n".to_owned(),
        "X-Api-Key: a\r\nx-api-key: b\r\n".to_owned(),
    ];
    for lines in &twice {
        assert_eq!(raw::get(port, "/", lines), 400, "{lines}");
    }
    let fine = "Accept: text/html\r\nAccept: */*\r\nCookie: a=1\r\nCookie: b=2\r\nX-Api-Key: a\r\n";
    assert_eq!(
        raw::get(port, "/", fine),
        200,
        "lists and cookies may repeat"
    );
    for mode in ["h2c", "tls"] {
        let agents = ["user-agent:curl/8.5.0", &format!("user-agent:{CHROME}")];
        let mut args = vec!["flood", "none", "0", "-", "GET", "/two"];
        args.extend(agents);
        assert_eq!(probe(mode, h2.port(mode), &args), "400", "{mode}");
        let keys = [
            "flood",
            "none",
            "0",
            "-",
            "GET",
            "/k",
            "x-api-key:a",
            "x-api-key:b",
        ];
        assert_eq!(probe(mode, h2.port(mode), &keys), "400", "{mode}");
        let cookies = [
            "flood",
            "none",
            "0",
            "-",
            "GET",
            "/c",
            "cookie:a=1",
            "cookie:b=2",
        ];
        assert_eq!(probe(mode, h2.port(mode), &cookies), "200", "{mode}");
    }
    assert_eq!(h2.upstream.served(), 3);
}

#[test]
fn underscore_spellings_of_the_headers_floodgate_sets_or_reads_never_reach_the_backend() {
    let upstream = Upstream::start();
    let config = "score_header = \"x-bot-score\"\nsignals_header = \"x-bot-signals\"\n\
                  ja4_header = \"x-ja4\"\n\n\
                  [identity]\nsources = [\"header:x-api-key\", \"ip\"]\n";
    for case in ["", "preserve_header_case = true"] {
        let proxy = Proxy::start_with_server(&[&upstream.addr], case, config);
        let lines = "X_Bot_Score: 0\r\nx-bot_signals: -\r\nX_JA4: t13d\r\nX_Api_Key: other\r\n\
                     X-Api-Key: k\r\nX_Forwarded_For: 10.0.0.1\r\nx_forwarded_proto: https\r\n\
                     X_Request_Id: mine\r\nUser_Agent: Googlebot\r\nX_Other_Thing: kept\r\n";
        assert_eq!(raw::get(proxy.port, "/", lines), 200, "{case}");
        for spelled in [
            "x_bot_score",
            "x-bot_signals",
            "x_ja4",
            "x_api_key",
            "x_forwarded_for",
            "x_forwarded_proto",
            "x_request_id",
            "user_agent",
        ] {
            assert_eq!(
                upstream.last_header(spelled),
                Vec::<String>::new(),
                "{spelled} {case}"
            );
        }
        assert_eq!(upstream.last_header("x-bot-score").len(), 1, "{case}");
        assert_eq!(upstream.last_header("x-api-key"), ["k"], "{case}");
        assert_eq!(upstream.last_header("x_other_thing"), ["kept"], "{case}");
    }
}
