//! ATIF trajectories end to end: `axon run --trajectory FILE` and `axon
//! sessions export --format atif` write what Harbor's own validator
//! (`harbor.utils.trajectory_validator` from PyPI `harbor` 0.25.0, in
//! tests/peers/.venv-harbor; `scripts/peers` installs it) accepts, after a
//! run that thinks, calls tools and answers, after a failed run, and from a
//! damaged session file (whose unreadable line is named on stderr).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use crate::common::{Setup, setup};
use axon_testkit::Reply;
use serde_json::{Value, json};

/// The Python of the venv holding Harbor's validator.
fn harbor_python() -> PathBuf {
    let python =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers/.venv-harbor/bin/python");
    assert!(
        python.exists(),
        "Harbor's ATIF validator is not installed ({} is missing): run scripts/peers",
        python.display()
    );
    python
}

/// Harbor's `TrajectoryValidator` on `file`; fails with its errors.
fn validate(file: &Path) {
    let check = "import sys\n\
        from harbor.utils.trajectory_validator import TrajectoryValidator\n\
        v = TrajectoryValidator()\n\
        ok = v.validate(sys.argv[1])\n\
        print('\\n'.join(v.get_errors()))\n\
        sys.exit(0 if ok else 1)\n";
    let output = std::process::Command::new(harbor_python())
        .args(["-c", check])
        .arg(file)
        .output()
        .expect("Harbor's validator could not be started: run scripts/peers");
    assert!(
        output.status.success(),
        "Harbor's validator rejected {}:\n{}{}\n--- the trajectory:\n{}",
        file.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
        std::fs::read_to_string(file).unwrap_or_default()
    );
}

fn read_json(file: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// `axon sessions export ID --format atif`, its stdout saved to `file`;
/// returns its stderr.
fn export(s: &Setup, id: &str, file: &Path) -> String {
    let output = s
        .axon()
        .args(["sessions", "export", id, "--format", "atif"])
        .assert()
        .success()
        .get_output()
        .clone();
    std::fs::write(file, &output.stdout).unwrap();
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn session_file(s: &Setup) -> PathBuf {
    let dir = s.home.path().join("data/sessions");
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().filter_map(Result::ok).map(|e| e.path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.remove(0)
}

/// A run that thinks, writes a file, reads it back and answers.
fn tool_run() -> Setup {
    setup(vec![
        Reply::Turn {
            reasoning: "A file first.".into(),
            text: "Writing it.".into(),
            calls: vec![(
                "write_file".into(),
                json!({"path": "hello.md", "content": "hi\n"}).to_string(),
            )],
        },
        Reply::tool("read_file", json!({"path": "hello.md"})),
        Reply::text("hello.md now says hi."),
    ])
}

#[test]
fn run_and_export_write_trajectories_harbor_validates() {
    let s = tool_run();
    let out = s.home.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let written = out.join("trajectory.json");
    s.axon()
        .args(["run", "--yes", "--trajectory"])
        .arg(&written)
        .arg("create hello.md saying hi, then read it back")
        .assert()
        .success();
    validate(&written);
    let t = read_json(&written);
    assert_eq!(t["schema_version"], json!("ATIF-v1.8"));
    assert_eq!(t["agent"]["name"], json!("axon"));
    assert_eq!(t["agent"]["version"], json!(env!("CARGO_PKG_VERSION")));
    assert!(t["agent"]["model_name"].is_string(), "{t:#}");
    let steps = t["steps"].as_array().unwrap();
    let sources: Vec<&str> = steps.iter().map(|s| s["source"].as_str().unwrap()).collect();
    assert_eq!(sources, ["user", "agent", "agent", "agent"], "{t:#}");
    assert_eq!(steps[0]["message"], json!("create hello.md saying hi, then read it back"));
    assert!(steps[0]["timestamp"].as_str().unwrap().ends_with('Z'));
    let first = &steps[1];
    assert_eq!(first["message"], json!("Writing it."));
    assert_eq!(first["reasoning_content"], json!("A file first."));
    let call = &first["tool_calls"][0];
    assert_eq!(call["function_name"], json!("write_file"));
    assert_eq!(call["arguments"]["path"], json!("hello.md"));
    let result = &first["observation"]["results"][0];
    assert_eq!(result["source_call_id"], call["tool_call_id"]);
    // The scripted server reports 12 prompt and 7 completion tokens a call.
    assert_eq!(first["metrics"]["prompt_tokens"], json!(12));
    assert_eq!(first["metrics"]["completion_tokens"], json!(7));
    let read = &steps[2];
    assert_eq!(read["tool_calls"][0]["function_name"], json!("read_file"));
    assert!(read["observation"]["results"][0]["content"].as_str().unwrap().contains("hi"), "{t:#}");
    assert_eq!(steps[3]["message"], json!("hello.md now says hi."));
    assert_eq!(t["final_metrics"]["total_prompt_tokens"], json!(36));
    assert_eq!(t["final_metrics"]["total_completion_tokens"], json!(21));
    assert_eq!(t["final_metrics"]["total_steps"], json!(4));

    // The same session exported afterwards is the same trajectory.
    let id = t["session_id"].as_str().unwrap();
    let exported = out.join("exported.json");
    let stderr = export(&s, id, &exported);
    assert!(stderr.is_empty(), "{stderr}");
    validate(&exported);
    assert_eq!(read_json(&exported), t);
    drop(s.runtime);
}

#[test]
fn a_failed_run_still_writes_its_trajectory() {
    let s = setup(vec![Reply::error(401, r#"{"error":{"message":"invalid key"}}"#)]);
    let written = s.home.path().join("failed.json");
    let output =
        s.axon().args(["run", "--trajectory"]).arg(&written).arg("say hi").assert().failure();
    let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    validate(&written);
    let t = read_json(&written);
    assert_eq!(t["steps"][0]["source"], json!("user"), "{t:#}\n{stderr}");
    assert_eq!(t["steps"][0]["message"], json!("say hi"));
    drop(s.runtime);
}

#[test]
fn a_damaged_session_exports_what_it_can_and_names_the_skipped_line() {
    let s = tool_run();
    s.axon()
        .args(["run", "--yes", "create hello.md saying hi, then read it back"])
        .assert()
        .success();
    let file = session_file(&s);
    // Break the reply that read the file back: its line, not the last.
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let broken = lines
        .iter()
        .position(|l| l.contains("\"read_file\"") && l.contains("\"assistant\""))
        .expect("the read_file call's line");
    lines[broken] = lines[broken][..lines[broken].len() / 2].to_string();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();

    let id = file.file_stem().unwrap().to_str().unwrap().to_string();
    let exported = s.home.path().join("damaged.json");
    let stderr = export(&s, &id, &exported);
    assert!(
        stderr.contains(&format!("line {}", broken + 1)) && stderr.contains("left out"),
        "{stderr}"
    );
    validate(&exported);
    let t = read_json(&exported);
    assert!(t["notes"].as_str().unwrap().contains(&format!("line {}", broken + 1)), "{t:#}");
    // The read's result has no call to answer any more: it stands alone.
    let sources: Vec<&str> =
        t["steps"].as_array().unwrap().iter().map(|s| s["source"].as_str().unwrap()).collect();
    assert_eq!(sources, ["user", "agent", "system", "agent"], "{t:#}");
    drop(s.runtime);
}
