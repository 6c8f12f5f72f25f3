//! Tool cards as issue 31 §2 found them wanting, on ratatui's
//! `TestBackend`: an approved edit keeps the diff the user approved (the
//! file's lines, indentation and context), not its `old_str`/`new_str`; a
//! failed command's stderr is on the collapsed card; a submitted plan is
//! its steps, not JSON; a call can be refused with what to do instead;
//! sessions are picked from a list; a completed plan's panel goes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{key, screen};
use axon_protocol::{AgentEvent, Preview, ToolCall, ToolOutput};
use axon_tui::{Action, App, Theme};
use ratatui::crossterm::event::KeyCode;
use serde_json::json;

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments }
}

fn finished(app: &mut App, call: ToolCall, output: ToolOutput) {
    let (call_id, name) = (call.id.clone(), call.name.clone());
    app.on_agent_event(AgentEvent::Action { refused: false, preview: None, call });
    app.on_agent_event(AgentEvent::Observation { call_id, name, output });
}

const DIFF: &str = "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,4 +1,4 @@\n fn main() {\n-    hello();\n+    goodbye();\n     world();\n }\n";

#[test]
fn an_approved_edit_keeps_the_diff_it_was_approved_on() {
    let mut app = App::new(Theme::PLAIN);
    app.turn_started();
    let edit = call(
        "e1",
        "edit_file",
        json!({"path": "src/main.rs", "old_str": "hello();", "new_str": "goodbye();"}),
    );
    let preview = Preview::Diff { path: "src/main.rs".into(), diff: DIFF.into(), created: false };
    app.on_agent_event(AgentEvent::ApprovalRequested { call: edit.clone(), preview, rule: None });
    std::thread::sleep(axon_tui::ANSWER_GUARD + std::time::Duration::from_millis(50));
    assert!(matches!(app.on_key(key(KeyCode::Char('y'))), Some(Action::Approve { .. })));
    finished(&mut app, edit, ToolOutput::text("Edited src/main.rs"));
    let done = screen(&mut app, 70, 12);
    assert!(done.contains("-     hello();"), "the file's line, indented:\n{done}");
    assert!(done.contains("+     goodbye();"), "{done}");
    assert!(!done.contains("- hello();"), "not the bare old_str:\n{done}");
}

#[test]
fn a_failed_command_shows_why_on_its_collapsed_card() {
    let mut app = App::new(Theme::PLAIN);
    app.turn_started();
    let output = ToolOutput::error(
        "exit code: 101 (0.4s)\nstdout:\n(empty)\nstderr:\nerror: no test target named `nope`",
    );
    finished(&mut app, call("c1", "shell", json!({"command": "cargo test nope"})), output);
    let shown = screen(&mut app, 70, 12);
    assert!(shown.contains("error: no test target named `nope`"), "{shown}");
    assert!(!shown.contains("more lines"), "nothing folded away:\n{shown}");
}

#[test]
fn a_submitted_plan_is_shown_as_its_steps() {
    let mut app = App::new(Theme::PLAIN);
    app.turn_started();
    let steps = json!({"steps": [
        {"description": "Read the config loader", "expected_outcome": "know where defaults live"},
        {"description": "Add the timeout setting", "expected_outcome": "it is read from the file"}
    ]});
    finished(&mut app, call("p1", "submit_plan", steps), ToolOutput::text("Plan received."));
    let shown = screen(&mut app, 80, 12);
    assert!(shown.contains("submit_plan 2 steps"), "{shown}");
    assert!(shown.contains("1. Read the config loader"), "{shown}");
    assert!(shown.contains("2. Add the timeout setting"), "{shown}");
    assert!(!shown.contains("\"description\""), "no JSON:\n{shown}");
}

