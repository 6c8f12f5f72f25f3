//! `axon run` keeps secrets from the model end to end (issue 36 §1): a
//! secret a tool finds is masked before the next request and the user is
//! told where on stderr; reading `.env` is asked, so under `--yes` with no
//! one to ask it is refused with the rule named; `.env` is left as it was.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::setup;
use axon_testkit::Reply;
use serde_json::json;

/// A Slack token made at run time, so no source file holds one.
fn token() -> String {
    format!("{}{}", ["xo", "xb-"].concat(), "204618739512-3371926408815-qW8eRt5yUi2oP4aS6dF1gH3j")
}

#[test]
fn a_found_secret_is_masked_and_reading_dot_env_is_refused_under_yes() {
    let s = setup(vec![
        Reply::tools(&[
            ("search", json!({"query": "SLACK_BOT_TOKEN"})),
            ("read_file", json!({"path": ".env"})),
        ]),
        Reply::text("done"),
    ]);
    let env = format!("SLACK_BOT_TOKEN={}\n", token());
    std::fs::write(s.workspace.path().join("deploy.conf"), format!("[slack]\n{env}")).unwrap();
    std::fs::write(s.workspace.path().join(".env"), &env).unwrap();
    let output = s.axon().args(["run", "--yes", "find the slack token"]).assert().success();
    let stderr = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    let sent = s.server.requests()[1].to_string();
    assert!(!sent.contains(&token()), "the token reached the model: {sent}");
    assert!(sent.contains("[SECRET:slack-bot-token:xoxb…]"), "{sent}");
    assert!(sent.contains("read_file(**/.env*)"), "the refusal names the rule: {sent}");
    assert!(stderr.contains("deploy.conf:2 (slack-bot-token)"), "{stderr}");
    assert!(!stderr.contains(&token()), "{stderr}");
    assert_eq!(std::fs::read_to_string(s.workspace.path().join(".env")).unwrap(), env);
}
