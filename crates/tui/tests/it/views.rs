//! Every view of the UI on ratatui's `TestBackend`, driven by the agent
//! events and keys a real session produces. Snapshots are plain text; the
//! colour tests look at cell styles.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{ctrl, key, screen};
use axon_protocol::{
    AgentEvent, ApprovalMode, ContentPart, McpServerInfo, McpState, Message, Plan, PlanStatus,
    PlanStep, Preview, RuleSuggestion, SandboxInfo, SandboxMode, SessionInfo, SkillInfo,
    SkillState, StepStatus, StopReason, ToolCall, ToolOutput, Usage,
};
use axon_tui::{Action, Answer, App, Level, Mode, PlanDecision, Theme, draw};
use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Color;
use serde_json::json;

fn app() -> App {
    let mut app = App::new(Theme::PLAIN);
    app.status.provider = "deepseek".into();
    app.status.model = "deepseek-chat".into();
    app.status.window = 64_000;
    app.status.tokens = 12_345;
    app.status.session = "20261122-101500-abcd".into();
    app
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        assert_eq!(app.on_key(key(KeyCode::Char(c))), None);
    }
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments }
}

fn stream(app: &mut App, text: &str) {
    for piece in text.as_bytes().chunks(7) {
        let piece = String::from_utf8_lossy(piece).into_owned();
        app.on_agent_event(AgentEvent::Token { text: piece });
    }
}

#[test]
fn a_streamed_markdown_answer() {
    let mut app = app();
    typed(&mut app, "explain main");
    let action = app.on_key(key(KeyCode::Enter));
    assert_eq!(
        action,
        Some(Action::Submit { text: "explain main".into(), mode: Mode::React, images: vec![] })
    );
    app.turn_started();
    stream(
        &mut app,
        "## What it does\n\nIt **parses** the `args` and:\n\n1. reads the config\n2. starts the loop\n\n```rust\nfn main() {\n    run();\n}\n```\n\nSee [the docs](https://docs.rs).",
    );
    app.on_agent_event(AgentEvent::Answer { text: String::new() });
    app.turn_finished(None);
    assert_snapshot!(screen(&mut app, 70, 24));
}

#[test]
fn reasoning_is_collapsed_until_asked_for() {
    let mut app = app();
    app.turn_started();
    app.on_agent_event(AgentEvent::Thought {
        text: "The user wants a list.\nI should read the folder first.".into(),
    });
    stream(&mut app, "Let me look.");
    let collapsed = screen(&mut app, 70, 12);
    assert_eq!(app.on_key(ctrl('t')), None);
    let expanded = screen(&mut app, 70, 12);
    assert_snapshot!(format!("{collapsed}\n{expanded}"));
}

#[test]
fn tool_cards_show_state_output_diffs_and_servers() {
    let mut app = app();
    app.on_agent_event(AgentEvent::McpStatus {
        server: "files".into(),
        state: McpState::Ready,
        message: None,
    });
    app.turn_started();
    let read = call("c1", "read_file", json!({"path": "src/main.rs"}));
    app.on_agent_event(AgentEvent::Action { refused: false, preview: None, call: read });
    let listing = (1..=9).map(|n| format!("{n} | line {n}")).collect::<Vec<_>>().join("\n");
    app.on_agent_event(AgentEvent::Observation {
        call_id: "c1".into(),
        name: "read_file".into(),
        output: ToolOutput::text(listing),
    });
    let edit = call(
        "c2",
        "edit_file",
        json!({"path": "src/lib.rs", "old_str": "let x = 1;\nkeep();", "new_str": "let x = 2;\nkeep();"}),
    );
    app.on_agent_event(AgentEvent::Action { refused: false, preview: None, call: edit });
    app.on_agent_event(AgentEvent::Observation {
        call_id: "c2".into(),
        name: "edit_file".into(),
        output: ToolOutput::text("Edited src/lib.rs"),
    });
    app.on_agent_event(AgentEvent::Action {
        refused: false,
        preview: None,
        call: call("c3", "shell", json!({"command": "cargo test --quiet"})),
    });
    app.on_agent_event(AgentEvent::Observation {
        call_id: "c3".into(),
        name: "shell".into(),
        output: ToolOutput::error("exit status 101\nerror: test failed"),
    });
    app.on_agent_event(AgentEvent::Action {
        refused: false,
        preview: None,
        call: call("c4", "mcp_files_search", json!({"query": "TODO"})),
    });
    let running = screen(&mut app, 70, 30);
    app.on_key(ctrl('o'));
    let expanded = screen(&mut app, 70, 30);
    assert_snapshot!(format!("{running}\n{expanded}"));
}

