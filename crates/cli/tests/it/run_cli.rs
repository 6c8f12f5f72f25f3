//! `axon run` end to end: the real binary against a scripted model server on
//! loopback, configured through the environment as a user would.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use crate::common::setup;
use assert_cmd::cargo::cargo_bin;
use axon_testkit::Reply;
use predicates::prelude::PredicateBooleanExt;
use serde_json::{Value, json};

#[test]
fn create_then_read_back_answers_and_exits_0() {
    let s = setup(vec![
        Reply::tool("write_file", json!({"path": "hello.md", "content": "hi\n"})),
        Reply::tool("read_file", json!({"path": "hello.md"})),
        Reply::text("hello.md now says hi."),
    ]);
    let output = s
        .axon()
        .args(["run", "--yes", "create hello.md saying hi, then read it back"])
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "hello.md now says hi.\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with("✓ write_file ") && lines[0].contains("path=hello.md"),
        "{stderr}"
    );
    assert!(lines[1].starts_with("✓ read_file path=hello.md — 1 | hi"), "{stderr}");
    assert_eq!(std::fs::read_to_string(s.workspace.path().join("hello.md")).unwrap(), "hi\n");
    drop(s.runtime);
}

#[test]
fn json_mode_prints_one_event_per_line() {
    let s = setup(vec![Reply::tool("glob", json!({"pattern": "*"})), Reply::text("nothing here")]);
    let output =
        s.axon().args(["run", "--json", "list files"]).assert().success().get_output().clone();
    let events: Vec<Value> = common::events(&output.stdout);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let tokens = kinds.iter().filter(|k| **k == "token").count();
    assert!(tokens >= 2, "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| **k != "token").copied().collect::<Vec<_>>(),
        [
            "header",
            "session_started",
            "turn_started",
            "prompt",
            "session_saved",
            "usage",
            "action",
            "observation",
            "usage",
            "answer",
            "turn_completed"
        ]
    );
    assert_eq!(events[0]["schema"], 1);
    let answer = events.iter().find(|e| e["type"] == "answer").unwrap();
    assert_eq!(answer["text"], "nothing here");
    let done = events.last().unwrap();
    assert_eq!(done["stop_reason"], "end_turn");
    let usage = |e: &Value| e["usage"]["input_tokens"].as_u64().unwrap();
    let reported: u64 = events.iter().filter(|e| e["type"] == "usage").map(usage).sum();
    assert_eq!(usage(done), reported, "the turn's usage adds up its model calls");
}

#[test]
fn the_prompt_can_come_from_stdin_and_changes_need_approval() {
    let s = setup(vec![
        Reply::tool("write_file", json!({"path": "x.txt", "content": "x"})),
        Reply::text("could not write"),
    ]);
    // No --yes and no terminal to ask on: the change is refused, the run goes on.
    s.axon()
        .args(["run", "-"])
        .write_stdin("write x.txt")
        .assert()
        .success()
        .stdout("could not write\n")
        .stderr(predicates::str::contains("✗ write_file"));
    assert!(!s.workspace.path().join("x.txt").exists());
    let sent = s.server.requests()[1].to_string();
    assert!(sent.contains("needs the user's approval"), "{sent}");
    assert!(sent.contains("write x.txt"));
}

