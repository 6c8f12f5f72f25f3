//! `axon doctor`: the runtime's checks (`axon_runtime::doctor`) printed one
//! per line with the fix under each; exit 1 when the main job cannot run.

use std::path::PathBuf;
use std::time::Duration;

use axon_runtime::config::Overrides;
use axon_runtime::doctor::{self, Status};

use crate::{exit, say};

#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// The workspace to check.
    #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Check this provider instead of the configured one.
    #[arg(long)]
    provider: Option<String>,
    /// Check this model instead of the configured one.
    #[arg(long)]
    model: Option<String>,
    /// Seconds to wait for MCP servers to start.
    #[arg(long, value_name = "SECONDS", default_value_t = 20)]
    mcp_wait: u64,
}

pub async fn run(args: DoctorArgs) -> u8 {
    let overrides = Overrides { provider: args.provider, model: args.model };
    let root = std::fs::canonicalize(&args.dir).unwrap_or_else(|_| args.dir.clone());
    say(&format!("axon {} in {}", env!("CARGO_PKG_VERSION"), root.display()));
    let findings =
        doctor::diagnose(&root, &overrides, Duration::from_secs(args.mcp_wait.max(1))).await;
    let width = findings.iter().map(|f| f.area.len()).max().unwrap_or(0);
    for finding in &findings {
        let mark = match finding.status {
            Status::Ok => "✓",
            Status::Note => "·",
            Status::Warning => "!",
            Status::Problem => "✗",
        };
        say(&format!("{mark} {:width$}  {}", finding.area, finding.text.replace('\n', " ")));
        if let Some(fix) = &finding.fix {
            say(&format!("  {:width$}  fix: {fix}", ""));
        }
    }
    if doctor::has_problem(&findings) {
        say("✗ axon cannot do a task here until the lines marked ✗ are fixed");
        exit::FAILED
    } else {
        say("✓ ready");
        exit::OK
    }
}