#[test]
fn an_approval_is_asked_on_the_card_and_answered_with_a_key() {
    let mut app = app();
    app.turn_started();
    let write = call("c9", "write_file", json!({"path": "notes/todo.md", "content": "- a"}));
    let arguments = write.arguments.clone();
    app.ask_approval(write, Preview::Arguments { arguments }, None);
    // A key typed as the question appears does not answer it, and while it
    // waits other keys go nowhere; only y / a / n (or Esc) answer. The first
    // key comes straight after the question (before drawing the screen), so
    // a busy machine cannot push it past the guard.
    assert_eq!(app.on_key(key(KeyCode::Char('a'))), None);
    let asking = screen(&mut app, 70, 10);
    std::thread::sleep(axon_tui::ANSWER_GUARD + std::time::Duration::from_millis(50));
    assert_eq!(app.on_key(key(KeyCode::Char('x'))), None);
    assert!(app.input.is_empty());
    assert_eq!(
        app.on_key(key(KeyCode::Char('a'))),
        Some(Action::Approve { call_id: "c9".into(), answer: Answer::Session })
    );
    // The agent announces the call once it may run: still one card.
    app.on_agent_event(AgentEvent::Action {
        refused: false,
        preview: None,
        call: call("c9", "write_file", json!({"path": "notes/todo.md"})),
    });
    app.on_agent_event(AgentEvent::Observation {
        call_id: "c9".into(),
        name: "write_file".into(),
        output: ToolOutput::text("Wrote notes/todo.md (1 line)"),
    });
    let answered = screen(&mut app, 70, 10);
    assert_snapshot!(format!("{asking}\n{answered}"));
}

fn plan() -> Plan {
    let step = |id: u32, description: &str, status| PlanStep {
        id,
        description: description.into(),
        expected_outcome: "done".into(),
        status,
        result: None,
    };
    Plan {
        id: "p1".into(),
        goal: "Add a --verbose flag".into(),
        steps: vec![
            step(1, "Find where flags are parsed", StepStatus::Completed),
            step(2, "Add the flag and thread it through", StepStatus::Running),
            step(3, "Document it in the README", StepStatus::Pending),
        ],
        status: PlanStatus::Draft,
        created_at: 0,
        updated_at: 0,
    }
}

#[test]
fn the_plan_panel_waits_for_a_decision_then_follows_the_steps() {
    let mut app = app();
    app.on_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(app.mode, Mode::Plan);
    let mut proposed = plan();
    for step in &mut proposed.steps {
        step.status = StepStatus::Pending;
    }
    app.propose_plan(proposed);
    let waiting = screen(&mut app, 70, 14);
    assert_eq!(app.on_key(key(KeyCode::Char('a'))), Some(Action::Plan(PlanDecision::Approve)));
    let mut running = plan();
    running.status = PlanStatus::Executing;
    app.update_plan(running);
    let executing = screen(&mut app, 70, 14);
    assert_snapshot!(format!("{waiting}\n{executing}"));
}

#[test]
fn the_input_edits_several_lines_and_completes_commands_and_files() {
    let mut app = app();
    app.files = vec!["src/main.rs".into(), "src/lib.rs".into(), "README.md".into()];
    typed(&mut app, "first line");
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    typed(&mut app, "look at @ma");
    let mention = screen(&mut app, 60, 12);
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.input.text(), "first line\nlook at @src/main.rs ");
    for _ in 0..40 {
        app.on_key(key(KeyCode::Backspace));
    }
    typed(&mut app, "/s");
    let commands = screen(&mut app, 60, 12);
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.input.text(), "/skills ");
    assert_snapshot!(format!("{mention}\n{commands}"));
}

