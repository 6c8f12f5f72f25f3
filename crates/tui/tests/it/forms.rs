//! What MCP servers ask of the user and tell about their calls, as the UI
//! shows it on `TestBackend`: a running tool's progress on its card, and a
//! server's form (`elicitation`) filled in with keys and answered.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{key, screen};
use axon_protocol::{AgentEvent, ElicitAction, ToolCall};
use axon_tui::{Action, App, Theme};
use insta::assert_snapshot;
use ratatui::crossterm::event::KeyCode;
use serde_json::json;

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        assert_eq!(app.on_key(key(KeyCode::Char(c))), None);
    }
}

/// Past the guard that keeps keys typed as a question appears from answering it.
fn after_guard() {
    std::thread::sleep(axon_tui::ANSWER_GUARD + std::time::Duration::from_millis(50));
}

#[test]
fn a_running_tool_shows_its_latest_progress() {
    // Not busy: the working line's clock would make the screen vary.
    let mut app = App::new(Theme::PLAIN);
    let call = ToolCall {
        id: "c1".into(),
        name: "mcp_fx_index".into(),
        arguments: json!({"path": "src"}),
    };
    app.on_agent_event(AgentEvent::Action { call, refused: false, preview: None });
    app.on_agent_event(AgentEvent::ToolProgress {
        call_id: "c1".into(),
        message: Some("warming up".into()),
        progress: 1.0,
        total: Some(4.0),
    });
    app.on_agent_event(AgentEvent::ToolProgress {
        call_id: "c1".into(),
        message: Some("indexing".into()),
        progress: 2.0,
        total: Some(4.0),
    });
    let percent = screen(&mut app, 60, 7);
    assert!(percent.contains("indexing · 50%"), "{percent}");
    assert!(!percent.contains("warming up"), "{percent}");
    app.on_agent_event(AgentEvent::ToolProgress {
        call_id: "c1".into(),
        message: None,
        progress: 7.0,
        total: None,
    });
    let count = screen(&mut app, 60, 7);
    assert_snapshot!(format!("{percent}\n{count}"));
}

fn form_event() -> AgentEvent {
    AgentEvent::Elicitation {
        id: "form-1".into(),
        server: "tickets".into(),
        message: "Open a ticket".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "description": "What is wrong"},
                "count": {"type": "integer", "title": "How many times"},
                "urgent": {"type": "boolean", "default": false},
                "project": {"type": "string", "enum": ["web", "api"], "default": "web"}
            },
            "required": ["title", "count"]
        }),
    }
}

#[test]
fn a_form_is_filled_in_checked_and_submitted() {
    let mut app = App::new(Theme::PLAIN);
    app.on_agent_event(form_event());
    // Keys typed as the form appears do not go into it.
    assert_eq!(app.on_key(key(KeyCode::Char('z'))), None);
    after_guard();
    let empty = screen(&mut app, 64, 14);
    // A required field left empty is refused, with the reason on screen.
    assert_eq!(app.on_key(key(KeyCode::Enter)), None);
    let refused = screen(&mut app, 64, 14);
    assert!(refused.contains("title is required"), "{refused}");
    typed(&mut app, "Login");
    app.on_paste(" fails\nand more");
    assert_eq!(app.on_key(key(KeyCode::Tab)), None);
    typed(&mut app, "x");
    assert_eq!(app.on_key(key(KeyCode::Enter)), None);
    let wrong = screen(&mut app, 64, 14);
    assert!(wrong.contains("count must be a whole number"), "{wrong}");
    assert_eq!(app.on_key(key(KeyCode::Backspace)), None);
    typed(&mut app, "3");
    assert_eq!(app.on_key(key(KeyCode::Tab)), None);
    assert_eq!(app.on_key(key(KeyCode::Char(' '))), None);
    assert_eq!(app.on_key(key(KeyCode::Tab)), None);
    assert_eq!(app.on_key(key(KeyCode::Right)), None);
    // Shift-Tab goes back; the title is still as typed.
    assert_eq!(app.on_key(key(KeyCode::BackTab)), None);
    let filled = screen(&mut app, 64, 14);
    assert_snapshot!(format!("{empty}\n{refused}\n{filled}"));
    let answer = app.on_key(key(KeyCode::Enter));
    let content = json!({"title": "Login fails", "count": 3, "urgent": true, "project": "api"});
    assert_eq!(
        answer,
        Some(Action::Elicit {
            id: "form-1".into(),
            action: ElicitAction::Accept,
            content: content.as_object().cloned(),
        })
    );
    // Answered, the form is gone and keys go to the input again.
    assert!(app.forms.is_empty());
    typed(&mut app, "hi");
    assert_eq!(app.input.text(), "hi");
}

#[test]
fn escape_declines_a_form_and_a_finished_turn_drops_the_rest() {
    let mut app = App::new(Theme::PLAIN);
    app.turn_started();
    app.on_agent_event(form_event());
    app.on_agent_event(form_event());
    after_guard();
    assert_eq!(
        app.on_key(key(KeyCode::Esc)),
        Some(Action::Elicit { id: "form-1".into(), action: ElicitAction::Decline, content: None })
    );
    assert_eq!(app.forms.len(), 1);
    app.turn_finished(None);
    assert!(app.forms.is_empty());
}
