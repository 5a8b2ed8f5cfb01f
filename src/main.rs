//! `floodgate --config FILE [--test]`: load the config, build the server, run it.
//! `floodgate bots update DIR`: download crawlers' published ranges (docs: Crawlers).

use clap::Parser;
use floodgate::app::Launch;
use floodgate::clock::Clock;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

mod allocator;

/// mimalloc: a proxy allocates and frees small buffers per request on every worker thread, where
/// it spends about a third less CPU than the system allocator (bench/run).
#[cfg(not(feature = "count-allocs"))]
#[global_allocator]
static ALLOCATOR: allocator::MiMalloc = allocator::MiMalloc;

/// The same, counting every allocation, for measuring (bench/allocs/run).
#[cfg(feature = "count-allocs")]
#[global_allocator]
static ALLOCATOR: allocator::Counted<allocator::MiMalloc> = allocator::Counted(allocator::MiMalloc);

/// A reverse proxy that throttles each caller with a token bucket.
#[derive(Parser)]
#[command(
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("FLOODGATE_COMMIT"), ")"),
    about,
    subcommand_negates_reqs = true,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    /// The config file (TOML).
    #[arg(long, short, required = true)]
    config: Option<PathBuf>,
    /// Validate the config, print the effective settings and exit.
    #[arg(long, short)]
    test: bool,
    /// Take the listeners over from the running instance (docs: Running in production, Zero-downtime upgrade).
    #[arg(long, short)]
    upgrade: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

/// Tasks besides running the proxy.
#[derive(clap::Subcommand)]
enum Command {
    /// Known bots.
    #[command(subcommand)]
    Bots(BotsCommand),
}

#[derive(clap::Subcommand)]
enum BotsCommand {
    /// Download the address ranges crawlers publish into DIR (`bots.ranges_dir`).
    Update {
        /// Where the `<crawler>.json` files go (made if missing).
        dir: PathBuf,
        /// A catalogue file (the shipped catalogue's format) to use instead of the shipped one.
        #[arg(long, conflicts_with = "config")]
        catalogue: Option<PathBuf>,
        /// A config file: the shipped catalogue with its `[[bots.crawler]]` entries.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Where FoxIO's JA4 mapping (ja4plus-mapping.csv) is read for the browsers' JA4s
        /// the bot score compares against (written to DIR/browsers.toml); `none`: not read.
        /// Default: the shipped list's `ja4_url`.
        #[arg(long)]
        ja4_mapping: Option<String>,
    },
}

/// `floodgate bots update DIR [--catalogue FILE | --config FILE] [--ja4-mapping URL]`.
fn bots_update(
    dir: &Path,
    catalogue: Option<&Path>,
    config: Option<&Path>,
    mapping: Option<&str>,
) -> ExitCode {
    let Some(path) = config else {
        return floodgate::bots::update::command(dir, catalogue, mapping, &Clock::System);
    };
    match floodgate::config::load(path) {
        Ok(config) => {
            let catalogue = &config.bots.crawlers.catalogue;
            floodgate::bots::update::run(dir, catalogue, mapping, &Clock::System)
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

/// What the start line says the instance serves: the proxy's listener (or that there is
/// none), then the decision endpoint's and the rate limit service's.
fn serving(config: &floodgate::config::Config) -> String {
    let proxy = config.server.listen.map_or_else(
        || "no proxy: no [upstream]".to_owned(),
        |l| format!("listening on {l}"),
    );
    let check = config
        .check
        .as_ref()
        .map(|c| format!("[check] on {}", c.listen));
    let rls = config
        .rls
        .as_ref()
        .map(|r| format!("[rls] on {}", r.listen));
    let others: Vec<String> = check.into_iter().chain(rls).collect();
    match others.is_empty() {
        true => proxy,
        false => format!("{proxy}; {}", others.join(", ")),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let config_path = match (cli.command, cli.config) {
        (
            Some(Command::Bots(BotsCommand::Update {
                dir,
                catalogue,
                config,
                ja4_mapping,
            })),
            _,
        ) => {
            let (catalogue, config) = (catalogue.as_deref(), config.as_deref());
            return bots_update(&dir, catalogue, config, ja4_mapping.as_deref());
        }
        (None, Some(path)) => path,
        // clap requires `--config` when no subcommand is given.
        (None, None) => return ExitCode::from(2),
    };
    // Installed first, so that a SIGHUP never finds the default action (exit) in place.
    let hangup = Arc::new(AtomicBool::new(false));
    if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGHUP, hangup.clone()) {
        eprintln!("cannot install the SIGHUP handler: {e}");
        return ExitCode::FAILURE;
    }
    floodgate::crowdsec::set_give_back(allocator::give_back);
    #[cfg(feature = "count-allocs")]
    if let Err(e) = allocator::report_on_sigusr2() {
        eprintln!("cannot install the SIGUSR2 handler: {e}");
        return ExitCode::FAILURE;
    }
    floodgate::telemetry::logger::init();
    let config = match floodgate::config::load(&config_path) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if cli.test {
        // The start-time checks that read files: what would stop a start stops the test.
        if let Err(e) = floodgate::app::preflight(&config) {
            eprintln!("{}: {e}", config.path.display());
            return ExitCode::from(2);
        }
        if let Some(note) = floodgate::app::PidFile::note(&config.server.pid_file) {
            eprintln!("{}: note: {note}", config.path.display());
        }
        // A reader that closed early (`floodgate --test | head`) is no failure of the config.
        let _ = write!(std::io::stdout(), "{config}");
        return ExitCode::SUCCESS;
    }
    let launch = Launch {
        upgrade: cli.upgrade,
        hangup,
    };
    match floodgate::app::build(&config, &launch) {
        Ok(app) => {
            // Written now that the listeners are this process's (an upgrade has taken them
            // over); removed as the process ends cleanly.
            let pid_file = match floodgate::app::PidFile::write(&config.server.pid_file) {
                Ok(pid_file) => pid_file,
                Err(e) => {
                    eprintln!("{}: {e}", config.path.display());
                    return ExitCode::FAILURE;
                }
            };
            log::info!(
                "floodgate {} (commit {}) {} (admin {})",
                env!("CARGO_PKG_VERSION"),
                env!("FLOODGATE_COMMIT"),
                serving(&config),
                config.admin.listen
            );
            app.run(pid_file);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{}: {e}", config.path.display());
            ExitCode::FAILURE
        }
    }
}
