//! The mapping from axon's events to ACP updates, checked on the wire
//! shape the editor receives.

#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::*;
use axon_protocol::{PlanStatus, PlanStep};

fn root() -> PathBuf {
    PathBuf::from("/home/me/project")
}

fn wire(updates: &[SessionUpdate]) -> Vec<Value> {
    updates.iter().map(|u| serde_json::to_value(u).unwrap()).collect()
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments }
}

#[test]
fn a_read_is_announced_running_then_completed_with_its_text() {
    let mut mapper = Mapper::new(&root());
    let read =
        call("c1", "read_file", json!({"path": "src/main.rs", "start_line": 10, "end_line": 14}));
    let started =
        wire(&mapper.event(&AgentEvent::Action { refused: false, preview: None, call: read }));
    assert_eq!(
        started,
        [json!({"sessionUpdate": "tool_call", "toolCallId": "c1",
                "title": "Read src/main.rs (lines 10-14)", "kind": "read", "status": "in_progress",
                "locations": [{"path": "/home/me/project/src/main.rs", "line": 10}],
                "rawInput": {"path": "src/main.rs", "start_line": 10, "end_line": 14}})]
    );
    let done = wire(&mapper.event(&AgentEvent::Observation {
        call_id: "c1".into(),
        name: "read_file".into(),
        output: ToolOutput::text("10 | fn main() {}"),
    }));
    assert_eq!(
        done,
        [json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "10 | fn main() {}"}}]})]
    );
}

#[test]
fn an_edit_asked_about_carries_its_hunks_and_is_announced_once() {
    let mut mapper = Mapper::new(&root());
    let edit = call("e1", "edit_file", json!({"path": "a.rs", "old_str": "two", "new_str": "2"}));
    let preview = Preview::Diff {
        path: "a.rs".into(),
        diff: "--- a/a.rs\n+++ b/a.rs\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n".into(),
        created: false,
    };
    let (announce, asked) = mapper.ask(&edit, &preview);
    let diff = json!({"type": "diff", "path": "/home/me/project/a.rs",
                      "oldText": "one\ntwo\nthree\n", "newText": "one\n2\nthree\n"});
    assert_eq!(
        wire(&announce),
        [json!({"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "Edit a.rs",
                "kind": "edit",
                "locations": [{"path": "/home/me/project/a.rs", "line": 1}],
                "rawInput": {"path": "a.rs", "old_str": "two", "new_str": "2"},
                "content": [diff.clone()]})]
    );
    let asked = serde_json::to_value(&asked).unwrap();
    // A new tool call's status is `pending` when absent (the schema's
    // default, which it leaves out); the permission request says it.
    assert_eq!(asked["toolCallId"], "e1");
    assert_eq!(asked["status"], "pending");
    assert_eq!(asked["content"], json!([diff.clone()]));

    let running =
        wire(&mapper.event(&AgentEvent::Action { refused: false, preview: None, call: edit }));
    assert_eq!(
        running,
        [json!({"sessionUpdate": "tool_call_update", "toolCallId": "e1", "status": "in_progress"})]
    );
    let done = wire(&mapper.event(&AgentEvent::Observation {
        call_id: "e1".into(),
        name: "edit_file".into(),
        output: ToolOutput::text("Edited 'a.rs'"),
    }));
    assert_eq!(done[0]["status"], "completed");
    assert_eq!(done[0]["content"][0], diff);
}

#[test]
fn an_edit_run_without_asking_shows_its_own_old_and_new_text() {
    let mut mapper = Mapper::new(&root());
    let edit = call("e2", "edit_file", json!({"path": "a.rs", "old_str": "x", "new_str": "y"}));
    mapper.event(&AgentEvent::Action { refused: false, preview: None, call: edit });
    let done = wire(&mapper.event(&AgentEvent::Observation {
        call_id: "e2".into(),
        name: "edit_file".into(),
        output: ToolOutput::text("Edited 'a.rs'"),
    }));
    assert_eq!(
        done[0]["content"][0],
        json!({"type": "diff", "path": "/home/me/project/a.rs", "oldText": "x", "newText": "y"})
    );
}

