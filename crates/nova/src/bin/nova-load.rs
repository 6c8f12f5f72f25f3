//! `nova-load`: the load generator of bench/nova.sh. AGENTS concurrent
//! agents (one HTTP client each) create STEPS steps under their own
//! execution and update each step twice, spreading requests over one or
//! more `nova-sync api` URLs (agent i starts on URL i mod n and moves to the
//! next URL when one stops answering). Every acknowledged write (a 2xx
//! answer) is remembered; at the end each agent's steps are read back from
//! a live URL and every acknowledged write not found is counted as lost.
//! Prints one JSON object: requests, seconds, requests/s, p50/p99 (ms),
//! failed attempts, retries, duplicate steps (a create retried after an
//! instance died mid-request) and lost writes.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{Value, json};

#[derive(Debug, Parser)]
#[command(name = "nova-load", about = "Load generator for nova-sync api (bench/nova.sh)")]
struct Args {
    /// API base URLs (http://127.0.0.1:8080), comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    url: Vec<String>,
    #[arg(long, default_value_t = 50)]
    agents: usize,
    #[arg(long, default_value_t = 100)]
    steps: usize,
    /// Distinguishes this run's executions from earlier ones in the same database.
    #[arg(long, default_value = "run")]
    run: String,
}

/// What an agent was told was stored.
#[derive(Default)]
struct Acked {
    /// step id -> (status, message) after its last acknowledged write.
    steps: HashMap<String, (String, String)>,
    /// Names of steps acknowledged created, to spot duplicates.
    names: Vec<String>,
}

struct AgentResult {
    execution: String,
    acked: Acked,
    latencies: Vec<Duration>,
    failures: usize,
    retries: usize,
    error: Option<String>,
}

