//! Benchmark driver for bench/sandbox.sh: the cost of the OS sandbox per
//! command, through the `shell` tool itself (the registry's one door).
//!
//! `sandbox-bench N`: in a scratch workspace shaped like a repository (a
//! `.git` folder and 30 top-level entries, so the per-entry rules are
//! built), calls `shell {"command": "true"}` N times with the sandbox off
//! and N times in `workspace-write` (network off), after 20 warm-up calls
//! each, alternating so machine noise falls on both. Prints one line per
//! mode: `MODE mean_ms p50_ms p99_ms`. Exits non-zero if a call fails.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::sync::Arc;
use std::time::Instant;

use axon_process::EnvPolicy;
use axon_tools::{CommandSandbox, Profile, ToolContext, ToolRegistry, Workspace};
use serde_json::json;

fn registry(sandbox: Option<Arc<CommandSandbox>>) -> ToolRegistry {
    Profile::Code.registry_with(EnvPolicy::default(), sandbox)
}

async fn call(registry: &ToolRegistry, context: &ToolContext) -> Result<f64, String> {
    let started = Instant::now();
    let output = registry.call(context, "shell", json!({"command": "true"})).await;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    if output.is_error {
        return Err(output.text_content());
    }
    Ok(ms)
}

fn summary(name: &str, mut times: Vec<f64>) {
    times.sort_by(f64::total_cmp);
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    println!("{name} {mean:.3} {:.3} {:.3}", at(0.5), at(0.99));
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(Ok(500), |n| n.parse())
        .map_err(|e| format!("sandbox-bench N: {e}"))?;
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = scratch.path();
    // A repository's git folder, as the sandbox protects it.
    std::fs::create_dir_all(root.join(".git/hooks")).map_err(|e| e.to_string())?;
    std::fs::write(root.join(".git/config"), "[core]\n").map_err(|e| e.to_string())?;
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").map_err(|e| e.to_string())?;
    for i in 0..30 {
        if i % 2 == 0 {
            std::fs::create_dir(root.join(format!("dir{i}"))).map_err(|e| e.to_string())?;
        } else {
            std::fs::write(root.join(format!("file{i}")), "x").map_err(|e| e.to_string())?;
        }
    }
    let workspace = Workspace::new(root).map_err(|e| e.to_string())?;
    let context = ToolContext::new(workspace.clone());
    let policy = axon_sandbox::Policy::new(
        axon_sandbox::Mode::WorkspaceWrite,
        workspace.root(),
        std::env::temp_dir(),
    );
    let temp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let sandboxed = registry(Some(Arc::new(CommandSandbox::new(policy, temp))));
    let plain = registry(None);
    for _ in 0..20 {
        call(&plain, &context).await?;
        call(&sandboxed, &context).await?;
    }
    let (mut off, mut on) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        off.push(call(&plain, &context).await?);
        on.push(call(&sandboxed, &context).await?);
    }
    summary("off", off);
    summary("workspace-write", on);
    Ok(())
}
