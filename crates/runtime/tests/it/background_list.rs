//! `list_background` (`/ps` in the TUI, the web panel and ACP) lists the
//! session's background commands, and answers at once, even while a turn
//! waits (issue 35 §5).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::common::{Rig, next_event, opened, runtime, until_turn_end, user};
use axon_core::ApprovalPolicy;
use axon_protocol::{AgentEvent, ApprovalDecision, BackgroundCommand, Op};
use axon_testkit::Reply;
use serde_json::json;

fn listed(event: &AgentEvent) -> Option<Vec<BackgroundCommand>> {
    match event {
        AgentEvent::BackgroundCommands { commands } => Some(commands.clone()),
        _ => None,
    }
}

#[test]
fn background_commands_are_listed_even_while_a_turn_waits() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("shell", json!({"command": "sleep 300", "background": true})),
            Reply::text("started"),
            Reply::tool("write_file", json!({"path": "a.txt", "content": "x\n"})),
            Reply::text("written"),
        ])
        .await;
        let mut config = rig.config();
        config.approval = Some(ApprovalPolicy::Auto);
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);

        session.submit(Op::ListBackground);
        let none = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("an answer")
            .expect("the session is open");
        assert_eq!(listed(&none), Some(Vec::new()), "{none:?}");

        session.submit(user("start the server"));
        until_turn_end(&session, &mut events, |_| None).await;

        // The next turn waits on an approval: the list still comes, before
        // the turn goes on.
        session.submit(Op::SetApproval { approval: axon_protocol::ApprovalMode::Ask });
        session.submit(user("write a"));
        let mut during = None;
        let mut call_id = None;
        loop {
            let event = next_event(&mut events).await;
            if let AgentEvent::ApprovalRequested { call, .. } = &event {
                call_id = Some(call.id.clone());
                session.submit(Op::ListBackground);
            }
            if let Some(list) = listed(&event) {
                assert!(call_id.is_some(), "listed before the approval was asked: {event:?}");
                during = Some(list);
                session.submit(Op::Approve {
                    call_id: call_id.clone().unwrap(),
                    decision: ApprovalDecision::Once,
                });
            }
            if matches!(event, AgentEvent::TurnCompleted { .. }) {
                break;
            }
        }
        let during = during.expect("the list came while the approval waited");
        assert_eq!(during.len(), 1, "{during:?}");
        assert_eq!(during[0].id, "bg1");
        assert_eq!(during[0].command, "sleep 300");
        assert_eq!(during[0].ended, None, "still running: {during:?}");
        assert_eq!(std::fs::read_to_string(rig.workspace.path().join("a.txt")).unwrap(), "x\n");
        session.shutdown().await;
    });
}
