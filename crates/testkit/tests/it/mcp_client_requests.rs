//! A session's MCP client against a real MCP server (the `mcp-fixture-server`
//! binary, over streamable HTTP) and a scripted model: a tool's progress
//! arrives as `tool_progress` events with its message and percentage; a
//! cancelled turn tells the server (`notifications/cancelled`), which it
//! counts; a server's sampling request is answered by the session's model
//! after approval, and refused when denied; a form (`elicitation`) is
//! answered by the front end and the server gets the submitted values.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use axon_protocol::{AgentEvent, ApprovalDecision, ElicitAction, Op, Preview, StopReason};
use axon_runtime::config::{Dirs, Effective};
use axon_runtime::{Events, Session, SessionConfig};
use axon_testkit::{Reply, ScriptedServer};
use axon_tools::Workspace;
use serde_json::json;

/// Kills the fixture server however the test ends.
struct Fixture {
    child: Child,
    url: String,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn fixture() -> Fixture {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-fixture-server"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let url = first.trim().strip_prefix("listening on ").expect(&first).to_string();
    Fixture { child, url }
}

struct Rig {
    model: ScriptedServer,
    workspace: tempfile::TempDir,
    home: tempfile::TempDir,
    _fixture: Fixture,
}

impl Rig {
    async fn new(script: Vec<Reply>) -> Rig {
        let fixture = fixture();
        let model = ScriptedServer::start(script).await.unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let config = format!(
            "provider = \"scripted\"\n[providers.scripted]\nkind = \"openai\"\nbase_url = \"{}\"\n\
             model = \"scripted\"\napi_key = \"test-key\"\ncontext_window = 100000\n\
             [mcp_servers.fx]\nurl = \"{}\"\n",
            model.openai_base(),
            fixture.url
        );
        std::fs::write(home.path().join("config.toml"), config).unwrap();
        Rig { model, workspace, home, _fixture: fixture }
    }

    async fn open(&self, forms: bool) -> (Session, Events) {
        self.open_with(forms, true, None).await
    }

    async fn open_with(
        &self,
        forms: bool,
        interactive: bool,
        approval: Option<axon_core::ApprovalPolicy>,
    ) -> (Session, Events) {
        let dirs = Dirs {
            config_file: self.home.path().join("config.toml"),
            data: self.home.path().join("data"),
            cache: self.home.path().join("cache"),
        };
        let workspace = Workspace::new(self.workspace.path()).unwrap();
        let effective = Effective::load(&dirs, workspace.root()).unwrap();
        let mut config = SessionConfig::new(workspace, dirs, effective);
        config.interactive = interactive;
        config.elicitation = forms;
        config.approval = approval;
        let (emitter, events) = axon_runtime::channel();
        let session = axon_runtime::open(config, emitter).await.unwrap();
        (session, events)
    }
}

/// Events until `turn_completed` (included), each first shown to `answer`.
async fn until_turn_end(
    session: &Session,
    events: &mut Events,
    mut answer: impl FnMut(&AgentEvent) -> Option<Op>,
) -> Vec<AgentEvent> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(120), events.recv())
            .await
            .expect("the turn ends")
            .expect("the session is open");
        if let Some(op) = answer(&event) {
            session.submit(op);
        }
        let done = matches!(event, AgentEvent::TurnCompleted { .. });
        seen.push(event);
        if done {
            return seen;
        }
    }
}

/// A prompt that names the server, so the turn waits for it to be ready
/// (servers start in the background).
fn user(text: &str) -> Op {
    Op::UserTurn { text: format!("fx: {text}"), attachments: Vec::new() }
}

/// Allows the MCP tool call itself; sampling as `sampling` says.
fn approve(event: &AgentEvent, sampling: &ApprovalDecision) -> Option<Op> {
    let AgentEvent::ApprovalRequested { call, preview, .. } = event else { return None };
    let decision = match preview {
        Preview::Sampling { .. } => sampling.clone(),
        _ => ApprovalDecision::Once,
    };
    Some(Op::Approve { call_id: call.id.clone(), decision })
}

