//! Subagent definitions as a session finds them: a Claude Code file in the
//! workspace's `.claude/agents/` becomes `agent_NAME` with its tools
//! mapped to axon's, runs on the model it names, its steps come nested in
//! the session's events, and its usage is counted in the turn's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{Rig, opened, runtime, until_turn_end, user};
use axon_protocol::{AgentEvent, Usage};
use axon_testkit::Reply;
use serde_json::{Value, json};

fn offered(request: &Value) -> Vec<&str> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect()
}

#[test]
fn a_claude_code_definition_becomes_a_tool_with_its_tools_only() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("agent_finder", json!({"task": "where is the needle?"})),
            Reply::tool("search", json!({"pattern": "needle"})),
            Reply::text("The needle is in hay.txt, line 2."),
            Reply::text("It is in hay.txt."),
        ])
        .await;
        let agents = rig.workspace.path().join(".claude/agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(
            agents.join("finder.md"),
            "---\nname: finder\ndescription: Finds things in the code. Use it to locate code.\n\
             tools: Read, Grep\nmodel: finder-model\ncolor: blue\n---\nYou find things. Be brief.\n",
        )
        .unwrap();
        std::fs::write(rig.workspace.path().join("hay.txt"), "straw\nneedle\nstraw\n").unwrap();

        let (session, mut events) = rig.open(rig.config()).await;
        let started = opened(&mut events);
        let tools = started
            .iter()
            .find_map(|e| match e {
                AgentEvent::SessionStarted { session } => Some(session.tools.clone()),
                _ => None,
            })
            .unwrap();
        assert!(tools.contains(&"agent_finder".to_string()), "{tools:?}");
        assert!(tools.contains(&"task".to_string()), "{tools:?}");
        let warnings: Vec<&AgentEvent> =
            started.iter().filter(|e| matches!(e, AgentEvent::Warning { .. })).collect();
        assert!(warnings.is_empty(), "{warnings:?}");

        session.submit(user("find the needle"));
        let turn = until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;

        let requests = rig.server.requests();
        assert_eq!(requests.len(), 4);
        // The subagent: Read and Grep as axon's tools, nothing else, on the
        // model it names, with its instructions and its task alone.
        for child in &requests[1..3] {
            assert_eq!(offered(child), ["read_file", "search"]);
            assert_eq!(child["model"], "finder-model");
            assert!(child["messages"][0]["content"].to_string().contains("You find things."));
            assert!(!child.to_string().contains("find the needle\""), "{child}");
        }
        assert_eq!(requests[0]["model"], "scripted");
        // The parent gets the report, not the search's own result.
        let last = requests[3].to_string();
        assert!(last.contains("The needle is in hay.txt, line 2."), "{last}");
        assert!(!last.contains("straw") && !last.contains("hay.txt:2"), "{last}");

        // Its steps came nested under the call, before the call's result.
        let nested_search = turn.iter().position(|e| {
            matches!(e, AgentEvent::Subagent { agent, event, .. } if agent == "finder"
                && matches!(&**event, AgentEvent::Observation { name, .. } if name == "search"))
        });
        let result = turn.iter().position(
            |e| matches!(e, AgentEvent::Observation { name, .. } if name == "agent_finder"),
        );
        assert!(nested_search.unwrap() < result.unwrap());
        // Four model calls of 7 output tokens each, the subagent's included.
        let usage = turn
            .iter()
            .find_map(|e| match e {
                AgentEvent::TurnCompleted { usage, .. } => Some(*usage),
                _ => None,
            })
            .unwrap();
        assert_eq!(usage, Usage { input_tokens: 48, output_tokens: 28, ..Usage::default() });
    });
}
