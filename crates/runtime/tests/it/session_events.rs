//! The runtime driven directly, without a front end: a scripted model,
//! operations in, and the exact event sequence out (insta snapshots, with
//! the temporary paths, ids and clocks replaced by placeholders).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{Rig, opened, runtime, until_turn_end, user};
use axon_core::ApprovalPolicy;
use axon_protocol::{AgentEvent, ApprovalDecision, Mode, Op, Preview};
use axon_testkit::Reply;
use serde_json::json;

#[test]
fn a_denied_call_is_not_run_and_the_model_is_told() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("write_file", json!({"path": "a.txt", "content": "x\n"})),
            Reply::text("I could not write it."),
        ])
        .await;
        let (session, mut events) = rig.open(rig.config()).await;
        let mut seen = opened(&mut events);
        session.submit(user("write a.txt"));
        seen.extend(
            until_turn_end(&session, &mut events, |event| match event {
                AgentEvent::ApprovalRequested { call, .. } => Some(Op::Approve {
                    call_id: call.id.clone(),
                    decision: ApprovalDecision::Deny { reason: Some("not now".into()) },
                }),
                _ => None,
            })
            .await,
        );
        session.shutdown().await;
        assert!(!rig.workspace.path().join("a.txt").exists());
        let told = rig.server.requests()[1].to_string();
        assert!(told.contains("The user did not allow write_file: not now"), "{told}");
        insta::assert_snapshot!(rig.transcript(&seen));
    });
}

#[test]
fn an_approved_edit_carried_its_diff_in_the_request() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool(
                "edit_file",
                json!({"path": "notes.txt", "old_str": "hello", "new_str": "goodbye"}),
            ),
            Reply::text("Done."),
        ])
        .await;
        std::fs::write(rig.workspace.path().join("notes.txt"), "one\nhello\nthree\n").unwrap();
        let (session, mut events) = rig.open(rig.config()).await;
        let mut seen = opened(&mut events);
        session.submit(user("say goodbye"));
        let workspace = rig.workspace.path().to_path_buf();
        seen.extend(
            until_turn_end(&session, &mut events, |event| match event {
                AgentEvent::ApprovalRequested { call, preview, .. } => {
                    // Asked before anything was written.
                    let now = std::fs::read_to_string(workspace.join("notes.txt")).unwrap();
                    assert_eq!(now, "one\nhello\nthree\n");
                    assert!(matches!(preview, Preview::Diff { .. }), "{preview:?}");
                    Some(Op::Approve { call_id: call.id.clone(), decision: ApprovalDecision::Once })
                }
                _ => None,
            })
            .await,
        );
        session.shutdown().await;
        let after = std::fs::read_to_string(rig.workspace.path().join("notes.txt")).unwrap();
        assert_eq!(after, "one\ngoodbye\nthree\n");
        insta::assert_snapshot!(rig.transcript(&seen));
    });
}

#[test]
fn a_cancelled_turn_keeps_its_partial_answer() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::Stall("Here is the start".into())]).await;
        let (session, mut events) = rig.open(rig.config()).await;
        let mut seen = opened(&mut events);
        session.submit(user("tell me everything"));
        let mut streamed = String::new();
        seen.extend(
            until_turn_end(&session, &mut events, |event| {
                if let AgentEvent::Token { text } = event {
                    streamed.push_str(text);
                    // Cancelled once the whole partial reply is in.
                    if streamed == "Here is the start" {
                        return Some(Op::Cancel);
                    }
                }
                None
            })
            .await,
        );
        // The session goes on: the next request is answered.
        rig.server.push([Reply::text("Short answer.")]);
        session.submit(user("briefly then"));
        seen.extend(until_turn_end(&session, &mut events, |_| None).await);
        session.shutdown().await;
        let resent = rig.server.requests()[1].to_string();
        assert!(resent.contains("Here is the start"), "the partial answer stays: {resent}");
        insta::assert_snapshot!(rig.transcript(&seen));
    });
}

