//! `bench/web_fetch.sh`'s axon side: fetches each page of a loopback
//! server through the `web_fetch` tool (the registry's one door, the
//! guarded client, readability, Markdown), `rounds` times, the cache off,
//! and prints pages per second; each page's Markdown goes to `out/NAME.md`
//! for the script to score.
//!
//! Usage: web_fetch_bench BASE_URL OUT_DIR ROUNDS PAGE...

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::{Duration, Instant};

use axon_tools::{ToolContext, ToolRegistry, Workspace};
use axon_webtools::{AddressPolicy, WebFetchConfig};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [base, out, rounds, pages @ ..] = args.as_slice() else {
        eprintln!("usage: web_fetch_bench BASE_URL OUT_DIR ROUNDS PAGE...");
        std::process::exit(2);
    };
    let rounds: usize = rounds.parse().unwrap_or(5).max(1);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("no runtime: {e}");
            std::process::exit(1);
        }
    };
    let mut registry = ToolRegistry::new();
    let config = WebFetchConfig {
        policy: AddressPolicy { allow_private: false, private_hosts: vec!["127.0.0.1".into()] },
        // The extraction is measured, not the result budget.
        max_output_bytes: 64 * 1024 * 1024,
        cache_ttl: Duration::ZERO,
        ..WebFetchConfig::default()
    };
    axon_webtools::register(&mut registry, config, None);
    let dir = std::env::temp_dir();
    let ctx = match Workspace::new(&dir) {
        Ok(workspace) => ToolContext::new(workspace),
        Err(e) => {
            eprintln!("no workspace: {e}");
            std::process::exit(1);
        }
    };
    let mut failed = false;
    runtime.block_on(async {
        let started = Instant::now();
        let mut fetched = 0usize;
        for round in 0..rounds {
            for page in pages {
                let url = format!("{}/{page}", base.trim_end_matches('/'));
                let output =
                    registry.call(&ctx, "web_fetch", serde_json::json!({ "url": url })).await;
                let text = output.text_content();
                if output.is_error {
                    eprintln!("{page}: {text}");
                    failed = true;
                    continue;
                }
                fetched += 1;
                if round == 0 {
                    let name = page.trim_end_matches(".html");
                    if let Err(e) = std::fs::write(format!("{out}/{name}.md"), &text) {
                        eprintln!("{out}/{name}.md: {e}");
                        failed = true;
                    }
                }
            }
        }
        let seconds = started.elapsed().as_secs_f64();
        println!("{fetched} {seconds:.3}");
    });
    if failed {
        std::process::exit(1);
    }
}
