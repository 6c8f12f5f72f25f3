//! `axon doctor` as a newcomer runs it: what is missing for the main job is
//! marked and fails the command with the fix on the line; keys are masked;
//! a workspace's untrusted MCP server is reported, never started; a broken
//! user server is a warning with its error.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use crate::telemetry_cli::collector;
use assert_cmd::cargo::cargo_bin;

fn doctor(home: &Path, workspace: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = assert_cmd::Command::new(cargo_bin("axon"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AXON_HOME", home)
        .current_dir(workspace)
        .args(["doctor", "--mcp-wait", "60"])
        .timeout(Duration::from_secs(180));
    for (name, value) in env {
        cmd.env(name, value);
    }
    let output = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    (output.status.code().unwrap_or(-1), stdout)
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_the_level() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has!("sse4.2") && has!("avx") && has!("avx2") && has!("fma") && has!("f16c") && has!("bmi2")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_the_level() -> bool {
    true
}

#[test]
fn no_key_and_no_model_fail_with_the_fix_on_the_line() {
    let (home, workspace) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (code, out) = doctor(home.path(), workspace.path(), &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.lines().any(|l| l.starts_with("✗ provider")), "{out}");
    assert!(out.contains("axon models pull"), "{out}");
    let level = if cfg!(target_arch = "x86_64") { "x86-64-v3" } else { "armv8-a" };
    // The level is the build's; whether this CPU has it is this machine's,
    // and a CPU without it is a warning here (no local provider is chosen).
    let mark = if cpu_has_the_level() { "✓ cpu" } else { "! cpu" };
    assert!(out.lines().any(|l| l.starts_with(mark) && l.contains(level)), "{out}");
    assert!(out.lines().any(|l| l.contains("folders") && l.contains("data folder")), "{out}");
    assert!(out.trim_end().ends_with("are fixed"), "{out}");
}

#[test]
fn a_key_makes_it_ready_and_is_never_printed_whole() {
    let (home, workspace) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let key = "sk-doctor0123456789abcdefSECRETTAIL";
    let (code, out) = doctor(home.path(), workspace.path(), &[("DEEPSEEK_API_KEY", key)]);
    assert_eq!(code, 0, "{out}");
    assert!(out.lines().any(|l| l.starts_with("✓ provider") && l.contains("deepseek")), "{out}");
    assert!(!out.contains("SECRETTAIL"), "the key was printed: {out}");
    assert!(out.lines().any(|l| l.starts_with("· models")), "{out}");
    // No search API: a note saying how to add one, and still ready.
    assert!(
        out.lines().any(|l| l.starts_with("· web") && l.contains("web_search is not offered")),
        "{out}"
    );
    assert!(out.contains("BRAVE_API_KEY"), "{out}");
    assert!(out.trim_end().ends_with("✓ ready"), "{out}");
}

#[test]
fn a_search_key_is_named_and_masked() {
    let (home, workspace) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let env =
        [("DEEPSEEK_API_KEY", "sk-0123456789abcdef"), ("TAVILY_API_KEY", "tvly-doctorSEARCHTAIL9")];
    let (code, out) = doctor(home.path(), workspace.path(), &env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines().any(|l| l.starts_with("✓ web")
            && l.contains("Tavily")
            && l.contains("TAVILY_API_KEY")),
        "{out}"
    );
    assert!(!out.contains("SEARCHTAIL"), "the key was printed: {out}");
}

#[test]
fn an_untrusted_workspace_server_is_reported_not_started_and_a_broken_one_warned() {
    let (home, workspace) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let marker = workspace.path().join("started");
    std::fs::write(
        workspace.path().join(".mcp.json"),
        serde_json::json!({"mcpServers": {"planted": {
            "command": "sh", "args": ["-c", format!("touch {}", marker.display())]
        }}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[mcp_servers.gone]\ncommand = \"/nonexistent/axon-test-server\"\n",
    )
    .unwrap();
    let (code, out) =
        doctor(home.path(), workspace.path(), &[("DEEPSEEK_API_KEY", "sk-0123456789abcdef")]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("· mcp") && l.contains("planted") && l.contains("not trusted")),
        "{out}"
    );
    assert!(out.contains("axon mcp trust planted"), "{out}");
    assert!(!marker.exists(), "doctor started an untrusted workspace server");
    assert!(out.lines().any(|l| l.starts_with("! mcp") && l.contains("gone")), "{out}");
}

/// Telemetry is reported (off, or where each signal goes and whether the
/// endpoint answers); an endpoint that is down or failing is a warning
/// with the fix, never a failure of the command.
#[test]
fn telemetry_is_reported_and_an_unreachable_endpoint_is_a_warning() {
    let (home, workspace) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let key = ("DEEPSEEK_API_KEY", "sk-0123456789abcdef");
    let line = |out: &str, mark: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.starts_with(&format!("{mark} telemetry")))
            .map(String::from)
            .collect()
    };
    let (code, out) = doctor(home.path(), workspace.path(), &[key]);
    assert_eq!(code, 0, "{out}");
    assert!(
        line(&out, "✓").iter().any(|l| l.contains("OTEL_EXPORTER_OTLP_ENDPOINT is not set")),
        "{out}"
    );

    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let (url, received) = collector(&runtime, 200, "");
    let (code, out) =
        doctor(home.path(), workspace.path(), &[key, ("OTEL_EXPORTER_OTLP_ENDPOINT", &url)]);
    assert_eq!(code, 0, "{out}");
    let ok = line(&out, "✓");
    assert!(ok.iter().any(|l| l.contains(&format!("metrics go to {url}/v1/metrics"))), "{out}");
    assert!(ok.iter().any(|l| l.contains(&format!("traces go to {url}/v1/traces"))), "{out}");
    let mut paths: Vec<String> =
        received.lock().unwrap().iter().map(|(path, _, _)| path.clone()).collect();
    paths.sort();
    assert_eq!(paths, ["/v1/metrics", "/v1/traces"], "one empty export to each");

    // A collector that fails: a warning, still ready.
    let (failing, _) = collector(&runtime, 500, "");
    let (code, out) =
        doctor(home.path(), workspace.path(), &[key, ("OTEL_EXPORTER_OTLP_ENDPOINT", &failing)]);
    assert_eq!(code, 0, "{out}");
    assert!(line(&out, "!").iter().any(|l| l.contains("answered 500")), "{out}");
    assert!(out.trim_end().ends_with("✓ ready"), "{out}");

    // Nothing listens there: a warning with the fix under it, still ready.
    let closed = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let down = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let (code, out) =
        doctor(home.path(), workspace.path(), &[key, ("OTEL_EXPORTER_OTLP_ENDPOINT", &down)]);
    assert_eq!(code, 0, "{out}");
    let warned = line(&out, "!");
    assert!(
        warned
            .iter()
            .any(|l| l.contains(&format!("{down}/v1/metrics")) && l.contains("cannot be reached")),
        "{out}"
    );
    assert!(out.contains("fix: start an OTLP/HTTP collector there"), "{out}");
    assert!(out.trim_end().ends_with("✓ ready"), "{out}");
    drop(runtime);
}
