//! `floodgate --config FILE [--test]`: load the config, build the server, run it.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

/// A reverse proxy that throttles each caller with a token bucket.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// The config file (TOML).
    #[arg(long, short)]
    config: PathBuf,
    /// Validate the config, print the effective settings and exit.
    #[arg(long, short)]
    test: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("floodgate=info,pingora=warn"),
    )
    .init();
    let config = match floodgate::config::load(&cli.config) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if cli.test {
        print!("{config}");
        return ExitCode::SUCCESS;
    }
    match floodgate::server::build(&config) {
        Ok(server) => {
            log::info!(
                "floodgate listening on {} (admin {})",
                config.server.listen,
                config.admin.listen
            );
            server.run_forever()
        }
        Err(e) => {
            eprintln!("{}: {e}", config.path.display());
            ExitCode::FAILURE
        }
    }
}