#[test]
fn a_plan_with_a_failed_step_is_revised_and_approved_again() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::submit_plan(&["first", "second"]),
            Reply::text("first went fine"),
            Reply::text("STEP FAILED: the file is missing"),
            Reply::submit_plan(&["create the file", "second again"]),
            Reply::text("created"),
            Reply::text("second done"),
        ])
        .await;
        let mut config = rig.config();
        config.approval = Some(ApprovalPolicy::Auto);
        config.mode = Mode::Plan;
        let (session, mut events) = rig.open(config).await;
        let mut seen = opened(&mut events);
        session.submit(user("do it"));
        seen.extend(until_turn_end(&session, &mut events, |_| None).await);
        session.submit(Op::ApprovePlan);
        seen.extend(until_turn_end(&session, &mut events, |_| None).await);
        // The revision waits for approval; approved, it runs.
        session.submit(Op::ApprovePlan);
        seen.extend(until_turn_end(&session, &mut events, |_| None).await);
        session.shutdown().await;
        let revision = rig.server.requests()[3].to_string();
        assert!(revision.contains("step 2 failed: the file is missing"), "{revision}");
        insta::assert_snapshot!(rig.transcript(&seen));
    });
}

#[test]
fn attachments_are_read_through_the_workspace_and_nothing_outside() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::text("Seen."), Reply::text("A black image.")]).await;
        std::fs::write(rig.workspace.path().join("a.txt"), "attached words\n").unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(outside.path(), "outside secret").unwrap();
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        let file = |path: &str| axon_protocol::Attachment::File { path: path.to_string() };
        session.submit(Op::UserTurn { text: "look".into(), attachments: vec![file("a.txt")] });
        until_turn_end(&session, &mut events, |_| None).await;
        let sent = rig.server.requests()[0].to_string();
        assert!(sent.contains("attached words"), "{sent}");
        // An image file is attached as the image (an `@shot.png` mention
        // is this same attachment).
        let mut png = std::io::Cursor::new(Vec::new());
        image::DynamicImage::ImageRgb8(image::RgbImage::new(6, 4))
            .write_to(&mut png, image::ImageFormat::Png)
            .unwrap();
        std::fs::write(rig.workspace.path().join("shot.png"), png.into_inner()).unwrap();
        session.submit(Op::UserTurn { text: "see".into(), attachments: vec![file("shot.png")] });
        until_turn_end(&session, &mut events, |_| None).await;
        let messages = rig.server.requests()[1]["messages"].clone();
        let user = messages.as_array().unwrap().last().unwrap().clone();
        assert!(
            user["content"][1]["text"].as_str().unwrap().starts_with("Image 'shot.png': PNG, 6x4")
        );
        let url = user["content"][2]["image_url"]["url"].as_str().unwrap();
        assert!(url.starts_with("data:image/png;base64,"), "{url}");
        let escape = outside.path().display().to_string();
        session.submit(Op::UserTurn { text: "and this".into(), attachments: vec![file(&escape)] });
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        assert!(
            seen.iter().any(
                |e| matches!(e, AgentEvent::Error { message } if message.contains("cannot attach"))
            ),
            "{seen:?}"
        );
        assert!(matches!(
            seen.last(),
            Some(AgentEvent::TurnCompleted { stop_reason: axon_protocol::StopReason::Error, .. })
        ));
        assert_eq!(rig.server.requests().len(), 2, "nothing was sent for the refused attachment");
    });
}

#[test]
fn the_approval_mode_switches_mid_session() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("write_file", json!({"path": "a.txt", "content": "x\n"})),
            Reply::text("refused"),
            Reply::tool("write_file", json!({"path": "b.txt", "content": "y\n"})),
            Reply::text("written"),
        ])
        .await;
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(Op::SetApproval { approval: axon_protocol::ApprovalMode::ReadOnly });
        session.submit(user("write a.txt"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        assert!(
            !seen.iter().any(|e| matches!(e, AgentEvent::ApprovalRequested { .. })),
            "a read-only session asks nothing"
        );
        assert!(!rig.workspace.path().join("a.txt").exists());
        let first = &rig.server.requests()[0];
        let offered: Vec<&str> = first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .collect();
        assert!(offered.contains(&"read_file") && !offered.contains(&"write_file"), "{offered:?}");
        assert!(rig.server.requests()[1].to_string().contains("this session is read-only"));

        session.submit(Op::SetApproval { approval: axon_protocol::ApprovalMode::Auto });
        session.submit(Op::NewConversation);
        session.submit(user("write b.txt"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        assert!(!seen.iter().any(|e| matches!(e, AgentEvent::ApprovalRequested { .. })));
        let started = seen.iter().rev().find_map(|e| match e {
            AgentEvent::SessionStarted { session } => Some(session.clone()),
            _ => None,
        });
        assert_eq!(started.unwrap().approval, axon_protocol::ApprovalMode::Auto);
        assert_eq!(std::fs::read_to_string(rig.workspace.path().join("b.txt")).unwrap(), "y\n");
        session.shutdown().await;
    });
}

#[test]
fn a_session_named_up_front_is_saved_under_that_name() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::text("hello")]).await;
        let id = axon_store::new_session_id();
        let mut config = rig.config();
        config.session = axon_runtime::SessionChoice::NewAs(id.clone());
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);
        session.submit(user("hi"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        assert!(seen.contains(&AgentEvent::SessionSaved { session_id: id.clone() }), "{seen:?}");
        let store = axon_store::SessionStore::new(&rig.home.path().join("data"));
        assert_eq!(store.open(&id).unwrap().history().len(), 2);
    });
}