#[test]
fn history_paste_and_slash_commands() {
    let mut app = app();
    typed(&mut app, "hello");
    app.on_key(key(KeyCode::Enter));
    app.on_paste("pasted\r\ntext");
    assert_eq!(app.input.text(), "pasted\ntext");
    app.on_key(ctrl('u'));
    app.on_key(key(KeyCode::Up));
    app.on_key(key(KeyCode::Up));
    assert_eq!(app.input.text(), "hello");
    app.on_key(ctrl('c'));
    assert!(app.input.is_empty());
    typed(&mut app, "/model deepseek-reasoner");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        Some(Action::Command { name: "model".into(), argument: "deepseek-reasoner".into() })
    );
    typed(&mut app, "/nope");
    assert_eq!(app.on_key(key(KeyCode::Enter)), None);
    assert_eq!(app.hint.as_deref(), Some("Unknown command /nope; /help lists them"));
    app.input.clear();
    typed(&mut app, "/help");
    assert_eq!(app.on_key(key(KeyCode::Enter)), None);
    typed(&mut app, "/quit");
    assert_eq!(app.on_key(key(KeyCode::Enter)), Some(Action::Quit));
    assert_snapshot!(screen(&mut app, 100, 24));
}

#[test]
fn esc_stops_a_turn_and_keeps_the_partial_answer() {
    let mut app = app();
    app.turn_started();
    stream(&mut app, "The first half of an ans");
    let working = screen(&mut app, 60, 8);
    assert_eq!(app.on_key(key(KeyCode::Esc)), Some(Action::Cancel));
    app.turn_finished(Some((Level::Warning, "Stopped. What was written so far is kept.".into())));
    let stopped = screen(&mut app, 60, 8);
    assert_snapshot!(format!("{working}\n{stopped}"));
}

#[test]
fn ctrl_c_twice_quits_and_once_cancels_a_running_turn() {
    let mut app = app();
    app.turn_started();
    assert_eq!(app.on_key(ctrl('c')), Some(Action::Cancel));
    assert_eq!(app.hint.as_deref(), Some("Press Ctrl-C again to quit"));
    assert_eq!(app.on_key(ctrl('c')), Some(Action::Quit));
}

#[test]
fn the_status_line_counts_servers_and_gives_way_on_narrow_screens() {
    let mut app = app();
    for (server, state) in
        [("files", McpState::Ready), ("git", McpState::Ready), ("web", McpState::Error)]
    {
        let message = (state == McpState::Error).then(|| "spawn failed: no such file".to_string());
        app.on_agent_event(AgentEvent::McpStatus { server: server.into(), state, message });
    }
    app.on_agent_event(AgentEvent::Usage {
        usage: Usage { input_tokens: 30_000, output_tokens: 2_000, ..Usage::default() },
        model: None,
    });
    let wide = screen(&mut app, 110, 6);
    let narrow = screen(&mut app, 60, 6);
    typed(&mut app, "/mcp");
    app.on_key(key(KeyCode::Enter));
    let listed = screen(&mut app, 60, 12);
    assert_snapshot!(format!("{wide}\n{narrow}\n{listed}"));
}

#[test]
fn a_resumed_session_shows_its_conversation() {
    let mut app = app();
    let calls = vec![call("c1", "list_dir", json!({"path": "."}))];
    let history = vec![
        Message::system("rules"),
        Message::user("what is here?"),
        Message { tool_calls: calls, ..Message::assistant("") },
        Message::tool_result("c1", ToolOutput::text("src/\nREADME.md")),
        Message::assistant("A `src` folder and a README."),
        Message { content: vec![ContentPart::text("and now?")], ..Message::user("") },
    ];
    app.load_history(&history);
    assert_snapshot!(screen(&mut app, 60, 14));
}

/// A transcript of at least `lines` lines at 80 columns.
fn long_session(app: &mut App, lines: usize) {
    let mut n = 0;
    while app.transcript.line_count(80) < lines {
        n += 1;
        app.transcript.push(axon_tui::Entry::User(format!("question {n}")));
        app.transcript.push(axon_tui::Entry::Assistant {
            text: format!("Answer {n}:\n\n- point one\n- point two\n\n```sh\necho {n}\n```"),
            streaming: false,
        });
    }
}

#[test]
fn a_long_session_scrolls_and_stays_put_while_more_arrives() {
    let mut app = app();
    long_session(&mut app, 5_000);
    let bottom = screen(&mut app, 80, 20);
    assert!(bottom.contains("echo"), "{bottom}");
    app.turn_started();
    app.on_key(key(KeyCode::PageUp));
    app.on_key(key(KeyCode::PageUp));
    let scrolled = screen(&mut app, 80, 20);
    stream(&mut app, "new text\n\nmore\n\nand more");
    // The same lines stay on screen; only the count of lines below grows.
    let top = |screen: &str| screen.lines().take(15).collect::<Vec<_>>().join("\n");
    assert_eq!(top(&screen(&mut app, 80, 20)), top(&scrolled), "a scrolled view moved");
    assert_eq!(app.on_key(key(KeyCode::Esc)), Some(Action::Cancel));
    app.turn_finished(None);
    app.on_key(key(KeyCode::Esc));
    let back = screen(&mut app, 80, 20);
    assert!(back.contains("and more"), "{back}");
    assert_snapshot!(scrolled);
}

