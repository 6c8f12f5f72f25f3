//! An agent wired to a scripted model server, with fast retries.

#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod peers;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axon_core::{Agent, AgentConfig, ApprovalPolicy, CancellationToken, RunOutcome};
use axon_llm::retry::RetryPolicy;
use axon_llm::{
    EventStream, Provider, ProviderConfig, ProviderInfo, ProviderKind, ProviderRequest,
    ToolProtocol, TurnAssembler, build_provider, preset,
};
use axon_protocol::AgentEvent;
use axon_testkit::{Reply, ScriptedServer};
use axon_tools::{Profile, ToolContext, Workspace};
use futures_util::StreamExt;

pub fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
        ..RetryPolicy::default()
    }
}

pub fn provider_config(
    server: &ScriptedServer,
    kind: ProviderKind,
    protocol: ToolProtocol,
) -> ProviderConfig {
    let mut config =
        preset(if kind == ProviderKind::Anthropic { "anthropic" } else { "openai" }).unwrap();
    config.base_url =
        if kind == ProviderKind::Anthropic { server.url.clone() } else { server.openai_base() };
    config.api_key = Some("test-key".into());
    config.model = "scripted".into();
    config.tool_protocol = protocol;
    config.retry = fast_retries();
    // Long enough that a pause on a busy machine is not taken for a stalled
    // stream (which would retry and consume the next scripted reply); the
    // fault tests (Stall, Silent) wait this long once each.
    config.stream_idle_timeout = Duration::from_secs(2);
    config
}

pub struct Harness {
    pub server: ScriptedServer,
    pub dir: tempfile::TempDir,
    pub agent: Agent,
    pub events: Arc<Mutex<Vec<AgentEvent>>>,
    /// The text the agent has taken from the provider's stream so far,
    /// shown or held back (set by [`Harness::stalling`]).
    pub received: Arc<Mutex<String>>,
}

/// A provider passed through, noting the text of every event the agent
/// takes from its stream: the agent has handled an event once it asks for
/// the next, so a condition on `received` cannot run ahead of the agent.
struct Tap {
    inner: Arc<dyn Provider>,
    received: Arc<Mutex<String>>,
}

impl Provider for Tap {
    fn info(&self) -> &ProviderInfo {
        self.inner.info()
    }

    fn stream(&self, request: &ProviderRequest<'_>) -> EventStream {
        let received = Arc::clone(&self.received);
        let mut turn = TurnAssembler::new();
        received.lock().unwrap().clear();
        Box::pin(self.inner.stream(request).inspect(move |item| {
            if let Ok(event) = item {
                turn.push(event);
                *received.lock().unwrap() = turn.received_text();
            }
        }))
    }
}

impl Harness {
    pub async fn new(
        script: Vec<Reply>,
        kind: ProviderKind,
        protocol: ToolProtocol,
        profile: Profile,
    ) -> Self {
        Self::with_config(script, kind, protocol, profile, AgentConfig::default()).await
    }

    pub async fn with_config(
        script: Vec<Reply>,
        kind: ProviderKind,
        protocol: ToolProtocol,
        profile: Profile,
        config: AgentConfig,
    ) -> Self {
        Self::with_provider(script, kind, protocol, profile, config, |_| {}).await
    }

    /// For tests where only a cancellation may end a stalled stream: the
    /// idle timeout is far beyond any test's length, so the outcome cannot
    /// depend on how soon a busy machine gets to the cancellation.
    pub async fn stalling(script: Vec<Reply>, kind: ProviderKind, config: AgentConfig) -> Self {
        let mut h =
            Self::with_provider(script, kind, ToolProtocol::Native, Profile::Code, config, |p| {
                p.stream_idle_timeout = Duration::from_secs(600);
            })
            .await;
        let tap = Tap { inner: Arc::clone(h.agent.provider()), received: Arc::clone(&h.received) };
        h.agent.set_provider(Arc::new(tap));
        h
    }

    async fn with_provider(
        script: Vec<Reply>,
        kind: ProviderKind,
        protocol: ToolProtocol,
        profile: Profile,
        mut config: AgentConfig,
        adjust: impl FnOnce(&mut ProviderConfig),
    ) -> Self {
        let server = ScriptedServer::start(script).await.unwrap();
        let mut provider_config = provider_config(&server, kind, protocol);
        adjust(&mut provider_config);
        let provider = build_provider(&provider_config).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        config.retry = fast_retries();
        if config.approval == ApprovalPolicy::Ask {
            config.approval = ApprovalPolicy::Auto;
        }
        let agent =
            Agent::new(provider, Arc::new(profile.registry()), ToolContext::new(workspace), config);
        Harness::of(server, dir, agent)
    }

    fn of(server: ScriptedServer, dir: tempfile::TempDir, agent: Agent) -> Self {
        let events = Arc::new(Mutex::new(Vec::new()));
        Harness { server, dir, agent, events, received: Arc::default() }
    }

    /// An OpenAI-format agent whose model has a `window`-token context.
    pub async fn with_window(script: Vec<Reply>, window: u64, config: AgentConfig) -> Self {
        let server = ScriptedServer::start(script).await.unwrap();
        let mut provider_config =
            provider_config(&server, ProviderKind::OpenAi, ToolProtocol::Native);
        provider_config.context_window = Some(window);
        let (agent, dir) = agent_on(provider_config, config);
        Harness::of(server, dir, agent)
    }

    pub async fn run(&mut self, prompt: &str) -> RunOutcome {
        self.run_with(prompt, &CancellationToken::new()).await
    }

    pub async fn run_with(&mut self, prompt: &str, cancel: &CancellationToken) -> RunOutcome {
        let events = Arc::clone(&self.events);
        let emit = move |event: AgentEvent| events.lock().unwrap().push(event);
        self.agent.run(prompt, &emit, cancel).await
    }

    pub fn events(&self) -> Vec<AgentEvent> {
        self.events.lock().unwrap().clone()
    }

    pub fn path(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }
}

/// A token that cancels itself (inside a runtime) once `ready` holds: a
/// condition, never a delay, so a busy machine cannot cancel too early. If
/// `ready` never holds it cancels after 60 s and the test's checks fail.
pub fn cancel_when(ready: impl Fn() -> bool + Send + 'static) -> CancellationToken {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !ready() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        trigger.cancel();
    });
    cancel
}

/// Whether the agent has received exactly `expected` so far.
pub fn received_is(received: &Arc<Mutex<String>>, expected: &str) -> bool {
    *received.lock().unwrap() == expected
}

/// Whether the streamed text shown so far is exactly `expected`.
pub fn shown_text_is(events: &Arc<Mutex<Vec<AgentEvent>>>, expected: &str) -> bool {
    let shown: String = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Token { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    shown == expected
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// An agent on any provider, in a fresh workspace, with fast retries.
pub fn agent_on(provider: ProviderConfig, mut config: AgentConfig) -> (Agent, tempfile::TempDir) {
    let provider = build_provider(&provider).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    config.retry = fast_retries();
    let agent = Agent::new(
        provider,
        Arc::new(Profile::Code.registry()),
        ToolContext::new(workspace),
        config,
    );
    (agent, dir)
}

/// Runs a prompt and collects its events.
pub async fn run_collecting(agent: &mut Agent, prompt: &str) -> (RunOutcome, Vec<AgentEvent>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let emit = move |event: AgentEvent| sink.lock().unwrap().push(event);
    let outcome = agent.run(prompt, &emit, &CancellationToken::new()).await;
    let events = events.lock().unwrap().clone();
    (outcome, events)
}
