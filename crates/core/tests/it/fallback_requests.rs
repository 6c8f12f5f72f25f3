//! Issue 36 §4 for the requests that are not turns: the summary of a
//! compaction and the planner's go on to the next provider of the fallback
//! list as a turn does (after the provider's retries, on an outage only),
//! the user is told, and the session records the switch. In both wire
//! formats, against scripted models on loopback: the first answers the
//! turns, then is overloaded (HTTP 529/503) for the summary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use crate::common::{fast_retries, provider_config, runtime};
use axon_core::plan::Planner;
use axon_core::{
    Agent, AgentConfig, CancellationToken, Connecting, Fallbacks, Journal, RunOutcome,
};
use axon_llm::{Provider, ProviderKind, ToolProtocol, build_provider};
use axon_protocol::{AgentEvent, Message, Usage};
use axon_testkit::{Reply, ScriptedServer};
use axon_tools::{Profile, ToolContext, ToolRegistry, Workspace};

/// Fallback providers already built.
struct Built(Vec<Arc<dyn Provider>>);

impl Fallbacks for Built {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn name(&self, index: usize) -> String {
        self.0[index].info().name.clone()
    }
    fn connect(&self, index: usize) -> Connecting<'_> {
        let provider = Arc::clone(&self.0[index]);
        Box::pin(async move { Ok(provider) })
    }
}

/// Records which provider the session says answered.
#[derive(Default)]
struct Models(Mutex<Vec<String>>);

impl Journal for Models {
    fn message(&self, _: &Message, _: u64) {}
    fn usage(&self, _: &Usage) {}
    fn compacted(&self, _: &str, _: Option<&str>, _: usize) {}
    fn model_changed(&self, provider: &str, model: &str) {
        self.0.lock().unwrap().push(format!("{provider}/{model}"));
    }
}

/// The first provider (`primary`, no retries of its own so one scripted
/// error is its last word) and a backup serving `backup_script`.
async fn providers(
    kind: ProviderKind,
    script: Vec<Reply>,
    backup_script: Vec<Reply>,
) -> (ScriptedServer, ScriptedServer, Arc<dyn Provider>, Arc<dyn Provider>) {
    let server = ScriptedServer::start(script).await.unwrap();
    let mut config = provider_config(&server, kind, ToolProtocol::Native);
    config.name = "primary".into();
    config.retry.rate_limit_retries = 0;
    config.retry.connection_retries = 0;
    let primary = build_provider(&config).unwrap();
    let backup_server = ScriptedServer::start(backup_script).await.unwrap();
    let mut config = provider_config(&backup_server, kind, ToolProtocol::Native);
    config.name = "backup".into();
    config.model = "backup-model".into();
    let backup = build_provider(&config).unwrap();
    (server, backup_server, primary, backup)
}

fn overloaded(kind: ProviderKind) -> Reply {
    if kind == ProviderKind::Anthropic {
        Reply::error(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
    } else {
        Reply::error(503, r#"{"error":{"message":"overloaded","type":"server_error"}}"#)
    }
}

/// Collects warnings and the providers `model_changed` named.
fn collector() -> (Arc<Mutex<Vec<String>>>, impl Fn(AgentEvent) + Send + Sync) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let emit = move |event: AgentEvent| match event {
        AgentEvent::Warning { message } => sink.lock().unwrap().push(message),
        AgentEvent::ModelChanged { provider, .. } => {
            sink.lock().unwrap().push(format!("model: {provider}"));
        }
        _ => {}
    };
    (seen, emit)
}

#[test]
fn a_compaction_summary_goes_on_to_the_fallback_when_the_provider_is_out() {
    runtime().block_on(async {
        for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
            let script =
                vec![Reply::text("first answer"), Reply::text("second answer"), overloaded(kind)];
            let summary = "The user said hello twice; both were answered.";
            let (primary_server, backup_server, primary, backup) =
                providers(kind, script, vec![Reply::text(summary)]).await;
            let dir = tempfile::tempdir().unwrap();
            let tools = ToolContext::new(Workspace::new(dir.path()).unwrap());
            let config = AgentConfig { retry: fast_retries(), ..AgentConfig::default() };
            let models = Arc::new(Models::default());
            let mut agent = Agent::new(primary, Arc::new(ToolRegistry::new()), tools, config)
                .with_fallbacks(Arc::new(Built(vec![backup])))
                .with_journal(models.clone());
            for prompt in ["hello", "hello again"] {
                let outcome = agent.run(prompt, &|_| {}, &CancellationToken::new()).await;
                assert!(matches!(outcome, RunOutcome::Answered(_)), "{kind:?}: {outcome:?}");
            }
            let (seen, emit) = collector();
            let compacted = agent.compact_all(&emit, &CancellationToken::new()).await;
            let seen = seen.lock().unwrap().clone();
            assert_eq!(compacted, Ok(2), "{kind:?}: {seen:?}");
            assert!(
                seen.iter()
                    .any(|m| m.starts_with("primary failed") && m.contains("continues on backup")),
                "{kind:?}: the user is told: {seen:?}"
            );
            assert!(seen.contains(&"model: backup".to_string()), "{kind:?}: {seen:?}");
            assert_eq!(*models.0.lock().unwrap(), ["backup/backup-model"], "{kind:?}: recorded");
            let asked = backup_server.requests()[0].to_string();
            assert!(asked.contains("handoff summar"), "{kind:?}: {asked}");
            assert_eq!(primary_server.remaining(), 0, "{kind:?}");
            assert_eq!(backup_server.remaining(), 0, "{kind:?}");
        }
    });
}

#[test]
fn the_planner_goes_on_to_the_fallback_when_the_provider_is_out() {
    runtime().block_on(async {
        for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
            let plan = Reply::submit_plan(&["read the lexer", "rewrite it"]);
            let (_primary_server, backup_server, primary, backup) =
                providers(kind, vec![overloaded(kind)], vec![plan]).await;
            let dir = tempfile::tempdir().unwrap();
            let tools = ToolContext::new(Workspace::new(dir.path()).unwrap());
            let config = AgentConfig { retry: fast_retries(), ..AgentConfig::default() };
            let mut planner = Planner::new(primary, Profile::Code.registry(), tools, config)
                .with_fallbacks(Arc::new(Built(vec![backup])));
            let (seen, emit) = collector();
            let steps = planner.propose("port the lexer", &emit, &CancellationToken::new()).await;
            let seen = seen.lock().unwrap().clone();
            assert_eq!(steps.map(|s| s.len()), Ok(2), "{kind:?}: {seen:?}");
            assert!(
                seen.iter()
                    .any(|m| m.starts_with("primary failed") && m.contains("continues on backup")),
                "{kind:?}: the user is told: {seen:?}"
            );
            // On the backup for this request only, then back at once.
            let changes: Vec<&String> = seen.iter().filter(|m| m.starts_with("model: ")).collect();
            assert_eq!(changes, ["model: backup", "model: primary"], "{kind:?}");
            assert_eq!(backup_server.remaining(), 0, "{kind:?}");
        }
    });
}
