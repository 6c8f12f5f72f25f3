//! `axon` against model servers that behave like llama.cpp's llama-server
//! and other local backends: the text protocol's unreadable blocks are
//! warnings on stderr and `--json` events, a failed request asked again with
//! `--continue` is not sent twice, and the chat's status line shows the
//! window the server reports.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::setup;
use assert_cmd::cargo::cargo_bin;
use axon_testkit::{ModelInfo, Reply};
use serde_json::Value;

fn text_protocol(home: &Path) {
    std::fs::write(home.join("config.toml"), "[providers.openai]\ntool_protocol = \"text\"\n")
        .unwrap();
}

#[test]
fn an_unreadable_tool_block_is_a_warning_and_not_part_of_the_answer() {
    let script =
        || vec![Reply::text("Checking.\n```json:tool\n{not json}\n```"), Reply::text("Done.")];
    let s = setup(script());
    text_protocol(s.home.path());
    let output = s.axon().args(["run", "look"]).assert().success().get_output().clone();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Checking.\nDone.\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("axon: warning: the model's tool block 1 could not be read (Invalid JSON"),
        "{stderr}"
    );

    let s = setup(script());
    text_protocol(s.home.path());
    let output = s.axon().args(["run", "--json", "look"]).assert().success().get_output().clone();
    let events: Vec<Value> = common::events(&output.stdout);
    let warning = events.iter().find(|e| e["type"] == "warning").expect("a warning event");
    assert!(warning["message"].as_str().unwrap().contains("could not be read"), "{warning}");
    let shown: String = events
        .iter()
        .filter(|e| e["type"] == "token")
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert!(!shown.contains("json:tool"), "{shown:?}");
}

fn session_files(home: &Path) -> String {
    std::fs::read_dir(home.join("data/sessions"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect()
}

#[test]
fn continuing_a_failed_request_with_the_same_question_sends_it_once() {
    let s = setup(vec![
        Reply::error(400, r#"{"error":{"message":"model is still loading"}}"#),
        Reply::text("4"),
    ]);
    s.axon()
        .args(["run", "what is 2+2?"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("model is still loading"));
    let saved = session_files(s.home.path());
    assert!(saved.contains(r#""type":"turn_failed""#), "{saved}");
    assert!(saved.contains("model is still loading"), "{saved}");

    s.axon().args(["run", "--continue", "what is 2+2?"]).assert().success().stdout("4\n");
    let sent = &s.server.requests()[1]["messages"];
    let asked = sent
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user" && m["content"] == "what is 2+2?")
        .count();
    assert_eq!(asked, 1, "{sent}");
    let saved = session_files(s.home.path());
    assert_eq!(
        saved.matches(r#""content":[{"type":"text","text":"what is 2+2?"}]"#).count(),
        1,
        "{saved}"
    );
}

/// A tmux server of the test's own, killed on drop.
struct Tmux(String);

impl Tmux {
    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.0])
            .args(args)
            .output()
            .expect("tmux is needed for this test (scripts/peers installs it with apt-get)")
    }

    fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen =
                String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "axon"]).stdout)
                    .into_owned();
            if screen.contains(text) {
                return screen;
            }
            assert!(Instant::now() < deadline, "the screen never showed {text:?}:\n{screen}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

#[test]
fn the_status_line_shows_the_window_the_server_reports() {
    let s = setup(vec![]);
    s.server.set_model_info(ModelInfo::LlamaCpp { n_ctx: 6000, in_models: false });
    let quote = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', r"'\''"));
    let command = format!(
        "cd {} && env -i PATH=\"$PATH\" TERM=xterm-256color AXON_HOME={} AXON_PROVIDER=openai \
         AXON_MODEL=local.gguf AXON_BASE_URL={} OPENAI_API_KEY=sk-test-0000000000 {}",
        quote(s.workspace.path()),
        quote(s.home.path()),
        s.server.openai_base(),
        quote(&cargo_bin("axon")),
    );
    let tmux = Tmux(format!("axon-window-{}", std::process::id()));
    let started = tmux.run(&["new-session", "-d", "-s", "axon", "-x", "120", "-y", "30", &command]);
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    let screen = tmux.wait_for("/6.0k tokens");
    assert!(screen.contains("openai/local.gguf"), "{screen}");
    assert_eq!(s.server.probes(), ["GET /v1/models", "GET /props"]);
}
