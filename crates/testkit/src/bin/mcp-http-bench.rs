//! Load for `axon mcp serve --http` (used by bench/mcp_server.sh), spoken in
//! raw JSON-RPC over reqwest so the client costs little:
//!
//! - `mcp-http-bench keepalive N URL`: N sequential `read_file` calls on one
//!   kept-alive connection; prints `median_ms p99_ms`.
//! - `mcp-http-bench concurrent N URL`: N `read_file` calls at once in one
//!   session; prints the seconds until all are answered.
//! - `mcp-http-bench flood N URL`: N sessions initialized one after another
//!   and never closed, then N calls in one session; prints the sessions
//!   the server answered and the calls that succeeded.
//!
//! Every call must succeed; the first failure ends the run with status 1.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Bench {
    client: reqwest::Client,
    url: String,
}

fn fail(message: String) -> ! {
    eprintln!("mcp-http-bench: {message}");
    std::process::exit(1);
}

impl Bench {
    fn new(url: String, connections: usize) -> Bench {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .tcp_nodelay(true)
            .pool_max_idle_per_host(connections)
            .timeout(Duration::from_secs(600))
            .build()
            .unwrap_or_else(|e| fail(format!("no HTTP client: {e}")));
        Bench { client, url }
    }

    /// Posts `body`; the session id the server gave, and the last JSON-RPC
    /// message of the answer.
    async fn post(&self, session: Option<&str>, body: &Value) -> (Option<String>, Value) {
        let mut request = self
            .client
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", "2025-06-18")
            .body(body.to_string());
        if let Some(id) = session {
            request = request.header("Mcp-Session-Id", id);
        }
        let response =
            request.send().await.unwrap_or_else(|e| fail(format!("request failed: {e}")));
        let status = response.status();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let text = response.text().await.unwrap_or_else(|e| fail(format!("body failed: {e}")));
        if !status.is_success() {
            fail(format!("{status}: {text}"));
        }
        let message = serde_json::from_str(&text).unwrap_or_else(|_| {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .next_back()
                .unwrap_or(Value::Null)
        });
        (session, message)
    }

    async fn initialize(&self) -> String {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "mcp-http-bench", "version": "1"}}});
        let (session, _) = self.post(None, &body).await;
        let session = session.unwrap_or_else(|| fail("no session id".into()));
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.post(Some(&session), &done).await;
        session
    }

    async fn call(&self, session: &str, id: u64) {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "read_file", "arguments": {"path": "small.txt"}}});
        let (_, reply) = self.post(Some(session), &body).await;
        if reply["result"]["isError"] != false {
            fail(format!("call {id} failed: {reply}"));
        }
    }
}

fn percentile(sorted: &[Duration], per_cent: usize) -> f64 {
    let at = (sorted.len() * per_cent / 100).min(sorted.len().saturating_sub(1));
    sorted.get(at).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, count, url) = match args.as_slice() {
        [mode, count, url] => match count.parse::<u64>() {
            Ok(count) if count > 0 => (mode.clone(), count, url.clone()),
            _ => fail("N must be a positive number".into()),
        },
        _ => fail("usage: mcp-http-bench (keepalive | concurrent | flood) N URL".into()),
    };
    match mode.as_str() {
        "keepalive" => {
            let bench = Bench::new(url, 1);
            let session = bench.initialize().await;
            let mut latencies = Vec::new();
            for id in 1..=count {
                let started = Instant::now();
                bench.call(&session, id).await;
                latencies.push(started.elapsed());
            }
            latencies.sort();
            println!("{:.3} {:.3}", percentile(&latencies, 50), percentile(&latencies, 99));
        }
        "concurrent" => {
            let bench = Arc::new(Bench::new(url, usize::try_from(count).unwrap_or(usize::MAX)));
            let session: Arc<str> = Arc::from(bench.initialize().await);
            let started = Instant::now();
            let calls: Vec<_> = (1..=count)
                .map(|id| {
                    let bench = Arc::clone(&bench);
                    let session = Arc::clone(&session);
                    tokio::spawn(async move { bench.call(&session, id).await })
                })
                .collect();
            for call in calls {
                if let Err(e) = call.await {
                    fail(format!("a call's task failed: {e}"));
                }
            }
            println!("{:.3}", started.elapsed().as_secs_f64());
        }
        "flood" => {
            let bench = Bench::new(url, 4);
            for _ in 0..count {
                bench.initialize().await;
            }
            let session = bench.initialize().await;
            for id in 1..=count {
                bench.call(&session, id).await;
            }
            println!("{count} {count}");
        }
        other => fail(format!("unknown mode {other}")),
    }
}
