//! The rig the runtime's event tests share: a scripted model, a workspace
//! and a home folder, a session opened on them, and its events read until
//! a turn ends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use axon_protocol::{AgentEvent, Op};
use axon_runtime::config::{Dirs, Effective};
use axon_runtime::{Events, Session, SessionConfig};
use axon_testkit::{Reply, ScriptedServer};
use axon_tools::Workspace;
use serde_json::{Value, json};

pub struct Rig {
    pub server: ScriptedServer,
    pub workspace: tempfile::TempDir,
    pub home: tempfile::TempDir,
}

impl Rig {
    pub async fn new(script: Vec<Reply>) -> Rig {
        let server = ScriptedServer::start(script).await.unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let config = format!(
            "provider = \"scripted\"\n[providers.scripted]\nkind = \"openai\"\nbase_url = \"{}\"\n\
             model = \"scripted\"\napi_key = \"test-key\"\ncontext_window = 100000\n",
            server.openai_base()
        );
        std::fs::write(home.path().join("config.toml"), config).unwrap();
        Rig { server, workspace, home }
    }

    pub fn config(&self) -> SessionConfig {
        let dirs = Dirs {
            config_file: self.home.path().join("config.toml"),
            data: self.home.path().join("data"),
            cache: self.home.path().join("cache"),
        };
        let workspace = Workspace::new(self.workspace.path()).unwrap();
        let effective = Effective::load(&dirs, workspace.root()).unwrap();
        let mut config = SessionConfig::new(workspace, dirs, effective);
        config.interactive = true;
        config
    }

    pub async fn open(&self, config: SessionConfig) -> (Session, Events) {
        let (emitter, events) = axon_runtime::channel();
        let session = axon_runtime::open(config, emitter).await.unwrap();
        (session, events)
    }

    /// Every event as one line of JSON, with what differs from run to run
    /// replaced; streamed tokens joined.
    pub fn transcript(&self, events: &[AgentEvent]) -> String {
        let root = std::fs::canonicalize(self.workspace.path()).unwrap();
        let root = root.display().to_string();
        let mut lines: Vec<String> = Vec::new();
        let mut tokens = String::new();
        for event in events {
            if let AgentEvent::Token { text } = event {
                tokens.push_str(text);
                continue;
            }
            if !tokens.is_empty() {
                lines.push(format!("token {:?}", std::mem::take(&mut tokens)));
            }
            let mut value = serde_json::to_value(event).unwrap();
            normalise(&mut value, &root);
            lines.push(value.to_string());
        }
        if !tokens.is_empty() {
            lines.push(format!("token {tokens:?}"));
        }
        lines.join("\n")
    }
}

pub fn normalise(value: &mut Value, root: &str) {
    match value {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match key.as_str() {
                    "session_id" if !value.is_null() => *value = json!("<id>"),
                    "created_at" | "updated_at" => *value = json!(0),
                    "context_tokens" => *value = json!("<n>"),
                    "id" if value.as_str().is_some_and(|s| s.starts_with("plan-")) => {
                        *value = json!("<plan>");
                    }
                    _ => normalise(value, root),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| normalise(v, root)),
        Value::String(text) if text.contains(root) => *text = text.replace(root, "<ws>"),
        _ => {}
    }
}

/// Events until the next `turn_completed` (included), answering approval
/// requests with `answer`.
/// The session's next event; fails after a minute or if the session ended.
pub async fn next_event(events: &mut Events) -> AgentEvent {
    tokio::time::timeout(Duration::from_secs(60), events.recv())
        .await
        .expect("the next event comes")
        .expect("the session is open")
}

pub async fn until_turn_end(
    session: &Session,
    events: &mut Events,
    mut answer: impl FnMut(&AgentEvent) -> Option<Op>,
) -> Vec<AgentEvent> {
    let mut seen = Vec::new();
    loop {
        let event = next_event(events).await;
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

pub fn opened(events: &mut Events) -> Vec<AgentEvent> {
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        seen.push(event);
    }
    seen
}

pub fn user(text: &str) -> Op {
    Op::UserTurn { text: text.to_string(), attachments: Vec::new() }
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}