#[test]
fn a_new_file_is_one_diff_without_old_text_and_a_failure_shows_no_diff() {
    let mut mapper = Mapper::new(&root());
    let write = call("w1", "write_file", json!({"path": "n.txt", "content": "a\nb\n"}));
    let preview = Preview::Diff {
        path: "n.txt".into(),
        diff: "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n".into(),
        created: true,
    };
    let (announce, _) = mapper.ask(&write, &preview);
    assert_eq!(
        wire(&announce)[0]["content"],
        json!([{"type": "diff", "path": "/home/me/project/n.txt", "newText": "a\nb\n"}])
    );
    mapper.event(&AgentEvent::Action { refused: false, preview: None, call: write });
    let failed = wire(&mapper.event(&AgentEvent::Observation {
        call_id: "w1".into(),
        name: "write_file".into(),
        output: ToolOutput::error("disk full"),
    }));
    assert_eq!(failed[0]["status"], "failed");
    assert_eq!(
        failed[0]["content"],
        json!([{"type": "content", "content": {"type": "text", "text": "disk full"}}])
    );
}

#[test]
fn a_command_is_executed_and_its_card_shows_the_command() {
    let mut mapper = Mapper::new(&root());
    let shell = call("s1", "shell", json!({"command": "cargo test\necho done"}));
    let preview = Preview::Command {
        command: "cargo test\necho done".into(),
        workdir: ".".into(),
        sandbox: Some("workspace-write, network off".into()),
    };
    let (announce, _) = mapper.ask(&shell, &preview);
    let announce = &wire(&announce)[0];
    assert_eq!(announce["kind"], "execute");
    assert_eq!(announce["title"], "`cargo test …`");
    assert_eq!(
        announce["content"][0]["content"]["text"],
        "```sh\ncargo test\necho done\n```\nsandboxed: workspace-write, network off"
    );
}

#[test]
fn the_todo_list_is_the_plan_not_a_tool_card() {
    let mut mapper = Mapper::new(&root());
    let todo = call(
        "t1",
        "todo",
        json!({"items": [{"content": "read", "status": "completed"},
                         {"content": "fix", "status": "in_progress"},
                         {"content": "test", "status": "pending"}]}),
    );
    assert!(
        mapper.event(&AgentEvent::Action { refused: false, preview: None, call: todo }).is_empty()
    );
    let plan = wire(&mapper.event(&AgentEvent::Observation {
        call_id: "t1".into(),
        name: "todo".into(),
        output: ToolOutput::text("ok"),
    }));
    assert_eq!(
        plan,
        [json!({"sessionUpdate": "plan", "entries": [
            {"content": "read", "priority": "medium", "status": "completed"},
            {"content": "fix", "priority": "medium", "status": "in_progress"},
            {"content": "test", "priority": "medium", "status": "pending"}]})]
    );
}

#[test]
fn plan_mode_steps_are_plan_entries() {
    let mut mapper = Mapper::new(&root());
    let step = |id, description: &str, status| PlanStep {
        id,
        description: description.into(),
        expected_outcome: String::new(),
        status,
        result: None,
    };
    let plan = AxonPlan {
        id: "p".into(),
        goal: "g".into(),
        steps: vec![
            step(1, "one", StepStatus::Completed),
            step(2, "two", StepStatus::Failed),
            step(3, "three", StepStatus::Running),
        ],
        status: PlanStatus::Executing,
        created_at: 0,
        updated_at: 0,
    };
    let update = wire(&mapper.event(&AgentEvent::PlanChanged { plan }));
    let statuses: Vec<(&str, &str)> = update[0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["content"].as_str().unwrap(), e["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [("one", "completed"), ("two (failed)", "completed"), ("three", "in_progress")]
    );
}

#[test]
fn streamed_text_and_reasoning_are_chunks() {
    let mut mapper = Mapper::new(&root());
    let updates = wire(
        &[
            mapper.event(&AgentEvent::Thought { text: "hmm".into() }),
            mapper.event(&AgentEvent::Token { text: "Hi".into() }),
        ]
        .concat(),
    );
    assert_eq!(
        updates,
        [
            json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}})
        ]
    );
}