/// Sends one write, moving on to the next URL when one fails to answer;
/// `Ok` only for a 2xx answer (an acknowledged write).
async fn send(
    http: &reqwest::Client,
    urls: &[String],
    current: &mut usize,
    method: reqwest::Method,
    path: &str,
    body: &Value,
    result: &mut AgentResult,
) -> Result<Value, String> {
    let mut attempts = 0;
    loop {
        let url = format!("{}{path}", urls[*current % urls.len()]);
        let started = Instant::now();
        let answer = http.request(method.clone(), &url).json(body).send().await;
        match answer {
            Ok(response) if response.status().is_success() => {
                let value = response.json::<Value>().await.map_err(|e| e.to_string());
                result.latencies.push(started.elapsed());
                return value;
            }
            Ok(response) => {
                let status = response.status();
                let text = response.text().await.unwrap_or_default();
                return Err(format!("{method} {url}: HTTP {status}: {text}"));
            }
            Err(e) => {
                result.failures += 1;
                attempts += 1;
                if attempts > 20 {
                    return Err(format!("{method} {url}: {e}"));
                }
                result.retries += 1;
                *current += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

async fn agent(
    http: reqwest::Client,
    urls: Vec<String>,
    index: usize,
    args_steps: usize,
    run: String,
) -> AgentResult {
    let execution = format!("{run}-agent-{index}");
    let mut result = AgentResult {
        execution: execution.clone(),
        acked: Acked::default(),
        latencies: Vec::with_capacity(args_steps * 3),
        failures: 0,
        retries: 0,
        error: None,
    };
    let mut current = index;
    let base = format!("/api/executions/{execution}/steps");
    let mut ids = Vec::with_capacity(args_steps);
    for n in 0..args_steps {
        let name = format!("step {n}");
        let body = json!({"step_name": name, "message": "created"});
        match send(&http, &urls, &mut current, reqwest::Method::POST, &base, &body, &mut result)
            .await
        {
            Ok(step) => {
                let Some(id) = step["step_id"].as_str().map(str::to_string) else {
                    result.error = Some(format!("no step_id in {step}"));
                    return result;
                };
                result.acked.steps.insert(id.clone(), ("running".into(), "created".into()));
                result.acked.names.push(name);
                ids.push(id);
            }
            Err(e) => {
                result.error = Some(e);
                return result;
            }
        }
    }
    for (round, status) in [(1, "running"), (2, "completed")] {
        for id in &ids {
            let message = format!("update {round}");
            let body = json!({"status": status, "message": message});
            let path = format!("{base}/{id}");
            match send(
                &http,
                &urls,
                &mut current,
                reqwest::Method::PATCH,
                &path,
                &body,
                &mut result,
            )
            .await
            {
                Ok(_) => {
                    result.acked.steps.insert(id.clone(), (status.to_string(), message));
                }
                Err(e) => {
                    result.error = Some(e);
                    return result;
                }
            }
        }
    }
    result
}

/// Reads every agent's steps back and counts acknowledged writes not found
/// (and steps stored twice by a retried create).
async fn verify(
    http: &reqwest::Client,
    urls: &[String],
    results: &[AgentResult],
) -> Result<(usize, usize), String> {
    let mut lost = 0;
    let mut duplicates = 0;
    for result in results {
        let mut steps = None;
        for url in urls {
            let answer =
                http.get(format!("{url}/api/executions/{}/steps", result.execution)).send().await;
            if let Ok(response) = answer
                && response.status().is_success()
            {
                steps = Some(response.json::<Vec<Value>>().await.map_err(|e| e.to_string())?);
                break;
            }
        }
        let Some(steps) = steps else { return Err("no URL answered the read-back".into()) };
        let stored: HashMap<&str, &Value> =
            steps.iter().filter_map(|s| Some((s["step_id"].as_str()?, s))).collect();
        for (id, (status, message)) in &result.acked.steps {
            match stored.get(id.as_str()) {
                Some(step)
                    if step["status"] == status.as_str() && step["message"] == message.as_str() => {
                }
                _ => lost += 1,
            }
        }
        duplicates += steps.len().saturating_sub(result.acked.names.len());
    }
    Ok((lost, duplicates))
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = match reqwest::Client::builder().timeout(Duration::from_secs(30)).build() {
        Ok(http) => http,
        Err(e) => {
            eprintln!("nova-load: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let urls: Vec<String> = args.url.iter().map(|u| u.trim_end_matches('/').to_string()).collect();
    let started = Instant::now();
    let tasks: Vec<_> = (0..args.agents)
        .map(|i| tokio::spawn(agent(http.clone(), urls.clone(), i, args.steps, args.run.clone())))
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        match task.await {
            Ok(result) => results.push(result),
            Err(e) => {
                eprintln!("nova-load: an agent panicked: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let mut latencies: Vec<Duration> =
        results.iter().flat_map(|r| r.latencies.iter().copied()).collect();
    latencies.sort();
    let percentile = |p: f64| {
        let index = ((latencies.len() as f64 * p).ceil() as usize).saturating_sub(1);
        latencies.get(index).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    let errors: Vec<&String> = results.iter().filter_map(|r| r.error.as_ref()).collect();
    let (lost, duplicates) = match verify(&http, &urls, &results).await {
        Ok(counts) => counts,
        Err(e) => {
            eprintln!("nova-load: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let acked_writes: usize = latencies.len();
    let report = json!({
        "agents": args.agents,
        "steps_per_agent": args.steps,
        "acknowledged_writes": acked_writes,
        "seconds": (seconds * 1000.0).round() / 1000.0,
        "requests_per_second": (acked_writes as f64 / seconds).round(),
        "p50_ms": (percentile(0.50) * 100.0).round() / 100.0,
        "p99_ms": (percentile(0.99) * 100.0).round() / 100.0,
        "failed_attempts": results.iter().map(|r| r.failures).sum::<usize>(),
        "retries": results.iter().map(|r| r.retries).sum::<usize>(),
        "duplicate_steps": duplicates,
        "lost_writes": lost,
        "agent_errors": errors.len(),
        "first_error": errors.first(),
    });
    println!("{report}");
    if lost > 0 || !errors.is_empty() {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}
