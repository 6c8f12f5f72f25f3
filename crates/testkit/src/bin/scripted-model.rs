//! A zero-latency scripted model server for benchmarks, in either wire
//! format. By default `--turns N` tool calls (`read_file` of `--file`), then
//! one answer; with `--answers N`, N short text answers and no tool call (a
//! chat that goes on for N prompts); with `--clocked N`, N answers of
//! `--pieces P` time-stamped pieces `--gap-ms G` apart (token-to-screen
//! latency). Prints `listening on URL` when ready;
//! serves until killed. `GET /stats` returns the client's time between turns.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use axon_testkit::{Reply, ScriptedServer};
use serde_json::json;

#[tokio::main(flavor = "multi_thread", worker_threads = 1)]
async fn main() {
    let mut turns = 200usize;
    let mut answers = None;
    let mut file = "bench.txt".to_string();
    let mut clocked = None;
    let mut pieces = 100usize;
    let mut gap_ms = 20u64;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--turns", Some(n)) => turns = n.parse().unwrap_or(turns),
            ("--answers", Some(n)) => match n.parse::<usize>() {
                Ok(n) => answers = Some(n),
                Err(_) => usage(),
            },
            ("--file", Some(f)) => file = f,
            ("--clocked", Some(n)) => clocked = n.parse::<usize>().ok().or_else(|| usage()),
            ("--pieces", Some(n)) => pieces = n.parse().unwrap_or_else(|_| usage()),
            ("--gap-ms", Some(n)) => gap_ms = n.parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    let gap = std::time::Duration::from_millis(gap_ms);
    let script: Vec<Reply> = match (clocked, answers) {
        (Some(n), _) => (0..n).map(|_| Reply::Clocked { pieces, gap }).collect(),
        (None, answers) => match answers {
            // Each answer is one short streamed message, so a front end sees a
            // few message chunks per prompt and nothing else.
            Some(n) => (0..n).map(|i| Reply::Text(format!("answer {i}: done"))).collect(),
            None => {
                let mut script: Vec<Reply> =
                    (0..turns).map(|_| Reply::tool("read_file", json!({"path": file}))).collect();
                script.push(Reply::text("done"));
                script
            }
        },
    };
    let server = match ScriptedServer::start(script).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("scripted-model: cannot listen: {e}");
            std::process::exit(1);
        }
    };
    println!("listening on {}", server.url);
    let _ = tokio::signal::ctrl_c().await;
}

fn usage() -> ! {
    eprintln!(
        "usage: scripted-model [--turns N] [--file PATH] | [--answers N] | [--clocked N [--pieces P] [--gap-ms G]]"
    );
    std::process::exit(2);
}