#[test]
fn a_refusal_ends_the_turn_and_takes_the_request_back() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::text("fine"),
            Reply::Refusal("I can't help with that.".into()),
            Reply::text("hello again"),
        ])
        .await;
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(user("say hi"));
        until_turn_end(&session, &mut events, |_| None).await;
        session.submit(user("do something forbidden"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        let Some(AgentEvent::TurnCompleted { stop_reason, .. }) = seen.last() else {
            panic!("{seen:?}")
        };
        assert_eq!(*stop_reason, axon_protocol::StopReason::Refusal);
        assert!(
            seen.iter().any(
                |e| matches!(e, AgentEvent::Warning { message } if message.contains("declined"))
            ),
            "{seen:?}"
        );
        session.submit(user("hi again"));
        until_turn_end(&session, &mut events, |_| None).await;
        let id = session_id(&seen).or_else(|| saved_id(&rig));
        session.shutdown().await;
        // Neither the refused request nor the refusal is sent again...
        let third = rig.server.requests()[2]["messages"].to_string();
        assert!(third.contains("say hi") && third.contains("hi again"), "{third}");
        assert!(!third.contains("forbidden") && !third.contains("can't help"), "{third}");
        // ...nor resumed.
        let store = axon_store::SessionStore::new(&rig.home.path().join("data"));
        let resumed = store.open(&id.unwrap()).unwrap().history();
        let texts: Vec<String> = resumed.iter().map(|m| m.text()).collect();
        assert_eq!(texts, ["say hi", "fine", "hi again", "hello again"]);
    });
}

fn session_id(events: &[AgentEvent]) -> Option<String> {
    events.iter().find_map(|e| match e {
        AgentEvent::SessionSaved { session_id } => Some(session_id.clone()),
        _ => None,
    })
}

/// The one session saved under the rig's data folder.
fn saved_id(rig: &Rig) -> Option<String> {
    let store = axon_store::SessionStore::new(&rig.home.path().join("data"));
    store.list(None).ok()?.first().map(|s| s.id.clone())
}

#[test]
fn a_switch_to_read_only_applies_within_the_running_turn() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("write_file", json!({"path": "a.txt", "content": "a\n"})),
            Reply::tool("write_file", json!({"path": "b.txt", "content": "b\n"})),
            Reply::text("done"),
        ])
        .await;
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(user("write both"));
        let handle = session.handle();
        let seen = until_turn_end(&session, &mut events, |event| match event {
            AgentEvent::ApprovalRequested { call, .. } => {
                // The user turns the session read-only, then allows this one.
                handle.submit(Op::SetApproval { approval: axon_protocol::ApprovalMode::ReadOnly });
                Some(Op::Approve { call_id: call.id.clone(), decision: ApprovalDecision::Once })
            }
            _ => None,
        })
        .await;
        session.shutdown().await;
        let asked =
            seen.iter().filter(|e| matches!(e, AgentEvent::ApprovalRequested { .. })).count();
        assert_eq!(asked, 1, "{seen:?}");
        assert!(rig.workspace.path().join("a.txt").exists());
        assert!(!rig.workspace.path().join("b.txt").exists(), "the second write was refused");
        assert!(
            seen.iter()
                .any(|e| matches!(e, AgentEvent::Action { refused: true, preview: None, .. }))
        );
        let third = rig.server.requests()[2].to_string();
        assert!(third.contains("this session is read-only"), "{third}");
        assert!(
            !third.contains("\"name\":\"write_file\",\"description\""),
            "write_file still offered"
        );
    });
}