#[test]
fn a_stored_conversation_replays_as_chunks_and_finished_calls() {
    let mut mapper = Mapper::new(&root());
    let mut asked = Message::assistant("Let me look.");
    asked.tool_calls = vec![call("c1", "read_file", json!({"path": "a.txt"}))];
    let messages = vec![
        Message::user("what is in a.txt?"),
        asked,
        Message::tool_result("c1", ToolOutput::text("1 | hello")),
        Message::assistant("It says hello."),
    ];
    let updates = wire(&mapper.replay(&messages));
    assert_eq!(
        updates,
        [
            json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "what is in a.txt?"}}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Let me look."}}),
            json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read a.txt", "kind": "read",
                   "status": "completed", "locations": [{"path": "/home/me/project/a.txt"}],
                   "rawInput": {"path": "a.txt"},
                   "content": [{"type": "content", "content": {"type": "text", "text": "1 | hello"}}]}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "It says hello."}}),
        ]
    );
}

#[test]
fn long_results_are_clipped_on_a_character() {
    let text = "é".repeat(MAX_RESULT_CHARS + 5);
    let clipped = clip(&text);
    assert!(clipped.starts_with(&"é".repeat(MAX_RESULT_CHARS)));
    assert!(clipped.ends_with("(5 more characters)"), "{}", &clipped[clipped.len() - 40..]);
}

#[test]
fn repeated_model_call_ids_get_their_own_cards() {
    // The text tool protocol numbers each reply's blocks from 1.
    let mut mapper = Mapper::new(&root());
    let mut ids = Vec::new();
    for _ in 0..2 {
        let read = call("block_1", "read_file", json!({"path": "a.txt"}));
        let started =
            wire(&mapper.event(&AgentEvent::Action { refused: false, preview: None, call: read }));
        let done = wire(&mapper.event(&AgentEvent::Observation {
            call_id: "block_1".into(),
            name: "read_file".into(),
            output: ToolOutput::text("1 | a"),
        }));
        assert_eq!(started[0]["toolCallId"], done[0]["toolCallId"]);
        ids.push(started[0]["toolCallId"].clone());
    }
    assert_eq!(ids, [json!("block_1"), json!("block_1.2")]);
}

