//! Measures the local provider on one GGUF: time to first token, prompt
//! and generation speed, peak memory. `bench/local.sh` runs it next to
//! llama.cpp's own server on the same file, prompt and thread count.
//!
//! Usage: bench MODEL.gguf THREADS TOKENS PROMPT_FILE
//! Prints one JSON object.

#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::time::Instant;

use axon_llm::{Provider, ProviderEvent, ProviderRequest};
use axon_local::{LocalConfig, LocalProvider};
use axon_protocol::Message;
use futures_util::StreamExt;

fn user(text: &str) -> Message {
    Message::user(text)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, model, threads, tokens, prompt_file] = args.as_slice() else {
        return Err("usage: bench MODEL.gguf THREADS TOKENS PROMPT_FILE".into());
    };
    let prompt = std::fs::read_to_string(prompt_file)?;
    let tokens: u32 = tokens.parse()?;
    let started = Instant::now();
    let provider = LocalProvider::load(&LocalConfig {
        model_path: PathBuf::from(model),
        model_name: "bench".into(),
        threads: Some(threads.parse()?),
        context_window: Some(4096),
        gpu_layers: 0,
        seed: 1,
        temperature: None,
        max_tokens: Some(tokens),
    })?;
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;

    // Warm-up on another prompt, so that neither side pays first-touch
    // costs in the measured run and the cache holds nothing of it.
    let warm = [user("Warm up: say one word.")];
    let request = ProviderRequest {
        messages: &warm,
        temperature: Some(0.0),
        max_output_tokens: Some(4),
        ..Default::default()
    };
    let mut stream = provider.stream(&request);
    while stream.next().await.is_some() {}

    let history = [user(&prompt)];
    let request = ProviderRequest {
        messages: &history,
        temperature: Some(0.0),
        max_output_tokens: Some(tokens),
        ..Default::default()
    };
    let rendered = provider.prompt_for(&request)?;
    let sent = Instant::now();
    let mut first = None;
    let mut last = sent;
    let mut usage = None;
    let mut stream = provider.stream(&request);
    while let Some(event) = stream.next().await {
        match event? {
            ProviderEvent::TextDelta(_) => {
                let now = Instant::now();
                first.get_or_insert(now);
                last = now;
            }
            ProviderEvent::Usage(u) => usage = Some(u),
            _ => {}
        }
    }
    let usage = usage.ok_or("no usage reported")?;
    let first = first.ok_or("no text generated")?;
    let ttft = first.duration_since(sent).as_secs_f64();
    let generating = last.duration_since(first).as_secs_f64();
    let new_prompt = usage.input_tokens - usage.cached_input_tokens;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    let report = serde_json::json!({
        "load_ms": load_ms,
        "prompt_tokens": usage.input_tokens,
        "prompt_tokens_evaluated": new_prompt,
        "generated_tokens": usage.output_tokens,
        "ttft_ms": ttft * 1000.0,
        "prompt_tps": new_prompt as f64 / ttft,
        "gen_tps": if generating > 0.0 { (usage.output_tokens.saturating_sub(1)) as f64 / generating } else { 0.0 },
        "peak_rss_mib": peak_kib as f64 / 1024.0,
        "cpu_variant": axon_local::cpu::summary(),
        "prompt": rendered,
    });
    println!("{report}");
    Ok(())
}