#[test]
fn actions_carry_previews_when_asked() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tools(&[
                ("read_file", json!({"path": "a.txt"})),
                ("write_file", json!({"path": "a.txt", "content": "new\n"})),
            ]),
            Reply::text("done"),
        ])
        .await;
        std::fs::write(rig.workspace.path().join("a.txt"), "old\n").unwrap();
        let mut config = rig.config();
        config.approval = Some(ApprovalPolicy::Auto);
        config.preview_actions = true;
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);
        session.submit(user("rewrite a.txt"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        let previews: Vec<(String, Option<Preview>)> = seen
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Action { call, preview, .. } => {
                    Some((call.name.clone(), preview.clone()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(previews[0], ("read_file".to_string(), None), "reads need none");
        let Some(Preview::Diff { diff, created: false, .. }) = &previews[1].1 else {
            panic!("{previews:?}")
        };
        assert!(diff.contains("-old\n+new"), "{diff}");
        assert_eq!(std::fs::read_to_string(rig.workspace.path().join("a.txt")).unwrap(), "new\n");
    });
}

#[test]
fn a_queued_mode_switch_never_undoes_a_later_one() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("write_file", json!({"path": "a.txt", "content": "a\n"})),
            Reply::text("A done"),
            Reply::tool("write_file", json!({"path": "b.txt", "content": "b\n"})),
            Reply::text("B done"),
        ])
        .await;
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(user("a"));
        let handle = session.handle();
        // While A waits for its answer: auto, then B, then back to ask.
        let first = until_turn_end(&session, &mut events, |event| match event {
            AgentEvent::ApprovalRequested { call, .. } => {
                handle.submit(Op::SetApproval { approval: axon_protocol::ApprovalMode::Auto });
                handle.submit(user("b"));
                handle.submit(Op::SetApproval { approval: axon_protocol::ApprovalMode::Ask });
                Some(Op::Approve {
                    call_id: call.id.clone(),
                    decision: ApprovalDecision::Deny { reason: None },
                })
            }
            _ => None,
        })
        .await;
        assert!(first.iter().any(|e| matches!(e, AgentEvent::ApprovalRequested { .. })));
        let second = until_turn_end(&session, &mut events, |event| match event {
            AgentEvent::ApprovalRequested { call, .. } => Some(Op::Approve {
                call_id: call.id.clone(),
                decision: ApprovalDecision::Deny { reason: None },
            }),
            _ => None,
        })
        .await;
        session.shutdown().await;
        assert!(
            second.iter().any(|e| matches!(e, AgentEvent::ApprovalRequested { .. })),
            "B ran in the stale auto mode: {second:?}"
        );
        assert!(!rig.workspace.path().join("b.txt").exists());
    });
}

#[test]
fn a_tool_allowed_for_the_session_is_refused_once_read_only() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("write_file", json!({"path": "a.txt", "content": "a\n"})),
            Reply::text("wrote a"),
            Reply::tool("write_file", json!({"path": "c.txt", "content": "c\n"})),
            Reply::text("could not"),
        ])
        .await;
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(user("write a"));
        until_turn_end(&session, &mut events, |event| match event {
            AgentEvent::ApprovalRequested { call, .. } => {
                Some(Op::Approve { call_id: call.id.clone(), decision: ApprovalDecision::Always })
            }
            _ => None,
        })
        .await;
        assert!(rig.workspace.path().join("a.txt").exists());
        session.submit(Op::SetApproval { approval: axon_protocol::ApprovalMode::ReadOnly });
        session.submit(user("write c"));
        until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        assert!(!rig.workspace.path().join("c.txt").exists(), "always-allowed beat read-only");
    });
}

#[test]
fn a_tool_refused_for_the_session_stays_refused_in_every_mode() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("write_file", json!({"path": "a.txt", "content": "a\n"})),
            Reply::text("not written"),
            Reply::tool("write_file", json!({"path": "b.txt", "content": "b\n"})),
            Reply::text("still not"),
        ])
        .await;
        let (session, mut events) = rig.open(rig.config()).await;
        opened(&mut events);
        session.submit(user("write a"));
        until_turn_end(&session, &mut events, |event| match event {
            AgentEvent::ApprovalRequested { call, .. } => Some(Op::Approve {
                call_id: call.id.clone(),
                decision: ApprovalDecision::Never { reason: None },
            }),
            _ => None,
        })
        .await;
        session.submit(Op::SetApproval { approval: axon_protocol::ApprovalMode::Auto });
        session.submit(user("write b"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        assert!(!seen.iter().any(|e| matches!(e, AgentEvent::ApprovalRequested { .. })));
        assert!(!rig.workspace.path().join("a.txt").exists());
        assert!(!rig.workspace.path().join("b.txt").exists(), "auto mode ran a refused tool");
        let told = rig.server.requests()[3].to_string();
        assert!(told.contains("refused write_file for the rest of this session"), "{told}");
    });
}
