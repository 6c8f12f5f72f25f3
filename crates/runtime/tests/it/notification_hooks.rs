//! Notification and SessionEnd hooks (issue 35 §6), with Claude Code's
//! fields: `permission_prompt` while a call waits for approval,
//! `idle_prompt` when an interactive session has waited for the next
//! prompt, and SessionEnd's `reason` when the session closes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{Rig, next_event, opened, runtime, user};
use axon_protocol::{AgentEvent, ApprovalDecision, Op};
use axon_testkit::Reply;
use serde_json::{Value, json};

/// The JSON objects the hook appended to `file`, once `done` accepts them.
fn wait_for(file: &Path, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let seen: Vec<Value> = serde_json::Deserializer::from_str(&text)
            .into_iter::<Value>()
            .map_while(Result::ok)
            .collect();
        if done(&seen) {
            return seen;
        }
        assert!(Instant::now() < deadline, "the hooks wrote only: {text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn notification_hooks_hear_an_approval_and_an_idle_prompt_and_session_end_its_reason() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("write_file", json!({"path": "a.txt", "content": "x\n"})),
            Reply::text("written"),
        ])
        .await;
        let config_file = rig.home.path().join("config.toml");
        let written = std::fs::read_to_string(&config_file).unwrap_or_default();
        std::fs::write(
            &config_file,
            written
                + "\n[[hooks.Notification]]\ncommand = 'cat >> \"$AXON_WORKSPACE/notes.jsonl\"'\n\
                 [[hooks.SessionEnd]]\ncommand = 'cat > \"$AXON_WORKSPACE/end.json\"'\n",
        )
        .unwrap();
        let notes = rig.workspace.path().join("notes.jsonl");
        let mut config = rig.config();
        config.idle_notice = Duration::from_millis(200);
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);
        session.submit(user("write a"));
        loop {
            let event = next_event(&mut events).await;
            if let AgentEvent::ApprovalRequested { call, .. } = &event {
                let seen = tokio::task::block_in_place(|| wait_for(&notes, |s| !s.is_empty()));
                assert_eq!(seen[0]["hook_event_name"], "Notification");
                assert_eq!(seen[0]["notification_type"], "permission_prompt");
                assert_eq!(seen[0]["message"], "axon needs your permission to use write_file");
                session.submit(Op::Approve {
                    call_id: call.id.clone(),
                    decision: ApprovalDecision::Once,
                });
            }
            if matches!(event, AgentEvent::TurnCompleted { .. }) {
                break;
            }
        }
        // No prompt comes: the hooks hear the session waits, once.
        let seen = tokio::task::block_in_place(|| wait_for(&notes, |s| s.len() == 2));
        assert_eq!(seen[1]["notification_type"], "idle_prompt", "{seen:?}");
        assert!(seen[1]["session_id"].as_str().is_some_and(|id| !id.is_empty()), "{seen:?}");
        session.shutdown().await;
        let end: Value = serde_json::from_str(
            &std::fs::read_to_string(rig.workspace.path().join("end.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(end["hook_event_name"], "SessionEnd");
        assert_eq!(end["reason"], "other");
        let seen = wait_for(&notes, |s| s.len() >= 2);
        assert_eq!(seen.len(), 2, "one idle notice, not one per wait: {seen:?}");
    });
}
