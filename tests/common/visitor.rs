//! A client that meets challenges the way a script would: plain HTTP from a chosen loopback
//! address, redirects not followed, the pass cookie kept by hand, pages solved in Rust (the
//! nonce read from the page, the proof of work found with SHA-256 as the page's script does).

use reqwest::blocking::{Client, Response};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// What came back.
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Answer {
    fn of(response: Response) -> Self {
        Self {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            body: response.text().unwrap_or_default(),
        }
    }

    /// A header's value, "" when absent.
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The nonce of a challenge page.
    pub fn nonce(&self) -> Option<String> {
        let pattern = regex::Regex::new(r#"nonce(?:=|="|":")([A-Za-z0-9_-]{70})"#).unwrap();
        pattern.captures(&self.body).map(|c| c[1].to_owned())
    }

    /// Whether this is a challenge page.
    pub fn is_challenge(&self) -> bool {
        self.status == 403 && self.nonce().is_some()
    }
}

/// A visitor of one proxy, from one address, holding at most one pass.
pub struct Visitor {
    base: String,
    client: Client,
    pub pass: Option<String>,
}

impl Visitor {
    /// A visitor of the proxy at `base` (`http://127.0.0.1:port`) from `address`.
    pub fn new(base: &str, address: &str) -> Self {
        let client = Client::builder()
            .local_address(address.parse::<std::net::IpAddr>().ok())
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client");
        Self {
            base: base.to_owned(),
            client,
            pass: None,
        }
    }

    /// The same visitor's pass, carried from another address.
    pub fn moved_to(&self, address: &str) -> Self {
        let mut moved = Self::new(&self.base, address);
        moved.pass = self.pass.clone();
        moved
    }

    /// A request of `method` for `target` with `headers` (and the pass, if held).
    pub fn send(&self, method: &str, target: &str, headers: &[(&str, &str)]) -> Answer {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self
            .client
            .request(method, format!("{}{target}", self.base));
        if let Some(pass) = &self.pass {
            request = request.header("cookie", format!("floodgate_pass={pass}"));
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Answer::of(request.send().expect("the proxy answers"))
    }

    /// A page load of `target`, as a browser asks (HTML accepted).
    pub fn get(&self, target: &str) -> Answer {
        self.send("GET", target, &[("accept", "text/html,*/*;q=0.8")])
    }

    /// Sends the solution `solution` of `nonce` for `to` (raw, not encoded here).
    pub fn redeem(&mut self, nonce: &str, solution: Option<&str>, to: &str) -> Answer {
        let mut query = form_urlencoded::Serializer::new(String::new());
        query.append_pair("nonce", nonce);
        if let Some(solution) = solution {
            query.append_pair("solution", solution);
        }
        query.append_pair("to", to);
        let answer = self.send(
            "GET",
            &format!("/.floodgate/challenge?{}", query.finish()),
            &[],
        );
        if let Some(pass) = pass_cookie(&answer) {
            self.pass = Some(pass);
        }
        answer
    }

    /// Loads `target`, solves its challenge page (`pow` of `difficulty` bits, or `refresh`
    /// after waiting `wait`), and answers where the solution sent it.
    pub fn solve(&mut self, target: &str, work: Work) -> Answer {
        let page = self.get(target);
        assert!(
            page.is_challenge(),
            "{target} is challenged: {} {}",
            page.status,
            page.body
        );
        let nonce = page.nonce().unwrap();
        let solution = match work {
            Work::Pow(difficulty) => Some(proof_of_work(&nonce, difficulty)),
            Work::Refresh(wait) => {
                std::thread::sleep(wait);
                None
            }
        };
        self.redeem(&nonce, solution.as_deref(), target)
    }
}

/// What a page asks.
#[derive(Clone, Copy)]
pub enum Work {
    /// Leading zero bits of SHA-256(nonce ":" counter).
    Pow(u8),
    /// Waiting before the reload.
    Refresh(Duration),
}

/// The pass a `Set-Cookie` of `answer` sets.
pub fn pass_cookie(answer: &Answer) -> Option<String> {
    answer
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| v.strip_prefix("floodgate_pass="))
        .map(|v| v.split(';').next().unwrap_or("").to_owned())
}

/// The first counter whose SHA-256 over `nonce:counter` starts with `difficulty` zero bits.
pub fn proof_of_work(nonce: &str, difficulty: u8) -> String {
    (0u64..)
        .map(|n| n.to_string())
        .find(|n| {
            leading_zero_bits(&Sha256::digest(format!("{nonce}:{n}"))) >= u32::from(difficulty)
        })
        .unwrap()
}

fn leading_zero_bits(hash: &[u8]) -> u32 {
    let mut bits = 0;
    for byte in hash {
        if *byte == 0 {
            bits += 8;
        } else {
            return bits + byte.leading_zeros();
        }
    }
    bits
}