#[test]
fn a_replayed_call_gets_the_result_that_followed_it() {
    let mut mapper = Mapper::new(&root());
    let turn = |text: &str| {
        let mut asked = Message::assistant("");
        asked.tool_calls = vec![call("block_1", "read_file", json!({"path": "a.txt"}))];
        [asked, Message::tool_result("block_1", ToolOutput::text(text))]
    };
    let messages: Vec<Message> = [turn("first"), turn("second")].concat();
    let updates = wire(&mapper.replay(&messages));
    let shown: Vec<(&str, &str)> = updates
        .iter()
        .map(|u| {
            (
                u["toolCallId"].as_str().unwrap(),
                u["content"][0]["content"]["text"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(shown, [("block_1", "first"), ("block_1.2", "second")]);
}

#[test]
fn a_refused_call_never_shows_as_running() {
    let mut mapper = Mapper::new(&root());
    // Refused without asking (a read-only session).
    let write = call("w1", "write_file", json!({"path": "a.txt", "content": "x"}));
    let announced =
        wire(&mapper.event(&AgentEvent::Action { call: write, refused: true, preview: None }));
    assert_eq!(announced[0]["sessionUpdate"], "tool_call");
    assert!(announced[0].get("status").is_none(), "pending: {announced:?}");
    // Denied after asking: no update until it fails.
    let shell = call("s1", "shell", json!({"command": "rm -rf /"}));
    let preview =
        Preview::Command { command: "rm -rf /".into(), workdir: ".".into(), sandbox: None };
    mapper.ask(&shell, &preview);
    assert!(
        mapper.event(&AgentEvent::Action { call: shell, refused: true, preview: None }).is_empty()
    );
    let failed = wire(&mapper.event(&AgentEvent::Observation {
        call_id: "s1".into(),
        name: "shell".into(),
        output: ToolOutput::error("The user did not allow shell"),
    }));
    assert_eq!(failed[0]["status"], "failed");
}

#[test]
fn paths_outside_the_workspace_get_no_location_and_no_diff() {
    let mut mapper = Mapper::new(&root());
    for (id, path) in [("a", "/etc/passwd"), ("b", "../outside.rs"), ("c", "src/../../x")] {
        let edit = call(id, "edit_file", json!({"path": path, "old_str": "x", "new_str": "y"}));
        let started =
            wire(&mapper.event(&AgentEvent::Action { call: edit, refused: false, preview: None }));
        assert!(started[0].get("locations").is_none_or(|l| l == &json!([])), "{started:?}");
        let done = wire(&mapper.event(&AgentEvent::Observation {
            call_id: id.into(),
            name: "edit_file".into(),
            output: ToolOutput::text("Edited"),
        }));
        assert!(!done[0].to_string().contains("\"diff\""), "{done:?}");
    }
}

#[test]
fn a_write_run_without_asking_shows_the_diff_of_its_preview() {
    let mut mapper = Mapper::new(&root());
    let write = call("w2", "write_file", json!({"path": "a.txt", "content": "new\n"}));
    let preview = Preview::Diff {
        path: "a.txt".into(),
        diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n".into(),
        created: false,
    };
    let started = wire(&mapper.event(&AgentEvent::Action {
        call: write,
        refused: false,
        preview: Some(preview),
    }));
    let diff = json!({"type": "diff", "path": "/home/me/project/a.txt", "oldText": "old\n", "newText": "new\n"});
    assert_eq!(started[0]["status"], "in_progress");
    assert_eq!(started[0]["content"], json!([diff.clone()]));
    assert_eq!(started[0]["locations"][0]["line"], 1);
    let done = wire(&mapper.event(&AgentEvent::Observation {
        call_id: "w2".into(),
        name: "write_file".into(),
        output: ToolOutput::text("Wrote 1 line"),
    }));
    assert_eq!(done[0]["content"][0], diff);
}

#[test]
fn a_subagents_steps_show_on_its_calls_card_until_its_report() {
    let mut mapper = Mapper::new(&root());
    let start = call("c1", "agent_alpha", json!({"task": "look"}));
    mapper.event(&AgentEvent::Action { refused: false, preview: None, call: start });
    let nested = |event: AgentEvent| AgentEvent::Subagent {
        call_id: "c1".into(),
        agent: "alpha".into(),
        event: Box::new(event),
    };
    let read = call("s1", "read_file", json!({"path": "a.rs"}));
    mapper.event(&nested(AgentEvent::Action { refused: false, preview: None, call: read }));
    let step = wire(&mapper.event(&nested(AgentEvent::Observation {
        call_id: "s1".into(),
        name: "read_file".into(),
        output: ToolOutput::text("1 | x"),
    })));
    assert_eq!(
        step,
        [json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "content": [
            {"type": "content", "content": {"type": "text",
             "text": "alpha: read_file path=a.rs\nalpha: ✓ read_file"}}]})]
    );
    // Tokens of its own are not shown; its report is the call's result.
    assert!(mapper.event(&nested(AgentEvent::Token { text: "hm".into() })).is_empty());
    let done = wire(&mapper.event(&AgentEvent::Observation {
        call_id: "c1".into(),
        name: "agent_alpha".into(),
        output: ToolOutput::text("the report"),
    }));
    assert_eq!(done[0]["status"], "completed");
    assert_eq!(done[0]["content"][0]["content"]["text"], "the report");
}

#[test]
fn a_running_calls_progress_is_its_content() {
    let mut mapper = Mapper::new(&root());
    let progress = |message: Option<&str>, total| AgentEvent::ToolProgress {
        call_id: "m1".into(),
        message: message.map(String::from),
        progress: 2.0,
        total,
    };
    // Nothing for a call the editor was never shown.
    assert!(mapper.event(&progress(Some("early"), Some(4.0))).is_empty());
    let index = call("m1", "mcp_fx_index", json!({}));
    mapper.event(&AgentEvent::Action { refused: false, preview: None, call: index });
    assert_eq!(
        wire(&mapper.event(&progress(Some("indexing"), Some(4.0)))),
        [json!({"sessionUpdate": "tool_call_update", "toolCallId": "m1", "status": "in_progress",
                "content": [{"type": "content", "content": {"type": "text", "text": "indexing · 50%"}}]})]
    );
    let counted = wire(&mapper.event(&progress(None, None)));
    assert_eq!(counted[0]["content"][0]["content"]["text"], "progress 2");
}

#[test]
fn a_patch_is_an_edit_of_every_file_with_each_files_hunks() {
    let mut mapper = Mapper::new(&root());
    let input = "*** Begin Patch\n*** Add File: n.txt\n+new\n*** Update File: src/a.rs\n@@\n-one\n+1\n*** End Patch";
    let patch = call("p1", "apply_patch", json!({ "input": input }));
    let preview = Preview::Diff {
        path: "n.txt".into(),
        diff: "[The patch changes 2 files: A n.txt, M src/a.rs]\n--- a/n.txt\n+++ b/n.txt\n\
               @@ -0,0 +1 @@\n+new\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,2 +1,2 @@\n-one\n+1\n two\n"
            .into(),
        created: false,
    };
    let (announce, _) = mapper.ask(&patch, &preview);
    let announce = &wire(&announce)[0];
    assert_eq!(announce["title"], "Patch 2 files");
    assert_eq!(announce["kind"], "edit");
    assert_eq!(
        announce["locations"],
        json!([{"path": "/home/me/project/n.txt"}, {"path": "/home/me/project/src/a.rs"}])
    );
    assert_eq!(
        announce["content"],
        json!([
            {"type": "diff", "path": "/home/me/project/n.txt", "newText": "new\n"},
            {"type": "diff", "path": "/home/me/project/src/a.rs", "oldText": "one\ntwo\n",
             "newText": "1\ntwo\n"}
        ])
    );
    let one = call(
        "p2",
        "apply_patch",
        json!({ "input": "*** Begin Patch\n*** Delete File: x\n*** End Patch" }),
    );
    let (announce, _) = mapper.ask(&one, &Preview::Invalid { message: "no".into() });
    assert_eq!(wire(&announce)[0]["title"], "Patch x");
}

#[test]
fn background_commands_and_their_output_are_execute_cards() {
    let mut mapper = Mapper::new(&root());
    let title = |mapper: &mut Mapper, id: &str, name: &str, arguments: Value| {
        let updates = mapper.event(&AgentEvent::Action {
            refused: false,
            preview: None,
            call: call(id, name, arguments),
        });
        let update = &wire(&updates)[0];
        assert_eq!(update["kind"], "execute", "{update}");
        update["title"].as_str().unwrap().to_string()
    };
    let started =
        title(&mut mapper, "b1", "shell", json!({"command": "npm run dev", "background": true}));
    assert_eq!(started, "`npm run dev` in the background");
    assert_eq!(title(&mut mapper, "b2", "shell_output", json!({"id": "bg1"})), "Output of bg1");
    assert_eq!(title(&mut mapper, "b3", "shell_kill", json!({"id": "bg1"})), "Stop bg1");
}

#[test]
fn web_calls_are_a_fetch_and_a_search() {
    let mut mapper = Mapper::new(&root());
    for (name, arguments, kind, want) in [
        ("web_fetch", json!({"url": "https://docs.rs/url"}), "fetch", "Fetch https://docs.rs/url"),
        (
            "web_search",
            json!({"query": "rust url crate"}),
            "search",
            "Search the web for `rust url crate`",
        ),
    ] {
        let updates = mapper.event(&AgentEvent::Action {
            refused: false,
            preview: None,
            call: call(name, name, arguments),
        });
        let update = &wire(&updates)[0];
        assert_eq!(update["kind"], kind, "{update}");
        assert_eq!(update["title"], want, "{update}");
    }
}
