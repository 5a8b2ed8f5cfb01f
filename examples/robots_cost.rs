//! What robots.txt's judge costs a request (issue 84: `[robots]` may cost at most 3 % of a
//! request): `robots::judge` over bench/robots/run's file (`ai-crawler` kept from everything,
//! BadBot from /private/ but /private/ok, the rest from /admin/, the trap) and its wrk
//! script's mix (four browsers, GPTBot and ClaudeBot with the catalogue's claim, BadBot named
//! only by a group, python-requests), each over its five paths, on one thread. Each round
//! times a batch of the whole mix and a batch of an empty loop over it (the harness), one
//! after the other, the order alternating; prints the median over rounds of the difference,
//! per request, for the browsers and for the crawlers.
//! `cargo run --release --example robots_cost [rounds]`.

use floodgate::bots::Catalogue;
use floodgate::identity::{BotClaim, Category, Verification};
use floodgate::robots::{judge, managed_file, Group, GroupAgent, RobotsSettings, Served, Source};
use std::hint::black_box;
use std::time::Instant;

const BROWSERS: [&str; 4] = [
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
];
const CRAWLERS: [&str; 4] = [
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
    "Mozilla/5.0 (compatible; BadBot/1.0; +https://example.com/bot)",
    "python-requests/2.32.3",
];
const PATHS: [&str; 5] = [
    "/",
    "/articles/1?page=2",
    "/admin/users",
    "/private/notes",
    "/private/ok",
];
const BATCH: u32 = 2_000;

fn group(agent: GroupAgent, disallow: &[&str], allow: &[&str]) -> Group {
    Group {
        agent,
        disallow: disallow.iter().map(|s| s.to_string()).collect(),
        allow: allow.iter().map(|s| s.to_string()).collect(),
        crawl_delay: None,
    }
}

/// One request of the mix: its User-Agent, the catalogue's claim, its path.
type Request = (&'static str, Option<BotClaim>, &'static str);

fn requests(agents: &[&'static str], catalogue: &Catalogue) -> Vec<Request> {
    let claim = |ua: &str| {
        catalogue.classify(ua).map(|(_, c)| BotClaim {
            name: c.name.clone(),
            operator: c.operator.clone(),
            claimed: c.category,
            verification: Verification::Unfinished,
        })
    };
    agents
        .iter()
        .flat_map(|&ua| PATHS.iter().map(move |&path| (ua, claim(ua), path)))
        .collect()
}

/// Nanoseconds per request of judging `mix` `BATCH` times, less the harness's.
fn round(served: &Served, mix: &[Request], judged: bool) -> f64 {
    let began = Instant::now();
    for _ in 0..BATCH {
        for (ua, claim, path) in mix {
            let ua = black_box(ua.as_bytes());
            match judged {
                true => drop(black_box(judge(served, Some(ua), claim.as_ref(), path))),
                false => drop(black_box((ua, claim.as_ref(), path))),
            }
        }
    }
    began.elapsed().as_nanos() as f64 / f64::from(BATCH) / mix.len() as f64
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(21);
    let settings = RobotsSettings {
        source: Source::Managed,
        groups: vec![
            group(GroupAgent::Category(Category::AiCrawler), &["/"], &[]),
            group(
                GroupAgent::Token("BadBot".into()),
                &["/private/"],
                &["/private/ok"],
            ),
            group(GroupAgent::Any, &["/admin/"], &[]),
        ],
        content_signal: Some("search=yes, ai-train=no".into()),
        ..RobotsSettings::default()
    };
    let catalogue = Catalogue::builtin();
    let trap = "/.well-known/floodgate-trap/";
    let served = Served::new(managed_file(&settings, &catalogue, Some(trap)), None);
    println!("{} tokens", served.agents().len());
    for (name, agents) in [("browsers", &BROWSERS), ("crawlers", &CRAWLERS)] {
        let mix = requests(agents, &catalogue);
        let costs = (0..rounds)
            .map(|i| {
                let (judged, harness) = match i % 2 {
                    0 => (round(&served, &mix, true), round(&served, &mix, false)),
                    _ => {
                        let harness = round(&served, &mix, false);
                        (round(&served, &mix, true), harness)
                    }
                };
                judged - harness
            })
            .collect();
        println!(
            "{name}: {:.0} ns a request (median of {rounds} rounds)",
            median(costs)
        );
    }
}
