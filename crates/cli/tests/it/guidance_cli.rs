//! Rules and skills end to end: what the model is sent, and what
//! `axon rules` and `axon skills list` show.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::setup;
use axon_testkit::Reply;
use serde_json::json;

#[test]
fn rules_and_skills_reach_the_model() {
    let s = setup(vec![Reply::tool("glob", json!({"pattern": "*"})), Reply::text("done")]);
    std::fs::write(s.home.path().join("config.toml"), "rules = [\"Answer in English.\"]\n")
        .unwrap();
    let ws = s.workspace.path();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join("AGENTS.md"), "Run cargo fmt before committing.").unwrap();
    std::fs::create_dir_all(ws.join(".axon/skills/release")).unwrap();
    std::fs::write(
        ws.join(".axon/skills/release/SKILL.md"),
        "---\nname: release\ndescription: Cut a release\n---\nTag with vX.Y.Z and push the tag.\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.join(".axon/skills/empty")).unwrap();

    s.axon()
        .args(["run", "list files"])
        .assert()
        .success()
        .stderr(predicates::str::contains("skill 'empty' skipped"));
    let requests = s.server.requests();
    let system = requests[0]["messages"][0]["content"].as_str().unwrap().to_string();
    assert!(system.contains("Rule 1: Answer in English."), "{system}");
    assert!(
        system.contains("Rule 2: (from ") && system.contains("Run cargo fmt before committing."),
        "{system}"
    );
    assert!(system.contains("## Skill: release") && system.contains("Tag with vX.Y.Z"), "{system}");
    let tool =
        requests[1]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap();
    assert!(tool["content"].to_string().contains("Reminder: follow Rules 1–2"), "{tool}");

    let rules = s.axon().args(["rules"]).assert().success().get_output().stdout.clone();
    let rules = String::from_utf8_lossy(&rules);
    assert!(rules.starts_with("Rule 1: Answer in English.\nRule 2: (from "), "{rules}");
    let skills = s.axon().args(["skills", "list"]).assert().success().get_output().stdout.clone();
    let skills = String::from_utf8_lossy(&skills);
    assert!(skills.contains("release") && skills.contains("injected"), "{skills}");
    assert!(skills.contains("empty") && skills.contains("failed"), "{skills}");
}