#[test]
fn a_call_is_refused_with_what_to_do_instead() {
    let mut app = App::new(Theme::PLAIN);
    app.turn_started();
    for c in "my draft".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    let write = call("w1", "write_file", json!({"path": "a.txt", "content": "x"}));
    let arguments = write.arguments.clone();
    app.ask_approval(write, Preview::Arguments { arguments }, None);
    let asking = screen(&mut app, 100, 12);
    assert!(asking.contains("[t] deny, telling it what to do instead"), "{asking}");
    std::thread::sleep(axon_tui::ANSWER_GUARD + std::time::Duration::from_millis(50));
    assert_eq!(app.on_key(key(KeyCode::Char('t'))), None);
    let typing = screen(&mut app, 100, 12);
    assert!(typing.contains("Tell axon what to do instead"), "{typing}");
    // Esc goes back to the question; t again, and the reason is typed.
    assert_eq!(app.on_key(key(KeyCode::Esc)), None);
    assert_eq!(app.awaiting_approval(), Some("w1"));
    assert_eq!(app.input.text(), "my draft");
    assert_eq!(app.on_key(key(KeyCode::Char('t'))), None);
    for c in "write b.txt instead".chars() {
        assert_eq!(app.on_key(key(KeyCode::Char(c))), None, "typing does not answer");
    }
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        Some(Action::DenyWithReason { call_id: "w1".into(), reason: "write b.txt instead".into() })
    );
    assert_eq!(app.awaiting_approval(), None);
    assert_eq!(app.input.text(), "my draft", "the user's draft is back");
}

#[test]
fn sessions_are_picked_from_a_list_that_scrolls_to_the_choice() {
    let mut app = App::new(Theme::PLAIN);
    let items: Vec<(String, String)> =
        (1..=12).map(|n| (format!("session-{n:02}"), format!("title {n}"))).collect();
    assert!(app.pick("/resume ", items));
    let shown = screen(&mut app, 60, 10);
    assert!(shown.contains("session-01"), "{shown}");
    for _ in 0..10 {
        app.on_key(key(KeyCode::Down));
    }
    let shown = screen(&mut app, 60, 10);
    assert!(shown.contains("session-11"), "the choice is on screen:\n{shown}");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        Some(Action::Command { name: "resume".into(), argument: "session-11".into() }),
        "Enter resumes the one chosen"
    );
}

#[test]
fn a_completed_plan_s_panel_goes_when_the_next_turn_starts() {
    use axon_protocol::{Plan, PlanStatus, PlanStep, StepStatus};
    let mut app = App::new(Theme::PLAIN);
    let step = PlanStep {
        id: 1,
        description: "Write the notes file".into(),
        expected_outcome: "it exists".into(),
        status: StepStatus::Completed,
        result: None,
    };
    let plan = Plan {
        id: "plan-1".into(),
        goal: "notes".into(),
        steps: vec![step],
        status: PlanStatus::Completed,
        created_at: 0,
        updated_at: 0,
    };
    app.update_plan(plan);
    assert!(screen(&mut app, 60, 12).contains("Write the notes file"));
    for c in "thanks".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    assert!(matches!(app.on_key(key(KeyCode::Enter)), Some(Action::Submit { .. })));
    app.turn_started();
    let shown = screen(&mut app, 60, 12);
    assert!(!shown.contains("Write the notes file"), "the finished plan is gone:\n{shown}");
}

#[test]
fn the_provider_s_models_are_offered_as_a_picker() {
    let mut app = App::new(Theme::PLAIN);
    app.on_agent_event(AgentEvent::Models {
        provider: "openai".into(),
        current: "gpt-4.1".into(),
        models: vec!["gpt-4.1".into(), "gpt-4.1-mini".into(), "o3".into()],
    });
    let shown = screen(&mut app, 70, 14);
    assert!(shown.contains("gpt-4.1-mini") && shown.contains("in use"), "{shown}");
    app.on_key(key(KeyCode::Down));
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        Some(Action::Command { name: "model".into(), argument: "gpt-4.1-mini".into() })
    );
}
