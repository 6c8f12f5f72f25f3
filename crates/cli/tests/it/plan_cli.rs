//! Plan mode end to end against a scripted model: propose, approve, run
//! the steps in order, revise after a failure, and approve later.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{events, setup};
use axon_testkit::Reply;
use serde_json::{Value, json};

#[test]
fn a_plan_approved_with_yes_runs_its_steps_in_order() {
    let s = setup(vec![
        Reply::tool("glob", json!({"pattern": "*"})),
        Reply::submit_plan(&["inspect", "change", "verify"]),
        Reply::text("inspected"),
        Reply::text("changed"),
        Reply::text("verified"),
    ]);
    let output = s
        .axon()
        .args(["run", "--plan", "--yes", "--json", "improve it"])
        .assert()
        .success()
        .get_output()
        .clone();
    let events = events(&output.stdout);
    let order: Vec<String> = events
        .iter()
        .filter_map(|e| match e["type"].as_str() {
            Some("step_started") => Some(format!("start {}", e["step"])),
            Some("step_complete") => Some(format!("done {}", e["step"])),
            Some("plan_proposed") => {
                Some(format!("proposed {}", e["plan"]["status"].as_str().unwrap()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        order,
        ["proposed draft", "start 1", "done 1", "start 2", "done 2", "start 3", "done 3"]
    );
    let last = events.iter().rev().find(|e| e["type"] == "plan_changed").unwrap();
    assert_eq!(last["plan"]["status"], "completed");
    // Planning saw only read-only tools; the steps see them all.
    let requests = s.server.requests();
    let names = |r: &Value| -> Vec<String> {
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!names(&requests[0]).contains(&"write_file".to_string()));
    assert!(names(&requests[2]).contains(&"write_file".to_string()));
    assert!(requests[3].to_string().contains("Now do step 2 only"));
}

#[test]
fn a_failed_step_is_revised_keeping_the_completed_ones() {
    let s = setup(vec![
        Reply::submit_plan(&["first", "second", "third"]),
        Reply::text("first went fine"),
        Reply::text("STEP FAILED: the file is missing"),
        Reply::submit_plan(&["create the file", "second again"]),
        Reply::text("created"),
        Reply::text("second done"),
    ]);
    let output = s
        .axon()
        .args(["run", "--plan", "--yes", "--json", "do it"])
        .assert()
        .success()
        .get_output()
        .clone();
    let events = events(&output.stdout);
    let last = events.iter().rev().find(|e| e["type"] == "plan_changed").unwrap();
    assert_eq!(last["plan"]["status"], "completed");
    let steps: Vec<(u64, String, String)> = last["plan"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_u64().unwrap(),
                s["description"].as_str().unwrap().into(),
                s["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            (1, "first".into(), "completed".into()),
            (4, "create the file".into(), "completed".into()),
            (5, "second again".into(), "completed".into())
        ]
    );
    let first = &last["plan"]["steps"][0];
    assert_eq!(first["result"], "first went fine", "the completed step is unchanged");
    let revision = s.server.requests()[3].to_string();
    assert!(revision.contains("step 2 failed: the file is missing"), "{revision}");
}

#[test]
fn without_yes_the_plan_waits_and_runs_once_approved() {
    let s = setup(vec![Reply::submit_plan(&["only step"]), Reply::text("did it")]);
    let output = s.axon().args(["run", "--plan", "tidy up"]).assert().code(4).get_output().clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[ ] 1. only step (expected: only step is done)"), "{stderr}");
    let id =
        stderr.split("--resume ").nth(1).unwrap().split_whitespace().next().unwrap().to_string();
    s.axon()
        .args(["run", "--resume", &id, "--approve-plan", "--yes"])
        .assert()
        .success()
        .stderr(predicates::str::contains("axon: step 1 ended — did it"));
    s.axon().args(["run", "--resume", &id, "--approve-plan"]).assert().code(2);
    s.axon().args(["run", "--approve-plan"]).assert().code(2);
}

#[test]
fn a_saved_plan_can_be_edited_before_it_runs() {
    let s = setup(vec![Reply::submit_plan(&["only step"]), Reply::text("did the edited one")]);
    let output = s.axon().args(["run", "--plan", "tidy up"]).assert().code(4).get_output().clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let id =
        stderr.split("--resume ").nth(1).unwrap().split_whitespace().next().unwrap().to_string();
    s.axon()
        .env("EDITOR", "sed -i 's/only step :: only step is done/edited step :: it is edited\\n2. extra :: extra done/'")
        .args(["run", "--resume", &id, "--edit-plan"])
        .assert()
        .code(4)
        .stderr(predicates::str::contains("[ ] 2. edited step (expected: it is edited)"));
    s.server.push([Reply::text("did extra")]);
    s.axon().args(["run", "--resume", &id, "--approve-plan", "--yes"]).assert().success();
    let sent = s.server.requests()[1].to_string();
    assert!(sent.contains("Now do step 2 only: edited step"), "{sent}");
    s.axon()
        .env("EDITOR", "sed -i 's/::/-/'")
        .args(["run", "--continue", "--edit-plan"])
        .assert()
        .code(2);
}

#[test]
fn a_step_whose_writes_were_refused_is_not_complete() {
    let s = setup(vec![
        Reply::submit_plan(&["write x"]),
        Reply::tool("write_file", json!({"path": "x.txt", "content": "x"})),
        Reply::text("wrote x.txt"),
        Reply::submit_plan(&["write x with approval"]),
    ]);
    let output = s.axon().args(["run", "--plan", "make x"]).assert().code(4).get_output().clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let id =
        stderr.split("--resume ").nth(1).unwrap().split_whitespace().next().unwrap().to_string();
    // Approved, but nobody is there to approve the write: it is refused.
    let output = s
        .axon()
        .args(["run", "--resume", &id, "--approve-plan"])
        .assert()
        .code(4)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!s.workspace.path().join("x.txt").exists());
    assert!(!stderr.contains("plan completed"), "{stderr}");
    assert!(stderr.contains("step 1 failed (write_file was refused"), "{stderr}");
}

#[test]
fn a_failed_call_the_step_recovered_from_does_not_fail_it() {
    // A read of a missing file, then one that works: the step is done.
    let s = setup(vec![
        Reply::submit_plan(&["read it"]),
        Reply::tool("read_file", json!({"path": "missing.txt"})),
        Reply::tool("read_file", json!({"path": "there.txt"})),
        Reply::text("read there.txt"),
    ]);
    std::fs::write(s.workspace.path().join("there.txt"), "here\n").unwrap();
    s.axon()
        .args(["run", "--plan", "--yes", "read"])
        .assert()
        .success()
        .stderr(predicates::str::contains("plan completed"));
}

#[test]
fn a_step_that_ends_on_a_failed_call_is_not_complete() {
    let s = setup(vec![
        Reply::submit_plan(&["read it"]),
        Reply::tool("read_file", json!({"path": "missing.txt"})),
        Reply::text("read it"),
        Reply::submit_plan(&["look for it first"]),
    ]);
    let output = s.axon().args(["run", "--plan", "--yes", "read"]).assert().get_output().clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("step 1 failed (read_file failed:"), "{stderr}");
}
