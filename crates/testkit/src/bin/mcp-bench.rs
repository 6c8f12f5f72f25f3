//! Benchmark driver for axon's MCP client (used by bench/mcp_client.sh).
//!
//! `mcp-bench calls N -- COMMAND ARGS…`: starts one stdio server, makes N
//! sequential `echo` calls (or calls of `$MCP_BENCH_TOOL` with the JSON
//! arguments in `$MCP_BENCH_ARGS`), prints `calls_per_second P99_MS`.
//! `mcp-bench startup K -- COMMAND ARGS…`: starts K copies at once, prints
//! the seconds until all are ready.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use axon_mcp::config::{ServerConfig, Transport};
use axon_mcp::{McpManager, ServerState};
use serde_json::json;

fn config(name: String, command: &[String]) -> ServerConfig {
    ServerConfig {
        name,
        transport: Transport::Stdio {
            command: command[0].clone(),
            args: command[1..].to_vec(),
            env: BTreeMap::new(),
            cwd: None,
        },
        enabled: true,
        startup_timeout: Duration::from_secs(60),
        tool_timeout: None,
        enabled_tools: None,
        disabled_tools: Vec::new(),
        source: "bench".into(),
        sandbox: Default::default(),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args.iter().position(|a| a == "--");
    let (mode, count, command) =
        match (args.first(), args.get(1).and_then(|n| n.parse::<usize>().ok()), split) {
            (Some(mode), Some(count), Some(at)) if at + 1 < args.len() => {
                (mode.clone(), count, args[at + 1..].to_vec())
            }
            _ => {
                eprintln!("usage: mcp-bench (calls N | startup K) -- COMMAND ARGS…");
                std::process::exit(2);
            }
        };
    let dir = std::env::current_dir().unwrap_or_else(|_| ".".into());
    match mode.as_str() {
        "calls" => {
            let manager = McpManager::start(vec![config("bench".into(), &command)], &dir).await;
            if manager.statuses().iter().any(|s| s.state != ServerState::Ready) {
                eprintln!("mcp-bench: the server did not start: {:?}", manager.statuses());
                std::process::exit(1);
            }
            let tool = std::env::var("MCP_BENCH_TOOL").ok();
            let fixed_args = std::env::var("MCP_BENCH_ARGS").ok().map(|text| {
                serde_json::from_str::<serde_json::Value>(&text).unwrap_or_else(|e| {
                    eprintln!("mcp-bench: MCP_BENCH_ARGS is not JSON: {e}");
                    std::process::exit(2);
                })
            });
            let mut latencies = Vec::with_capacity(count);
            let started = Instant::now();
            for i in 0..count {
                let one = Instant::now();
                let (name, arguments) = match (&tool, &fixed_args) {
                    (Some(tool), Some(args)) => (tool.as_str(), args.clone()),
                    (Some(tool), None) => (tool.as_str(), json!({})),
                    (None, _) => ("echo", json!({"message": format!("m{i}")})),
                };
                let output = manager.call("bench", name, arguments).await;
                if output.is_error {
                    eprintln!("mcp-bench: call failed: {}", output.text_content());
                    std::process::exit(1);
                }
                latencies.push(one.elapsed());
            }
            let total = started.elapsed();
            latencies.sort();
            let p99 = latencies[(latencies.len() * 99 / 100).min(latencies.len() - 1)];
            println!("{:.0} {:.3}", count as f64 / total.as_secs_f64(), p99.as_secs_f64() * 1000.0);
            manager.shutdown().await;
        }
        "startup" => {
            let configs = (0..count).map(|i| config(format!("s{i}"), &command)).collect();
            let started = Instant::now();
            let manager = McpManager::start(configs, &dir).await;
            let elapsed = started.elapsed();
            if manager.statuses().iter().any(|s| s.state != ServerState::Ready) {
                eprintln!("mcp-bench: not every server started: {:?}", manager.statuses());
                std::process::exit(1);
            }
            println!("{:.3}", elapsed.as_secs_f64());
            manager.shutdown().await;
        }
        other => {
            eprintln!("mcp-bench: unknown mode {other}");
            std::process::exit(2);
        }
    }
}