#[test]
fn a_resize_rewraps_everything() {
    let mut app = app();
    stream(
        &mut app,
        "A sentence long enough that it needs two lines at sixty columns but one at a hundred.",
    );
    let wide = screen(&mut app, 100, 6);
    let narrow = screen(&mut app, 60, 6);
    assert_snapshot!(format!("{wide}\n{narrow}"));
}

fn colours(app: &mut App) -> usize {
    let mut terminal = Terminal::new(TestBackend::new(70, 20)).unwrap();
    terminal.draw(|frame| draw(frame, app)).unwrap();
    terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .filter(|cell| cell.fg != Color::Reset || cell.bg != Color::Reset)
        .count()
}

fn coloured_session(theme: Theme) -> App {
    let mut app = App::new(theme);
    app.turn_started();
    stream(&mut app, "Run this:\n\n```rust\nfn main() { println!(\"hi\"); }\n```");
    app.on_agent_event(AgentEvent::Action {
        refused: false,
        preview: None,
        call: call("c1", "shell", json!({"command": "false"})),
    });
    app.on_agent_event(AgentEvent::Observation {
        call_id: "c1".into(),
        name: "shell".into(),
        output: ToolOutput::error("exit status 1"),
    });
    let diff = "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-old\n+new\n".to_string();
    app.ask_approval(
        call("c2", "write_file", json!({"path": "a"})),
        Preview::Diff { path: "a".into(), diff, created: false },
        None,
    );
    app
}

#[test]
fn no_color_means_no_colour_anywhere() {
    assert!(colours(&mut coloured_session(Theme::COLOR)) > 0, "the colour theme shows colour");
    assert_eq!(colours(&mut coloured_session(Theme::PLAIN)), 0);
}

#[test]
fn a_call_id_used_again_by_a_later_model_call_gets_its_own_card() {
    let mut app = app();
    app.turn_started();
    let read = call("block_1", "read_file", json!({"path": "a.md"}));
    app.on_agent_event(AgentEvent::Action { refused: false, preview: None, call: read });
    app.on_agent_event(AgentEvent::Observation {
        call_id: "block_1".into(),
        name: "read_file".into(),
        output: ToolOutput::text("alpha"),
    });
    let preview =
        Preview::Command { command: "rm -rf build".into(), workdir: ".".into(), sandbox: None };
    app.ask_approval(call("block_1", "shell", json!({"command": "rm -rf build"})), preview, None);
    let screen = screen(&mut app, 60, 16);
    assert!(screen.contains("✓ read_file a.md"), "{screen}");
    assert!(screen.contains("? shell") && screen.contains("⎿ $ rm -rf build"), "{screen}");
    assert!(screen.contains("Allow shell?"), "{screen}");
}

#[test]
fn a_restarted_turn_drops_what_the_broken_attempt_streamed() {
    let mut app = app();
    typed(&mut app, "go");
    app.on_key(key(KeyCode::Enter));
    app.turn_started();
    app.on_agent_event(AgentEvent::Thought { text: "thinking about it".into() });
    stream(&mut app, "half an ans");
    app.on_agent_event(AgentEvent::TurnRestarted { reason: "the stream broke off".into() });
    let screen = screen(&mut app, 60, 10);
    assert!(!screen.contains("half an ans") && !screen.contains("Thought"), "{screen}");
    assert!(screen.contains("› go") && screen.contains("the stream broke off"), "{screen}");
}

#[test]
fn odd_spaces_and_tabs_in_the_input_are_safe() {
    let mut app = app();
    app.files = vec!["src/main.rs".into()];
    app.on_paste("a\u{a0}@ma\u{3000}x\tb");
    typed(&mut app, " @ma");
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.input.text(), "a\u{a0}@ma\u{3000}x\tb @src/main.rs ");
    let screen = screen(&mut app, 60, 6);
    assert!(screen.contains("x    b"), "{screen}");
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    app.on_key(ctrl('w'));
    assert!(app.input.text().ends_with("@src/main.rs "), "{:?}", app.input.text());
}

