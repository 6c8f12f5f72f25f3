//! A session's MCP servers start in the background: a slow server (a real
//! stdio server on the official MCP Python SDK, held back by a gate file
//! that only the test opens, so no clock decides anything) never holds up
//! a prompt that does not name it; its tools reach the model once it is
//! ready; a prompt that names it waits for it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{Rig, runtime, until_turn_end, user};
use axon_mcp::config::{ServerConfig, Transport};
use axon_protocol::{AgentEvent, McpState, StopReason};
use axon_runtime::Events;
use axon_testkit::Reply;

fn slow_server(gate: &Path) -> ServerConfig {
    let peers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers");
    let python = peers.join(".venv/bin/python");
    assert!(python.exists(), "{} is missing: run scripts/peers", python.display());
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/python/changing_server.py");
    ServerConfig {
        name: "slowpoke".to_string(),
        transport: Transport::Stdio {
            command: python.display().to_string(),
            args: vec![script.display().to_string()],
            env: [("GATE".to_string(), gate.display().to_string())].into(),
            cwd: None,
        },
        enabled: true,
        startup_timeout: Duration::from_secs(120),
        tool_timeout: None,
        enabled_tools: None,
        disabled_tools: Vec::new(),
        source: "test".to_string(),
        sandbox: Default::default(),
    }
}

/// Events until one that `wanted` picks (that one included).
async fn until(events: &mut Events, wanted: impl Fn(&AgentEvent) -> bool) -> Vec<AgentEvent> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(120), events.recv())
            .await
            .unwrap_or_else(|_| panic!("never came; seen: {seen:#?}"))
            .expect("the session is open");
        let done = wanted(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

fn offered(rig: &Rig, request: usize) -> String {
    rig.server.requests()[request]["tools"].to_string()
}

fn stop_reason(events: &[AgentEvent]) -> Option<StopReason> {
    events.iter().find_map(|e| match e {
        AgentEvent::TurnCompleted { stop_reason, .. } => Some(*stop_reason),
        _ => None,
    })
}

#[test]
fn a_slow_server_holds_up_no_prompt_that_does_not_name_it_and_joins_when_ready() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::text("hi"), Reply::text("now with its tools")]).await;
        let gate = rig.home.path().join("open");
        let mut config = rig.config();
        config.client_servers = vec![slow_server(&gate)];
        let (session, mut events) = rig.open(config).await;

        // The gate is shut: the server cannot be ready, and the turn ends.
        session.submit(user("hello"));
        let first = until_turn_end(&session, &mut events, |_| None).await;
        assert_eq!(stop_reason(&first), Some(StopReason::EndTurn), "{first:#?}");
        assert!(!offered(&rig, 0).contains("mcp_slowpoke"), "{}", offered(&rig, 0));
        let waited = first.iter().any(
            |e| matches!(e, AgentEvent::Info { message } if message.contains("waiting for MCP")),
        );
        assert!(!waited, "{first:#?}");

        std::fs::write(&gate, "").unwrap();
        let joined = until(&mut events, |e| {
            matches!(e, AgentEvent::McpStatus { server, state: McpState::Ready, .. }
                     if server == "slowpoke")
        })
        .await;
        let Some(AgentEvent::McpStatus { message: Some(message), .. }) = joined.last() else {
            panic!("{joined:#?}");
        };
        assert!(message.ends_with(" s, 2 tools"), "{message}");

        session.submit(user("again"));
        let second = until_turn_end(&session, &mut events, |_| None).await;
        assert_eq!(stop_reason(&second), Some(StopReason::EndTurn), "{second:#?}");
        assert!(offered(&rig, 1).contains("mcp_slowpoke_ping"), "{}", offered(&rig, 1));
        session.shutdown().await;
    });
}

#[test]
fn a_prompt_that_names_a_starting_server_waits_for_it() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::text("pinged")]).await;
        let gate = rig.home.path().join("open");
        let mut config = rig.config();
        config.client_servers = vec![slow_server(&gate)];
        let (session, mut events) = rig.open(config).await;

        session.submit(user("ask slowpoke for a ping"));
        until(&mut events, |e| {
            matches!(e, AgentEvent::Info { message }
                     if message.contains("waiting for MCP server slowpoke"))
        })
        .await;
        // Only now can it start; the model is asked once it has.
        std::fs::write(&gate, "").unwrap();
        let turn = until_turn_end(&session, &mut events, |_| None).await;
        assert_eq!(stop_reason(&turn), Some(StopReason::EndTurn), "{turn:#?}");
        assert!(offered(&rig, 0).contains("mcp_slowpoke_ping"), "{}", offered(&rig, 0));
        session.shutdown().await;
    });
}
