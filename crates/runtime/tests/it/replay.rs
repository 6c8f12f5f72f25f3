//! A saved conversation replayed (issue 31 §1): the `history` event every
//! front end draws from holds what the user typed and the names of what
//! went with it, never axon's own plan-step requests or an attachment's
//! quoted body; the same whether the session is opened to continue it or
//! resumed by an operation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{Rig, opened, runtime, until_turn_end, user};
use axon_core::ApprovalPolicy;
use axon_protocol::{AgentEvent, Attachment, Message, Mode, Op, Role};
use axon_runtime::SessionChoice;
use axon_testkit::Reply;

fn history(events: &[AgentEvent]) -> Vec<Message> {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::History { messages } => Some(messages.clone()),
            _ => None,
        })
        .expect("a history event")
}

fn check(shown: &[Message]) {
    let users: Vec<&Message> = shown.iter().filter(|m| m.role == Role::User).collect();
    let texts: Vec<String> = users.iter().map(|m| m.text()).collect();
    assert!(texts.iter().all(|t| !t.contains("approved plan")), "{texts:#?}");
    assert!(texts.iter().all(|t| !t.contains("STEP FAILED")), "{texts:#?}");
    assert!(texts.iter().all(|t| !t.contains("attached words")), "{texts:#?}");
    assert_eq!(users.len(), 2, "the two requests the user typed, once each: {texts:#?}");
    assert_eq!(users[0].content[0].as_text(), Some("do it"));
    let look = users[1];
    assert_eq!(look.content[0].as_text(), Some("look"));
    let names: Vec<String> = look.content[1..]
        .iter()
        .filter_map(|p| p.as_text())
        .map(|t| t.replace("\n", " "))
        .collect();
    assert_eq!(names, [r#" <attachment name="a.txt">  </attachment>"#], "only the name is left");
    // The steps' answers are still there.
    assert!(shown.iter().any(|m| m.role == Role::Assistant && m.text() == "second done"));
}

#[test]
fn a_replay_shows_what_the_user_typed_and_attached_by_name() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::submit_plan(&["first", "second"]),
            Reply::text("first went fine"),
            Reply::text("second done"),
            Reply::text("Seen."),
        ])
        .await;
        std::fs::write(rig.workspace.path().join("a.txt"), "attached words\n").unwrap();
        let mut config = rig.config();
        config.approval = Some(ApprovalPolicy::Auto);
        config.mode = Mode::Plan;
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);
        session.submit(user("do it"));
        until_turn_end(&session, &mut events, |_| None).await;
        session.submit(Op::ApprovePlan);
        until_turn_end(&session, &mut events, |_| None).await;
        session.submit(Op::SetMode { mode: Mode::React });
        let file = Attachment::File { path: "a.txt".to_string() };
        session.submit(Op::UserTurn { text: "look".into(), attachments: vec![file] });
        until_turn_end(&session, &mut events, |_| None).await;
        // The step requests went to the model as they were.
        let sent = rig.server.requests()[1].to_string();
        assert!(sent.contains("approved plan"), "{sent}");
        session.shutdown().await;

        // Continued, as `axon --continue` and `session/load` open it.
        let mut config = rig.config();
        config.session = SessionChoice::Latest;
        config.replay_history = true;
        let (session, mut events) = rig.open(config).await;
        check(&history(&opened(&mut events)));

        // Resumed by an operation, as the browser's sidebar does.
        session.submit(Op::NewConversation);
        session.submit(Op::Resume { id: None });
        let mut seen = Vec::new();
        while !seen
            .iter()
            .any(|e| matches!(e, AgentEvent::History { messages } if !messages.is_empty()))
        {
            seen.push(events.recv().await.expect("the session is open"));
        }
        check(&history(&seen));
        session.shutdown().await;
    });
}

#[test]
fn a_refused_call_is_recorded_and_replayed_as_refused() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("write_file", serde_json::json!({"path": "a.txt", "content": "x\n"})),
            Reply::tool("read_file", serde_json::json!({"path": "missing.txt"})),
            Reply::text("I will not write it."),
        ])
        .await;
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(user("write a"));
        until_turn_end(&session, &mut events, |event| match event {
            AgentEvent::ApprovalRequested { call, .. } => Some(Op::Approve {
                call_id: call.id.clone(),
                decision: axon_protocol::ApprovalDecision::Deny { reason: Some("no".into()) },
            }),
            _ => None,
        })
        .await;
        session.shutdown().await;
        let mut config = rig.config();
        config.session = SessionChoice::Latest;
        config.replay_history = true;
        let (session, mut events) = rig.open(config).await;
        let shown = history(&opened(&mut events));
        session.shutdown().await;
        let results: Vec<(bool, bool)> = shown
            .iter()
            .filter(|m| m.role == Role::Tool)
            .map(|m| (m.is_error, m.refused))
            .collect();
        assert_eq!(results, [(true, true), (true, false)], "refused, then failed: {shown:#?}");
    });
}
