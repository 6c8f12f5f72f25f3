//! Benchmark driver for bench/sessions.sh.
//!
//! `sessions-bench generate DIR N`: writes a session of N messages (turns of
//! a request, a tool call, its result and an answer) under DIR/data, prints
//! its id.
//! `sessions-bench resume DIR ID`: loads that session and builds the
//! history an agent resumes with (token counts included); prints
//! `load_ms resume_ms messages`.
//! `sessions-bench trim TOKENS`: builds a history of about TOKENS tokens,
//! prints `count_ms trim_ms kept_messages` for trimming it to a 128k window.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::Path;
use std::time::Instant;

use axon_core::context::{budget, trim_to_budget};
use axon_core::tokens::TokenCounter;
use axon_protocol::{Message, ToolCall, ToolOutput};
use axon_store::{Record, Redactor, SessionStore, load};
use serde_json::json;

fn turn(n: usize) -> [Message; 4] {
    let mut call = Message::assistant(format!("Reading file {n} to check the handler."));
    call.tool_calls.push(ToolCall {
        id: format!("call_{n}"),
        name: "read_file".into(),
        arguments: json!({"path": format!("src/module_{n}.rs")}),
    });
    let body: String = (1..=12)
        .map(|line| {
            format!("{line} | fn handler_{n}_{line}(request: &Request) -> Response {{ todo }}\n")
        })
        .collect();
    [
        Message::user(format!("Step {n}: look at module {n} and tell me what the handler does.")),
        call,
        Message::tool_result(format!("call_{n}"), ToolOutput::text(body)),
        Message::assistant(format!("Module {n}'s handlers map each request to a response.")),
    ]
}

fn fail(message: String) -> ! {
    eprintln!("sessions-bench: {message}");
    std::process::exit(1)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["generate", dir, n] => {
            let n: usize = n.parse().unwrap_or_else(|e| fail(format!("bad count: {e}")));
            let store = SessionStore::new(&Path::new(dir).join("data"));
            let counter = TokenCounter::for_model("gpt-4o");
            let mut writer = store
                .create(
                    "benchmark session",
                    Path::new(dir),
                    "openai",
                    "gpt-4o",
                    Redactor::default(),
                )
                .unwrap_or_else(|e| fail(e.to_string()));
            for i in 0..n.div_ceil(4) {
                for message in turn(i) {
                    // As the agent's journal writes them: with their token counts.
                    let tokens = Some(counter.message(&message));
                    let record = Record::Message { message, tokens };
                    writer.append(&record).unwrap_or_else(|e| fail(e.to_string()));
                }
            }
            println!("{}", writer.id());
        }
        ["resume", dir, id] => {
            let store = SessionStore::new(&Path::new(dir).join("data"));
            let started = Instant::now();
            let path = store.find(id).unwrap_or_else(|e| fail(e.to_string()));
            let session = load(&path).unwrap_or_else(|e| fail(e.to_string()));
            let loaded = started.elapsed();
            // What `axon run --resume` does before its first model call:
            // the history with recorded counts, only missing ones counted.
            let (history, known) = session.history_with_tokens();
            let counter = TokenCounter::for_model("gpt-4o");
            let tokens: u64 = history
                .iter()
                .zip(&known)
                .map(|(m, k)| k.unwrap_or_else(|| counter.message(m)))
                .sum();
            let resumed = started.elapsed();
            let init = Instant::now();
            let counter = TokenCounter::for_model("deepseek-chat");
            counter.load();
            let _ = counter.text("warm");
            eprintln!(
                "{} messages, {tokens} tokens; a cold cl100k tokenizer took {:.1} ms",
                history.len(),
                init.elapsed().as_secs_f64() * 1000.0
            );
            println!(
                "{:.2} {:.2} {}",
                loaded.as_secs_f64() * 1000.0,
                resumed.as_secs_f64() * 1000.0,
                history.len()
            );
        }
        ["trim", tokens] => {
            let target: u64 = tokens.parse().unwrap_or_else(|e| fail(format!("bad count: {e}")));
            let counter = TokenCounter::for_model("gpt-4o");
            let mut history = Vec::new();
            let mut costs = Vec::new();
            let started = Instant::now();
            let mut total = 0;
            let mut i = 0;
            while total < target {
                for message in turn(i) {
                    let cost = counter.message(&message);
                    total += cost;
                    costs.push(cost);
                    history.push(message);
                }
                i += 1;
            }
            let counted = started.elapsed();
            let keep = history.len() - 4;
            let started = Instant::now();
            trim_to_budget(&mut history, &mut costs, 2_000, budget(128_000), keep);
            let trimmed = started.elapsed();
            eprintln!("{total} tokens in {} messages before trimming", i * 4);
            println!(
                "{:.2} {:.3} {}",
                counted.as_secs_f64() * 1000.0,
                trimmed.as_secs_f64() * 1000.0,
                history.len()
            );
        }
        _ => fail("usage: sessions-bench (generate DIR N | resume DIR ID | trim TOKENS)".into()),
    }
}