#[test]
fn commands_that_need_the_agent_wait_for_the_turn() {
    let mut app = app();
    app.turn_started();
    typed(&mut app, "/sessions");
    assert_eq!(app.on_key(key(KeyCode::Enter)), None);
    assert_eq!(app.input.text(), "/sessions");
    assert_eq!(
        app.hint.as_deref(),
        Some(
            "The turn is still running: press Enter again after it ends to run /sessions (Esc stops the turn)"
        )
    );
    assert_eq!(app.on_key(key(KeyCode::Esc)), Some(Action::Cancel));
}

/// An edit of two hunks: 14 lines under the file header.
const CONFIG_DIFF: &str = "--- a/src/config.rs
+++ b/src/config.rs
@@ -10,7 +10,8 @@ pub struct Config {
     pub name: String,
     pub port: u16,
-    pub verbose: bool,
+    pub verbose: u8,
+    pub quiet: bool,
     pub root: PathBuf,
 }
 
@@ -40,3 +41,3 @@ impl Config {
     fn default_port() -> u16 {
-        8080
+        8443
     }
";

fn asked(app: &mut App, call: ToolCall, preview: Preview) {
    app.on_agent_event(AgentEvent::ApprovalRequested { call, preview, rule: None });
}

/// The cell colours of the first screen row whose text starts with `start`.
fn row_colour(app: &mut App, start: &str) -> Color {
    let mut terminal = Terminal::new(TestBackend::new(70, 30)).unwrap();
    terminal.draw(|frame| draw(frame, app)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    (0..buffer.area.height)
        .find_map(|y| {
            let cells: Vec<_> = (0..buffer.area.width).map(|x| &buffer[(x, y)]).collect();
            let text: String = cells.iter().map(|c| c.symbol()).collect();
            let at = text.trim_start_matches([' ', '⎿']).to_string();
            at.starts_with(start).then(|| {
                let column = text.chars().count() - at.chars().count();
                cells[column].fg
            })
        })
        .unwrap_or_else(|| panic!("no row starts with {start:?}"))
}

#[test]
fn an_edit_waiting_for_approval_shows_its_diff_before_the_answer() {
    let mut app = app();
    typed(&mut app, "make verbose a level");
    app.on_key(key(KeyCode::Enter));
    app.turn_started();
    let edit = call(
        "e1",
        "edit_file",
        json!({"path": "src/config.rs", "old_str": "pub verbose: bool,", "new_str": "pub verbose: u8,"}),
    );
    let preview =
        Preview::Diff { path: "src/config.rs".into(), diff: CONFIG_DIFF.into(), created: false };
    asked(&mut app, edit.clone(), preview);
    assert_eq!(app.awaiting_approval(), Some("e1"));
    let asking = screen(&mut app, 70, 24);
    // Ctrl-O works while the question waits, and does not answer it.
    assert_eq!(app.on_key(ctrl('o')), None);
    let expanded = screen(&mut app, 70, 24);
    assert_ne!(asking, expanded, "Ctrl-O shows the whole diff");
    assert_eq!(app.on_key(ctrl('o')), None);
    assert_eq!(app.awaiting_approval(), Some("e1"));
    std::thread::sleep(axon_tui::ANSWER_GUARD + std::time::Duration::from_millis(50));
    assert_eq!(
        app.on_key(key(KeyCode::Char('y'))),
        Some(Action::Approve { call_id: "e1".into(), answer: Answer::Once })
    );
    app.on_agent_event(AgentEvent::Action { refused: false, preview: None, call: edit });
    app.on_agent_event(AgentEvent::Observation {
        call_id: "e1".into(),
        name: "edit_file".into(),
        output: ToolOutput::text("Edited src/config.rs"),
    });
    // Once it ran, the card keeps the change it made, collapsed.
    let done = screen(&mut app, 70, 12);
    assert_snapshot!(format!("{asking}\n{expanded}\n{done}"));
}

#[test]
fn a_previewed_diff_is_red_and_green() {
    let mut app = App::new(Theme::COLOR);
    app.turn_started();
    let preview =
        Preview::Diff { path: "src/config.rs".into(), diff: CONFIG_DIFF.into(), created: false };
    asked(&mut app, call("e1", "edit_file", json!({"path": "src/config.rs"})), preview);
    assert_eq!(row_colour(&mut app, "-     pub verbose: bool,"), Color::Red);
    assert_eq!(row_colour(&mut app, "+     pub verbose: u8,"), Color::Green);
    assert_eq!(row_colour(&mut app, "Allow edit_file?"), Color::Black, "the question stands out");
}

#[test]
fn a_new_file_and_an_unchanged_one_say_so() {
    let mut app = app();
    app.turn_started();
    let diff = "--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1,2 @@\n+# Notes\n+- one\n".to_string();
    let created = Preview::Diff { path: "notes.md".into(), diff, created: true };
    asked(&mut app, call("w1", "write_file", json!({"path": "notes.md"})), created);
    let same = Preview::Diff { path: "a.md".into(), diff: String::new(), created: false };
    asked(&mut app, call("w2", "write_file", json!({"path": "a.md"})), same);
    let screen = screen(&mut app, 70, 16);
    assert!(screen.contains("? write_file notes.md  (new file)"), "{screen}");
    assert!(screen.contains("⎿ + # Notes") && screen.contains("    + - one"), "{screen}");
    assert!(!screen.contains("/dev/null") && !screen.contains("@@"), "{screen}");
    assert!(screen.contains("⎿ (no change)"), "{screen}");
}

#[test]
fn a_command_or_a_call_that_would_fail_waits_with_what_it_would_do() {
    let mut app = app();
    app.turn_started();
    let shell = call("s1", "shell", json!({"command": "cargo build --release && ls target"}));
    let preview = Preview::Command {
        command: "cargo build --release && ls target".into(),
        workdir: "crates/cli".into(),
        sandbox: None,
    };
    app.on_agent_event(AgentEvent::ApprovalRequested {
        call: shell,
        preview,
        rule: Some(RuleSuggestion {
            rules: vec!["shell(cargo build:*)".into(), "shell(ls:*)".into()],
            description: "allow `cargo build` and `ls` commands in this workspace".into(),
        }),
    });
    let broken = call("e2", "edit_file", json!({"path": "src/x.rs", "old_str": "fn y()"}));
    let invalid = Preview::Invalid { message: "old_str was not found in src/x.rs".into() };
    asked(&mut app, broken, invalid);
    assert_eq!(app.awaiting_approval(), Some("s1"), "the first asked is answered first");
    assert_snapshot!(screen(&mut app, 70, 17));
}

#[test]
fn an_mcp_call_waiting_for_approval_shows_server_tool_and_arguments() {
    let mut app = app();
    app.turn_started();
    // The server's name has an underscore: only the preview can tell
    // `git_hub` + `create_issue` from `git` + `hub_create_issue`.
    let arguments = json!({
        "repo": "axon/axon",
        "title": "Crash on resume",
        "labels": ["bug", "p1"],
        "body": "Resuming a session whose last call had no result panics in the loader; it should mark the call as failed and go on.",
    });
    let mcp = call("m1", "mcp_git_hub_create_issue", arguments.clone());
    let preview = Preview::Mcp { server: "git_hub".into(), tool: "create_issue".into(), arguments };
    asked(&mut app, mcp, preview);
    let collapsed = screen(&mut app, 70, 12);
    assert_eq!(app.on_key(ctrl('o')), None);
    let expanded = screen(&mut app, 70, 14);
    assert_snapshot!(format!("{collapsed}\n{expanded}"));
}

#[test]
fn a_turn_cancelled_by_the_session_keeps_its_partial_answer() {
    let mut app = app();
    // A turn the front end did not start itself: the event marks it.
    app.on_agent_event(AgentEvent::TurnStarted { turn: 3 });
    assert!(app.is_busy());
    app.on_agent_event(AgentEvent::Action {
        refused: false,
        preview: None,
        call: call("c1", "shell", json!({"command": "sleep 100"})),
    });
    stream(&mut app, "While that runs: the first half of an ans");
    let working = screen(&mut app, 60, 12);
    assert_eq!(app.on_key(key(KeyCode::Esc)), Some(Action::Cancel));
    app.on_agent_event(AgentEvent::TurnCompleted {
        turn: 3,
        stop_reason: StopReason::Cancelled,
        usage: Usage::default(),
        context_tokens: 20_500,
        cost_usd: None,
        session_usage: Usage::default(),
        session_cost_usd: None,
    });
    assert!(!app.is_busy());
    let stopped = screen(&mut app, 60, 12);
    assert_snapshot!(format!("{working}\n{stopped}"));
}

#[test]
fn a_turn_that_ends_normally_leaves_no_note() {
    let mut app = app();
    app.turn_started();
    stream(&mut app, "Done.");
    app.on_agent_event(AgentEvent::TurnCompleted {
        turn: 1,
        stop_reason: StopReason::EndTurn,
        usage: Usage::default(),
        context_tokens: 900,
        cost_usd: None,
        session_usage: Usage::default(),
        session_cost_usd: None,
    });
    assert!(!app.is_busy());
    assert_eq!(app.status.tokens, 900);
    assert!(!app.transcript.entries().any(|e| matches!(e, axon_tui::Entry::Notice { .. })));
}

#[test]
fn the_status_line_shows_the_sessions_cost_as_the_runtime_counts_it() {
    let mut app = app();
    // A resumed session: its earlier runs' spending comes with it.
    let mut resumed = session(Some("s1"));
    resumed.usage = Usage { input_tokens: 5_000, output_tokens: 400, ..Usage::default() };
    resumed.cost_usd = Some(0.0456);
    app.on_agent_event(AgentEvent::SessionStarted { session: resumed });
    assert!(screen(&mut app, 120, 6).contains("$0.0456"), "{}", screen(&mut app, 120, 6));
    let used = Usage { input_tokens: 1_000, output_tokens: 100, ..Usage::default() };
    app.turn_started();
    app.on_agent_event(AgentEvent::TurnCompleted {
        turn: 1,
        stop_reason: StopReason::EndTurn,
        usage: used,
        context_tokens: 900,
        cost_usd: Some(0.01),
        session_usage: Usage { input_tokens: 6_000, output_tokens: 500, ..Usage::default() },
        session_cost_usd: Some(0.0556),
    });
    assert!(screen(&mut app, 120, 6).contains("$0.0556"), "{}", screen(&mut app, 120, 6));
    app.turn_started();
    app.on_agent_event(AgentEvent::TurnCompleted {
        turn: 2,
        stop_reason: StopReason::EndTurn,
        usage: used,
        context_tokens: 900,
        cost_usd: None,
        session_usage: Usage { input_tokens: 7_000, output_tokens: 600, ..Usage::default() },
        session_cost_usd: None,
    });
    assert!(!screen(&mut app, 120, 6).contains('$'), "an unpriced call makes the total unknown");
}

#[test]
fn turn_started_after_the_front_end_started_the_turn_keeps_its_cards() {
    let mut app = app();
    typed(&mut app, "clean up");
    app.on_key(key(KeyCode::Enter));
    app.turn_started();
    let shell = call("c1", "shell", json!({"command": "rm -rf build"}));
    let preview = Preview::Command {
        command: "rm -rf build".into(),
        workdir: ".".into(),
        sandbox: Some("workspace-write, network off".into()),
    };
    asked(&mut app, shell.clone(), preview);
    // The session's own announcement arrives after the card.
    app.on_agent_event(AgentEvent::TurnStarted { turn: 1 });
    std::thread::sleep(axon_tui::ANSWER_GUARD + std::time::Duration::from_millis(50));
    assert_eq!(
        app.on_key(key(KeyCode::Char('y'))),
        Some(Action::Approve { call_id: "c1".into(), answer: Answer::Once })
    );
    app.on_agent_event(AgentEvent::Action { refused: false, preview: None, call: shell });
    let cards = app.transcript.entries().filter(|e| matches!(e, axon_tui::Entry::Tool(_))).count();
    assert_eq!(cards, 1, "the call announced after approval is the same card");
}

fn session(id: Option<&str>) -> SessionInfo {
    SessionInfo {
        session_id: id.map(str::to_string),
        workspace: "/home/me/axon".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        context_window: 200_000,
        mode: Mode::Plan,
        approval: ApprovalMode::Ask,
        tools: vec!["read_file".into(), "mcp_files_search".into()],
        mcp_servers: vec![
            McpServerInfo { name: "files".into(), state: McpState::Ready, message: None },
            McpServerInfo {
                name: "web".into(),
                state: McpState::Error,
                message: Some("spawn failed: no such file".into()),
            },
        ],
        rules: vec!["1. Be brief.".into()],
        skills: vec![SkillInfo {
            name: "release".into(),
            state: SkillState::Listed,
            source: ".axon/skills/release.md".into(),
            description: "Cut a release".into(),
        }],
        context_tokens: 3_200,
        sandbox: Some(SandboxInfo {
            mode: SandboxMode::WorkspaceWrite,
            network: false,
            enforced: true,
            detail: "Landlock and seccomp".into(),
        }),
        usage: Usage::default(),
        cost_usd: None,
    }
}

#[test]
fn session_started_fills_the_status_line() {
    let mut app = App::new(Theme::PLAIN);
    app.on_agent_event(AgentEvent::header("axon test"));
    app.on_agent_event(AgentEvent::SessionStarted { session: session(None) });
    assert_eq!(app.info, Some(session(None)));
    // The mode switch stays the user's: a session's mode does not flip it.
    assert_eq!(app.mode, Mode::React);
    let opened = screen(&mut app, 120, 6);
    app.on_agent_event(AgentEvent::SessionSaved { session_id: "20261122-101500-abcd".into() });
    app.on_agent_event(AgentEvent::ModelChanged {
        provider: "anthropic".into(),
        model: "claude-opus-4-1".into(),
        context_window: 200_000,
    });
    app.on_agent_event(AgentEvent::notice(axon_protocol::Level::Info, "Now talking to opus."));
    app.on_agent_event(AgentEvent::Custom { name: "later".into(), data: json!({}) });
    let info = app.info.as_ref().unwrap();
    assert_eq!(info.session_id.as_deref(), Some("20261122-101500-abcd"));
    assert_eq!(info.model, "claude-opus-4-1");
    let saved = screen(&mut app, 120, 8);
    // A replaced conversation: a new session, and the failure is not told twice.
    app.on_agent_event(AgentEvent::SessionStarted { session: session(None) });
    let replaced = screen(&mut app, 120, 8);
    assert_eq!(replaced.matches("MCP server web failed").count(), 1, "{replaced}");
    assert_snapshot!(format!("{opened}\n{saved}\n{replaced}"));
}

#[test]
fn history_replaces_the_conversation_and_its_plan() {
    let mut app = app();
    app.propose_plan(plan());
    app.on_agent_event(AgentEvent::History {
        messages: vec![Message::user("earlier question"), Message::assistant("earlier answer")],
    });
    assert!(app.plan.is_none());
    let screen = screen(&mut app, 60, 10);
    assert!(screen.contains("› earlier question") && screen.contains("earlier answer"), "{screen}");
}

#[test]
fn protocol_levels_become_notice_levels() {
    assert_eq!(Level::from(axon_protocol::Level::Info), Level::Info);
    assert_eq!(Level::from(axon_protocol::Level::Warning), Level::Warning);
    assert_eq!(Level::from(axon_protocol::Level::Error), Level::Error);
}

#[test]
fn an_attached_image_is_a_chip_that_goes_with_the_prompt_or_comes_off() {
    let mut app = app();
    let image = |data: &str| axon_protocol::Attachment::Image {
        media_type: "image/png".into(),
        data: data.into(),
    };
    // Ctrl+V asks the front end for the clipboard's image.
    assert_eq!(app.on_key(ctrl('v')), Some(Action::PasteImage));
    assert!(app.takes_attachments());
    app.attach_image("shot.png".into(), image("AAAA"));
    app.attach_image("clipboard image".into(), image("BBBB"));
    let shown = screen(&mut app, 80, 8);
    assert!(shown.contains("[image shot.png] [image clipboard image]"), "{shown}");
    // Backspace on the empty input takes the last one off, and then
    // edits the text as usual once something is typed.
    app.on_key(key(KeyCode::Backspace));
    let shown = screen(&mut app, 80, 8);
    assert!(shown.contains("[image shot.png]") && !shown.contains("clipboard image"), "{shown}");
    typed(&mut app, "what is this?x");
    app.on_key(key(KeyCode::Backspace));
    assert_eq!(app.images.len(), 1, "a typed character was deleted, not the image");
    let action = app.on_key(key(KeyCode::Enter));
    assert_eq!(
        action,
        Some(Action::Submit {
            text: "what is this?".into(),
            mode: Mode::React,
            images: vec![image("AAAA")]
        })
    );
    assert!(app.images.is_empty());
    let shown = screen(&mut app, 80, 8);
    assert!(!shown.contains("[image"), "{shown}");
    assert!(shown.contains("attached: shot.png"), "{shown}");
}