#[test]
fn exit_codes_for_failure_and_the_iteration_limit() {
    let s = setup(vec![Reply::error(401, r#"{"error":{"message":"invalid key"}}"#)]);
    s.axon()
        .args(["run", "hi"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("OPENAI_API_KEY"));
    // A key from AXON_API_KEY (which goes before OPENAI_API_KEY) is the
    // one to fix.
    let s = setup(vec![Reply::error(401, r#"{"error":{"message":"invalid key"}}"#)]);
    s.axon()
        .env("AXON_API_KEY", "sk-axon-0000000000")
        .args(["run", "hi"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("Set a valid key in AXON_API_KEY"));
    let loops: Vec<Reply> = (0..3).map(|_| Reply::tool("glob", json!({"pattern": "*"}))).collect();
    let s = setup(loops);
    s.axon()
        .args(["run", "--max-iterations", "2", "loop"])
        .assert()
        .code(3)
        .stderr(predicates::str::contains("stopped after 2 model calls"))
        // Both ways to raise the limit: the flag and the config key.
        .stderr(predicates::str::contains("--max-iterations"))
        .stderr(predicates::str::contains("`max_iterations` in the config"));
}

#[test]
fn provider_help_lists_the_local_model() {
    let output = assert_cmd::Command::new(cargo_bin("axon"))
        .args(["run", "--help"])
        .assert()
        .success()
        .get_output()
        .clone();
    let help = String::from_utf8_lossy(&output.stdout);
    let line = help.lines().find(|l| l.contains("Provider: one of")).unwrap();
    assert!(line.contains("local"), "{line}");
}

#[test]
fn without_a_provider_it_says_how_to_configure_one() {
    let home = tempfile::tempdir().unwrap();
    assert_cmd::Command::new(cargo_bin("axon"))
        .env_clear()
        .env("AXON_HOME", home.path())
        .args(["run", "hi"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("export DEEPSEEK_API_KEY="))
        .stderr(predicates::str::contains("provider = \"deepseek\""))
        // The config file that is read, not the default one AXON_HOME replaces.
        .stderr(predicates::str::contains(format!(
            "choose a provider in {}",
            home.path().join("config.toml").display()
        )))
        .stderr(predicates::str::contains("~/.config").not());
    // `config show` itself does not send the user to `config show`.
    let output = assert_cmd::Command::new(cargo_bin("axon"))
        .env_clear()
        .env("AXON_HOME", home.path())
        .args(["config", "show"])
        .assert()
        .success()
        .get_output()
        .clone();
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(shown.contains("no model provider is configured"), "{shown}");
    assert!(!shown.contains("axon config show"), "{shown}");
}

#[test]
fn config_show_masks_secrets() {
    let s = setup(vec![]);
    std::fs::create_dir_all(s.workspace.path().join(".axon")).unwrap();
    std::fs::write(
        s.workspace.path().join(".axon/config.toml"),
        "max_iterations = 7\n[providers.openai]\nmodel = \"gpt-test\"\n",
    )
    .unwrap();
    let output = s.axon().args(["config", "show"]).assert().success().get_output().clone();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("provider = \"openai\""), "{text}");
    assert!(text.contains("model = \"gpt-test\""), "{text}");
    assert!(text.contains("api_key = \"****0000\""), "{text}");
    assert!(!text.contains("sk-test"), "{text}");
    assert!(text.contains("max_iterations = 7"), "{text}");
}

#[test]
fn a_broken_config_file_is_named() {
    let s = setup(vec![]);
    std::fs::write(s.home.path().join("config.toml"), "provider = [\n").unwrap();
    s.axon().args(["run", "hi"]).assert().code(2).stderr(predicates::str::contains("config.toml"));
}

#[test]
fn ctrl_c_cancels_cleanly_with_exit_130() {
    let s = setup(vec![Reply::Stall("thinking about it".into())]);
    let mut cmd = Command::new(cargo_bin("axon"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AXON_HOME", s.home.path())
        .env("AXON_PROVIDER", "openai")
        .env("AXON_BASE_URL", s.server.openai_base())
        .env("OPENAI_API_KEY", "sk-test-0000000000")
        .current_dir(s.workspace.path())
        .args(["run", "hi"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    // Interrupt once the partial answer is on stdout (axon flushes streamed
    // text), however long a busy machine takes to get there.
    let mut stdout = child.stdout.take().unwrap();
    let (chunks, received) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n @ 1..) = stdout.read(&mut buffer) {
            if chunks.send(buffer[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut shown = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !String::from_utf8_lossy(&shown).contains("thinking about it") {
        let left = deadline.saturating_duration_since(Instant::now());
        match received.recv_timeout(left) {
            Ok(chunk) => shown.extend(chunk),
            Err(_) => {
                panic!("the partial answer never showed: {:?}", String::from_utf8_lossy(&shown))
            }
        }
    }
    let status = Command::new("kill").args(["-INT", &pid.to_string()]).status().unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    reader.join().unwrap();
    shown.extend(received.try_iter().flatten());
    assert_eq!(output.status.code(), Some(130), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&shown), "thinking about it\n");
}

#[test]
fn the_todo_checklist_is_shown_and_checked() {
    let items = json!([
        {"content": "read the code", "status": "completed"},
        {"content": "fix the bug", "status": "in_progress"},
        {"content": "run the tests", "status": "pending"}
    ]);
    let two_running = json!([
        {"content": "a", "status": "in_progress"},
        {"content": "b", "status": "in_progress"}
    ]);
    let s = setup(vec![
        Reply::tool("todo", json!({"items": items})),
        Reply::tool("todo", json!({"items": two_running})),
        Reply::text("ok"),
    ]);
    s.axon().args(["run", "fix it"]).assert().success().stderr(predicates::str::contains(
        "Checklist (1/3 done):\n[x] read the code\n[>] fix the bug\n[ ] run the tests\n",
    ));
    let sent = s.server.requests()[2].to_string();
    assert!(sent.contains("keep exactly one in progress"), "{sent}");
}

/// Issue 30: under `--yes`, a command the sandbox refuses shows why on the
/// terminal (not only `exit code: N`), and `unsandboxed: true` is refused
/// naming the setting that allows it.
#[test]
fn a_refused_command_says_why_and_yes_does_not_leave_the_sandbox() {
    let policy = axon_sandbox::Policy::new(axon_sandbox::Mode::WorkspaceWrite, "/w", "/t");
    if let Err(why) = axon_sandbox::probe().can_enforce(&policy) {
        assert!(std::env::var_os("CI").is_none(), "CI must run the sandbox tests: {why}");
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped");
    let s = setup(vec![
        Reply::tool("shell", json!({"command": format!("echo x > '{}'", target.display())})),
        Reply::tool(
            "shell",
            json!({"command": format!("echo x > '{}'", target.display()), "unsandboxed": true}),
        ),
        Reply::text("could not"),
    ]);
    let output =
        s.axon().args(["run", "--yes", "write outside"]).assert().success().get_output().clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(lines[0].starts_with("✗ shell "), "{stderr}");
    assert!(
        lines[0].contains("the sandbox may have refused it: the sandbox lets commands write only"),
        "{stderr}"
    );
    assert!(lines[1].contains("--yes allows sandboxed commands"), "{stderr}");
    assert!(!target.exists());
    drop(s.runtime);
}

#[test]
fn a_retried_stream_leaves_only_the_answer_on_stdout() {
    // The first attempt breaks off after part of the answer; the retry
    // sends it whole. stdout (a pipe here) must hold the answer once.
    let s = setup(vec![Reply::Truncated("The answer".into()), Reply::text("The answer is 42.")]);
    let output = s.axon().args(["run", "what is it?"]).assert().success().get_output().clone();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "The answer is 42.\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("warning:"), "the retry is reported: {stderr}");
}

#[test]
fn at_a_terminal_a_retried_streams_partial_text_is_erased() {
    // The retry says something else: what the broken attempt printed
    // must leave the screen, not stay above the answer.
    let s = setup(vec![
        Reply::Truncated("Let me think\nabout this one".into()),
        Reply::text("The answer is 42."),
    ]);
    let quote =
        |p: &std::path::Path| format!("'{}'", p.display().to_string().replace('\'', r"'\''"));
    let command = format!(
        "cd {} && env -i PATH=\"$PATH\" TERM=xterm-256color AXON_HOME={} AXON_PROVIDER=openai \
         AXON_BASE_URL={} OPENAI_API_KEY=sk-test-0000000000 {} run 'what is it?' \
         ; echo RUN-ENDED; sleep 120",
        quote(s.workspace.path()),
        quote(s.home.path()),
        s.server.openai_base(),
        quote(&cargo_bin("axon")),
    );
    let tmux = common::tmux::Tmux::new(format!("axon-retry-{}", std::process::id()));
    let started = tmux.run(&["new-session", "-d", "-s", "axon", "-x", "100", "-y", "20", &command]);
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    assert!(common::eventually(|| tmux.screen().contains("RUN-ENDED")), "{}", tmux.screen());
    let screen = tmux.screen();
    assert!(screen.contains("The answer is 42."), "{screen}");
    assert!(!screen.contains("Let me think"), "{screen}");
    assert!(!screen.contains("about this one"), "{screen}");
    assert!(screen.contains("axon: warning:"), "the retry is reported: {screen}");
}

/// Issue 31: the local model spent 2.7k of its 8.2k window before the first
/// prompt. What a session offers (system prompt and every tool, as sent)
/// is counted with the tokenizer for both profiles at 8k and at 128k.
#[test]
fn an_8k_window_is_sent_a_cut_system_prompt_and_tool_set() {
    let counter = axon_core::tokens::TokenCounter::for_model("local-model");
    counter.load();
    let cost = |profile: &str, window: u64| {
        let s = setup(vec![Reply::text("ok")]);
        let config = format!("[providers.openai]\ncontext_window = {window}\n");
        std::fs::write(s.home.path().join("config.toml"), config).unwrap();
        s.axon().args(["run", "--profile", profile, "hi"]).assert().success();
        let request = &s.server.requests()[0];
        let system = request["messages"][0]["content"].as_str().unwrap_or_default().to_string();
        let tools = request["tools"].as_array().cloned().unwrap_or_default();
        let names: Vec<String> =
            tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_string()).collect();
        let tokens = counter.text(&system)
            + tools.iter().map(|t| counter.text(&t["function"].to_string())).sum::<u64>();
        (tokens, names)
    };
    // (bound at 8k, largest share of the 128k cost); the workspace's path
    // in the system prompt varies by some tokens.
    for (profile, most, share) in [("code", 1_250, 65), ("vault", 850, 75)] {
        let (small, names) = cost(profile, 8192);
        let (large, all) = cost(profile, 128_000);
        println!("{profile}: {small} tokens at 8k ({names:?}), {large} at 128k ({all:?})");
        assert!(small <= most, "{profile}: {small} tokens at 8k");
        assert!(small * 100 <= large * share, "{profile}: {small} at 8k against {large}");
        assert!(
            !names.iter().any(|n| [
                "todo",
                "task",
                "multi_edit",
                "apply_patch",
                "shell_output",
                "shell_kill"
            ]
            .contains(&n.as_str())),
            "{names:?}"
        );
        assert!(all.iter().any(|n| n == "todo"), "{all:?}");
    }
}

/// A minimal container has no CA certificates: the HTTP client still comes
/// up, and a plain-http provider (a local server, this scripted model)
/// answers. (Harbor's runs in a bare Debian image found this.)
#[test]
fn without_ca_certificates_a_plain_http_provider_still_answers() {
    let s = setup(vec![Reply::text("answered without certificates")]);
    let empty = tempfile::tempdir().unwrap();
    let output = s
        .axon()
        .env("SSL_CERT_FILE", empty.path().join("none.pem"))
        .env("SSL_CERT_DIR", empty.path())
        .args(["run", "say something"])
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "answered without certificates\n");
    drop(s.runtime);
}

/// A config that prices the scripted model: every call (12 input and 7
/// output tokens) costs 12 × $1000/M + 7 × $2000/M = $0.026.
fn priced(s: &common::Setup) {
    std::fs::write(
        s.home.path().join("config.toml"),
        "model = \"priced-model\"\n[prices.\"priced-model\"]\ninput = 1000.0\ncached_input = \
         100.0\noutput = 2000.0\n",
    )
    .unwrap();
}

#[test]
fn a_priced_model_s_turn_reports_its_cost() {
    let s = setup(vec![Reply::tool("glob", json!({"pattern": "*"})), Reply::text("done")]);
    priced(&s);
    let output = s.axon().args(["run", "--json", "list"]).assert().success().get_output().clone();
    let events = common::events(&output.stdout);
    let completed = events.iter().find(|e| e["type"] == "turn_completed").unwrap();
    let cost = completed["cost_usd"].as_f64().unwrap();
    assert!((cost - 2.0 * 0.026).abs() < 1e-9, "{completed}");
    let models: Vec<&Value> =
        events.iter().filter(|e| e["type"] == "usage").map(|e| &e["model"]).collect();
    assert_eq!(models, [&json!("priced-model"), &json!("priced-model")]);
    // The text output says it after the answer.
    let s = setup(vec![Reply::text("done")]);
    priced(&s);
    s.axon()
        .args(["run", "hi"])
        .assert()
        .success()
        .stdout("done\n")
        .stderr(predicates::str::contains("axon: cost $0.0260 (12 in, 7 out tokens)"));
    // An unpriced model's turn has no cost.
    let s = setup(vec![Reply::text("done")]);
    let output = s.axon().args(["run", "--json", "hi"]).assert().success().get_output().clone();
    let events = common::events(&output.stdout);
    let completed = events.iter().find(|e| e["type"] == "turn_completed").unwrap();
    assert!(completed.get("cost_usd").is_none(), "{completed}");
}

/// `axon run --continue` goes on from what the session spent before: its
/// first event says so, the summary gives the session's total beside the
/// turn's, and the budget counts the earlier run.
#[test]
fn a_continued_session_s_cost_goes_on_from_what_it_spent() {
    let s = setup(vec![Reply::text("one"), Reply::text("two")]);
    priced(&s);
    s.axon()
        .args(["run", "first"])
        .assert()
        .success()
        .stderr(predicates::str::contains("axon: cost $0.0260 (12 in, 7 out tokens)\n"));
    let output = s
        .axon()
        .args(["run", "--json", "--continue", "second"])
        .assert()
        .success()
        .get_output()
        .clone();
    let events = common::events(&output.stdout);
    let started = events.iter().find(|e| e["type"] == "session_started").unwrap();
    assert_eq!(started["usage"]["input_tokens"], 12, "{started}");
    assert!((started["cost_usd"].as_f64().unwrap() - 0.026).abs() < 1e-9, "{started}");
    let completed = events.iter().find(|e| e["type"] == "turn_completed").unwrap();
    assert!((completed["cost_usd"].as_f64().unwrap() - 0.026).abs() < 1e-9, "{completed}");
    assert!((completed["session_cost_usd"].as_f64().unwrap() - 0.052).abs() < 1e-9, "{completed}");
    assert_eq!(completed["session_usage"]["output_tokens"], 14, "{completed}");
    // The text summary, and the budget: $0.052 spent is past $0.05.
    s.axon()
        .args(["run", "--max-budget-usd", "0.05", "--continue", "third"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("the budget of $0.0500 is spent ($0.0520 so far)"));
    assert_eq!(s.server.requests().len(), 2, "no request past the budget");
}

#[test]
fn a_continued_session_s_summary_gives_the_session_s_total() {
    let s = setup(vec![Reply::text("one"), Reply::text("two")]);
    priced(&s);
    s.axon().args(["run", "first"]).assert().success();
    s.axon().args(["run", "--continue", "second"]).assert().success().stderr(
        predicates::str::contains(
            "axon: cost $0.0260 (12 in, 7 out tokens); session $0.0520 (24 in, 14 out tokens)",
        ),
    );
}

#[test]
fn the_budget_stops_the_run_before_the_request_that_would_pass_it() {
    let loops: Vec<Reply> = (0..3).map(|_| Reply::tool("glob", json!({"pattern": "*"}))).collect();
    let s = setup(loops);
    priced(&s);
    s.axon()
        .args(["run", "--max-budget-usd", "0.01", "loop"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("the budget of $0.0100 is spent ($0.0260 so far)"))
        .stderr(predicates::str::contains("--max-budget-usd"));
    assert_eq!(s.server.requests().len(), 1, "no request after the budget was spent");
    // Without a price for the model the budget cannot be held to: said at
    // the start.
    let s = setup(vec![Reply::text("done")]);
    s.axon()
        .args(["run", "--max-budget-usd", "1", "hi"])
        .assert()
        .success()
        .stderr(predicates::str::contains("cannot be enforced"));
}

/// `axon run --image` sends the image with the prompt, scaled by the same
/// function as read_file (issue 35 §3); a file that is no image, one of
/// 200 MB and a corrupt one are usage errors before any request.
#[test]
fn run_image_sends_the_scaled_image_with_the_prompt() {
    let s = setup(vec![Reply::text("a wide gradient")]);
    let img = image::RgbImage::from_fn(2000, 100, |x, y| image::Rgb([(x % 256) as u8, y as u8, 7]));
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img).write_to(&mut png, image::ImageFormat::Png).unwrap();
    std::fs::write(s.workspace.path().join("wide.png"), png.into_inner()).unwrap();
    std::fs::write(s.workspace.path().join("notes.txt"), "not an image\n").unwrap();
    let output = s
        .axon()
        .args(["run", "--image", "wide.png", "what is this?"])
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "a wide gradient\n");
    let requests = s.server.requests();
    let user = requests[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()
        .clone();
    let url = user["content"][1]["image_url"]["url"].as_str().unwrap();
    let data = url.strip_prefix("data:image/png;base64,").expect(url);
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    let sent = image::load_from_memory(&bytes).unwrap();
    assert_eq!((sent.width(), sent.height()), (1568, 78));

    // The session file names the image by its hash; the image folder
    // beside it holds it; show and export give it back; rm takes both.
    let sessions = s.home.path().join("data/sessions");
    let file = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(!saved.contains(data), "the image is not inline");
    use sha2::Digest as _;
    let hash: String = sha2::Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    assert!(saved.contains(&format!("\"sha256\":\"{hash}\"")), "{saved}");
    let blob = file.with_extension("images").join(format!("{hash}.png"));
    assert_eq!(std::fs::read(&blob).unwrap(), bytes);
    let id = file.file_stem().unwrap().to_str().unwrap().to_string();
    let shown = s.axon().args(["sessions", "show", &id]).assert().success().get_output().clone();
    assert!(!String::from_utf8_lossy(&shown.stderr).contains("warning"), "{shown:?}");
    let exported =
        s.axon().args(["sessions", "export", &id, "--format", "json"]).assert().success();
    assert!(String::from_utf8_lossy(&exported.get_output().stdout).contains(data));
    s.axon().args(["sessions", "rm", &id]).assert().success();
    assert!(!file.exists() && !file.with_extension("images").exists());

    s.axon()
        .args(["run", "--image", "notes.txt", "what is this?"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a PNG, JPEG, GIF or WebP"));
    // 200 MB (sparse: nothing is written) is refused by its size before it
    // is read; a PNG cut short is refused by its decoder.
    let huge = std::fs::File::create(s.workspace.path().join("huge.png")).unwrap();
    huge.set_len(200 << 20).unwrap();
    s.axon()
        .args(["run", "--image", "huge.png", "what is this?"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("over the 20 MB limit"));
    std::fs::write(s.workspace.path().join("cut.png"), &bytes[..bytes.len() / 2]).unwrap();
    s.axon()
        .args(["run", "--image", "cut.png", "what is this?"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("the PNG data is corrupt or truncated"));
    assert_eq!(s.server.requests().len(), 1);
    drop(s.runtime);
}