fn observation_of<'a>(seen: &'a [AgentEvent], name: &str) -> &'a axon_protocol::ToolOutput {
    seen.iter()
        .find_map(|e| match e {
            AgentEvent::Observation { name: n, output, .. } if n == name => Some(output),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no observation of {name}: {seen:#?}"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

#[test]
fn progress_reaches_the_card_and_a_cancelled_call_is_cancelled_on_the_server() {
    runtime().block_on(async {
        let rig = Rig::new(vec![Reply::tool("mcp_fx_test_wait_for_cancel", json!({}))]).await;
        let (session, mut events) = rig.open(false).await;
        session.submit(user("wait"));
        let mut progress = Vec::new();
        let seen = until_turn_end(&session, &mut events, |event| {
            if let Some(op) = approve(event, &ApprovalDecision::Once) {
                return Some(op);
            }
            let AgentEvent::ToolProgress { message, progress: done, total, .. } = event else {
                return None;
            };
            progress.push((message.clone(), *done, *total));
            // The server waits now: the user stops the turn.
            (message.as_deref() == Some("waiting for cancellation")).then_some(Op::Cancel)
        })
        .await;
        // The first may be overtaken by the second (the SDK hands each
        // notification to its own task), and is then not shown: progress
        // never goes backwards on a card.
        let last = (Some("waiting for cancellation".to_string()), 2.0, Some(4.0));
        let first = (Some("warming up".to_string()), 1.0, Some(4.0));
        assert!(progress == [first, last.clone()] || progress == [last], "{progress:?}");
        assert!(
            matches!(
                seen.last(),
                Some(AgentEvent::TurnCompleted { stop_reason: StopReason::Cancelled, .. })
            ),
            "{seen:#?}"
        );
        let shown = axon_protocol::progress_text(Some("waiting for cancellation"), 2.0, Some(4.0));
        assert_eq!(shown, "waiting for cancellation · 50%");

        // Another client of the same server asks how many calls it saw cancelled.
        let config = axon_mcp::config::parse_mcp_json(
            &json!({"mcpServers": {"fx": {"url": rig._fixture.url}}}).to_string(),
            "test",
        )
        .unwrap();
        let observer = axon_mcp::McpManager::start(config, rig.workspace.path()).await;
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut told = String::new();
        while Instant::now() < deadline {
            told = observer.call("fx", "test_cancellations", json!({})).await.text_content();
            if told == "cancelled: 1" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(told, "cancelled: 1");
        observer.shutdown().await;
        session.shutdown().await;
    });
}

#[test]
fn sampling_is_answered_by_the_sessions_model_after_approval() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("mcp_fx_test_sampling", json!({"prompt": "name a colour"})),
            Reply::text("teal"),
            Reply::text("The server heard teal."),
        ])
        .await;
        let (session, mut events) = rig.open(false).await;
        session.submit(user("a secret the server must never see"));
        let seen =
            until_turn_end(&session, &mut events, |e| approve(e, &ApprovalDecision::Once)).await;
        let asked = seen.iter().find_map(|e| match e {
            AgentEvent::ApprovalRequested {
                preview: preview @ Preview::Sampling { .. }, ..
            } => Some(preview.clone()),
            _ => None,
        });
        assert_eq!(
            asked,
            Some(Preview::Sampling {
                server: "fx".into(),
                messages: 1,
                characters: "name a colour".len(),
                max_tokens: 100,
                system_prompt: None,
            })
        );
        let output = observation_of(&seen, "mcp_fx_test_sampling");
        assert!(!output.is_error, "{output:?}");
        assert_eq!(output.text_content(), "LLM response: teal");
        // The sampling request carried the server's message, not the conversation.
        let requests = rig.model.requests();
        let sampled = requests[1].to_string();
        assert!(sampled.contains("name a colour"), "{sampled}");
        assert!(!sampled.contains("a secret the server must never see"), "{sampled}");
        // Its usage counts in the turn's.
        let usages = seen.iter().filter(|e| matches!(e, AgentEvent::Usage { .. })).count();
        assert!(usages >= 3, "{seen:#?}");
        session.shutdown().await;
    });
}

#[test]
fn sampling_denied_by_the_user_is_refused_to_the_server() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("mcp_fx_test_sampling", json!({"prompt": "name a colour"})),
            Reply::text("The server was refused."),
        ])
        .await;
        let (session, mut events) = rig.open(false).await;
        session.submit(user("go"));
        let deny = ApprovalDecision::Deny { reason: Some("not today".into()) };
        let seen = until_turn_end(&session, &mut events, |e| approve(e, &deny)).await;
        let output = observation_of(&seen, "mcp_fx_test_sampling");
        assert!(output.is_error, "{output:?}");
        assert!(output.text_content().contains("not today"), "{output:?}");
        let refused = observation_of(&seen, axon_runtime::mcp_host::SAMPLING_CALL);
        assert!(refused.is_error, "{refused:?}");
        // The model was asked twice (the call, then the answer): never for the server.
        assert_eq!(rig.model.requests().len(), 2);
        session.shutdown().await;
    });
}

#[test]
fn a_form_is_answered_by_the_user_and_the_server_gets_the_values() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("mcp_fx_test_elicitation", json!({"message": "Who are you?"})),
            Reply::text("Hello Ada."),
        ])
        .await;
        let (session, mut events) = rig.open(true).await;
        session.submit(user("ask me"));
        let mut asked = None;
        let seen = until_turn_end(&session, &mut events, |event| {
            if let Some(op) = approve(event, &ApprovalDecision::Once) {
                return Some(op);
            }
            let AgentEvent::Elicitation { id, server, message, schema } = event else {
                return None;
            };
            asked = Some((server.clone(), message.clone(), schema["required"].clone()));
            let content = json!({"username": "ada", "email": "ada@example.com"});
            Some(Op::Elicit {
                id: id.clone(),
                action: ElicitAction::Accept,
                content: content.as_object().cloned(),
            })
        })
        .await;
        assert_eq!(
            asked,
            Some(("fx".to_string(), "Who are you?".to_string(), json!(["username", "email"])))
        );
        let output = observation_of(&seen, "mcp_fx_test_elicitation");
        let text = output.text_content();
        assert!(!output.is_error, "{output:?}");
        assert!(text.contains("\"action\":\"accept\""), "{text}");
        assert!(text.contains("ada@example.com") && text.contains("\"ada\""), "{text}");
        session.shutdown().await;
    });
}

#[test]
fn with_nobody_to_ask_sampling_runs_in_auto_mode_without_asking() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("mcp_fx_test_sampling", json!({"prompt": "name a colour"})),
            Reply::text("teal"),
            Reply::text("The server heard teal."),
        ])
        .await;
        let auto = Some(axon_core::ApprovalPolicy::Auto);
        let (session, mut events) = rig.open_with(false, false, auto).await;
        session.submit(user("go"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        assert!(
            !seen.iter().any(|e| matches!(e, AgentEvent::ApprovalRequested { .. })),
            "{seen:#?}"
        );
        let output = observation_of(&seen, "mcp_fx_test_sampling");
        assert_eq!(output.text_content(), "LLM response: teal");
        session.shutdown().await;
    });
}
