//! One function builds a session from one [`SessionConfig`], for every
//! front end, in four steps on the session's [`Project`]: the project (its
//! consent, sandbox and permissions), the provider, the tools (the
//! profile's, `todo`, `load_skill`, MCP servers', the rules and skills in
//! the system prompt), and the agent (approval policy, saved session,
//! planner, hooks). Nothing else in the runtime imports this module but
//! the front door and `axon_run`.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use axon_core::plan::Planner;
use axon_core::{Agent, AgentConfig, ApprovalPolicy, ContextStrategy, ToolSource};
use axon_hooks::SessionSource;
use axon_llm::{Provider, ProviderConfig};
use axon_mcp::config::ServerConfig;
use axon_mcp::{McpManager, ServerStatus, StatusObserver};
use axon_protocol::{AgentEvent, PlanStatus, SessionInfo};
use axon_store::SessionStore;
use axon_tools::{Profile, ToolContext};

use crate::approvals::{AskFrontEnd, SessionControl, SessionPermissions};
use crate::config::{Effective, Overrides};
use crate::events::Emitter;
use crate::guidance::{self, Guidance};
use crate::journal::{SessionChoice, Sessions, secrets};
use crate::lifecycle::{Checkpointing, SessionLifecycle};
use crate::live_tools::{BuildTools, LiveTools};
use crate::project::Project;
use crate::sandbox;
use crate::servers::{ServerConsent, describe_state, servers_to_start};
use crate::session::{PlanMode, Session, Task, offered};
use crate::session_config::SessionConfig;

fn context_strategy(config: &Effective) -> Result<ContextStrategy> {
    Ok(match config.file.context.strategy.as_deref() {
        None | Some("trim") => ContextStrategy::Trim,
        Some("summarize" | "summarise") => ContextStrategy::Summarize,
        Some(other) => {
            bail!("unknown context.strategy '{other}' in the config; use trim or summarize")
        }
    })
}

/// Opens a session. Its events go to `emitter` from the start (config
/// warnings, MCP servers starting), so a front end that gets an error here
/// still has them to show.
///
/// In four steps, each on what the one before built: the project (the
/// workspace's consent, sandbox and permissions), the provider, the tools
/// (the system prompt's guidance, the built-in tools, the MCP servers to
/// start), and the agent with its saved session.
pub async fn open(config: SessionConfig, emitter: Emitter) -> Result<Session> {
    let mut config = config;
    let grounds = project_step(&mut config, &emitter)?;
    let model = provider_step(&config, &emitter).await?;
    let tools = tools_step(&config, &grounds, &emitter)?;
    agent_step(config, grounds, model, tools, emitter).await
}

/// What the project step settled: the workspace's consent, its sandbox and
/// the permissions every call passes.
struct Grounds {
    project: Project,
    profile: Profile,
    approval: ApprovalPolicy,
    /// This is the first session in the workspace: once it is open, later
    /// `--yes` sessions cover only what the user trusted.
    first_session: bool,
    sandbox: sandbox::Setup,
    permissions: Arc<SessionPermissions>,
}

fn project_step(config: &mut SessionConfig, emitter: &Emitter) -> Result<Grounds> {
    for warning in &config.config.refused {
        emitter.emit(AgentEvent::Warning { message: warning.clone() });
    }
    let profile = config.profile()?;
    let approval = config.approval()?;
    let project = config.project();
    // `--yes` covers what the user trusted (or the first session here ran
    // under --yes), not a server or hook a command of any earlier session
    // may have written (ServerConsent::settle).
    let consent = std::mem::replace(&mut config.workspace_servers, ServerConsent::Refuse);
    let (consent, first_session) = consent.settle(project.trust_store());
    config.workspace_servers = consent;
    // Set up for every profile: MCP servers may ask for it too.
    let sandbox = project.sandbox(config.sandbox)?;
    // Only the code profile has `shell`; the others never use these.
    let permissions = Arc::new(SessionPermissions::load(
        &config.config,
        &config.dirs.data,
        &config.workspace,
        sandbox.commands.clone(),
    )?);
    // Path rules hold for every tool that reads a path: a file read_file is
    // denied is not searched either.
    config.workspace = config.workspace.clone().with_read_denied(permissions.read_denied());
    Ok(Grounds { project, profile, approval, first_session, sandbox, permissions })
}

/// The provider the session talks to, and the config it was chosen by.
struct Model {
    provider: Arc<dyn Provider>,
    config: ProviderConfig,
}

async fn provider_step(config: &SessionConfig, emitter: &Emitter) -> Result<Model> {
    let overrides = Overrides { provider: config.provider.clone(), model: config.model.clone() };
    let provider_config = config.config.provider(&overrides)?;
    let provider = match &config.connected {
        Some(provider) => Arc::clone(provider),
        None => crate::local_model::connect(&provider_config, &config.config).await?,
    };
    let chosen = config.provider.is_some()
        || crate::config::env("AXON_PROVIDER").is_some()
        || config.config.file.provider.is_some();
    if provider_config.kind == axon_llm::ProviderKind::Local && !chosen {
        emitter.emit(AgentEvent::Warning {
            message: format!(
                "no provider is configured and no API key is set: using the local model {} (set a key or `provider` in the config for another)",
                provider.info().model
            ),
        });
    }
    Ok(Model { provider, config: provider_config })
}

/// The built-in tools, the guidance the system prompt carries, and the
/// MCP servers the session may start (readied, not yet started).
struct Tools {
    registry: axon_tools::ToolRegistry,
    /// The background commands of the registry's `shell`, for `/ps`.
    jobs: Arc<axon_tools::Jobs>,
    guidance: Arc<Guidance>,
    agent_config: AgentConfig,
    servers: Vec<ServerConfig>,
    meter: Arc<crate::meter::Meter>,
}

fn tools_step(config: &SessionConfig, grounds: &Grounds, emitter: &Emitter) -> Result<Tools> {
    let root = grounds.project.root();
    let strategy = context_strategy(&config.config)?;
    let guidance = match &config.guidance {
        Some(guidance) => Arc::clone(guidance),
        None => {
            let guidance = guidance::load(&config.config, &config.dirs, root);
            for problem in guidance.problems() {
                emitter.emit(AgentEvent::Warning { message: problem });
            }
            Arc::new(guidance)
        }
    };
    if let Some(warning) = grounds.sandbox.warning.clone().filter(|_| grounds.has_shell()) {
        emitter.emit(AgentEvent::Warning { message: warning });
    }
    let web = &config.config.file.web;
    let secret_vars: Vec<&str> = config.secret_vars.iter().map(String::as_str).collect();
    let jobs = Arc::new(axon_tools::Jobs::default());
    let mut registry = grounds.profile.registry_with_jobs(
        config.config.env_policy(&secret_vars)?,
        grounds.sandbox.tool.clone(),
        Arc::clone(&jobs),
    );
    // Both profiles: a notes vault is researched too. Without a search
    // API, web_search is not offered (`axon doctor` says how to add one).
    let search = web.search_config().unwrap_or_else(|warning| {
        emitter.emit(AgentEvent::Warning { message: warning });
        None
    });
    axon_webtools::register(&mut registry, web.fetch_config(), search);
    registry.register(axon_core::Todo);
    let system_prompt = guidance.system_prompt(root, &mut registry);
    let meter = Arc::new(crate::meter::Meter::new(&config.config.file, config.max_budget_usd));
    let agent_config = AgentConfig {
        system_prompt,
        rule_count: guidance.rules.len(),
        max_iterations: config
            .max_iterations
            .or(config.config.file.max_iterations)
            .unwrap_or(crate::workspace_layer::DEFAULT_MAX_ITERATIONS)
            .max(1),
        approval: grounds.approval,
        context_strategy: strategy,
        preview_actions: config.preview_actions,
        mask_secrets: config.config.file.secrets != Some(crate::config::SecretsMode::Off),
        budget: meter.budget(),
        ..AgentConfig::default()
    };
    let mut servers: Vec<ServerConfig> = if config.start_servers {
        servers_to_start(
            grounds.approval,
            &config.workspace_servers,
            config.config.user_servers.iter().chain(&config.client_servers).cloned().collect(),
            config.config.workspace_servers.clone(),
            emitter,
            grounds.project.trust_store(),
        )
    } else {
        Vec::new()
    };
    grounds.project.ready_servers(&mut servers, &grounds.sandbox);
    Ok(Tools { registry, jobs, guidance, agent_config, servers, meter })
}

impl Grounds {
    /// Only the code profile runs commands.
    fn has_shell(&self) -> bool {
        self.profile == Profile::Code
    }
}

/// Starts the MCP servers in the background: the session opens at once,
/// and each server's tools join as it becomes ready (see `live_tools`).
fn start_servers(
    config: &SessionConfig,
    grounds: &Grounds,
    model: &Model,
    tools: Tools,
    shared: &Arc<SessionControl>,
    emitter: &Emitter,
) -> (Arc<LiveTools>, Arc<crate::mcp_host::McpHost>) {
    let observed = emitter.clone();
    let observer: StatusObserver = Arc::new(move |status: &ServerStatus| {
        let (state, message) = describe_state(status);
        observed.emit(AgentEvent::McpStatus { server: status.name.clone(), state, message });
    });
    let mcp_host = Arc::new(crate::mcp_host::McpHost::new(
        emitter.clone(),
        Arc::clone(shared),
        Arc::clone(&model.provider),
        config.interactive,
        config.elicitation,
        Arc::clone(&tools.meter),
    ));
    let mcp = Arc::new(McpManager::spawn(tools.servers, grounds.project.root(), Some(observer)));
    // Before any server can have finished its handshake, so none asks
    // without a host to answer.
    mcp.set_host(Arc::clone(&mcp_host) as Arc<dyn axon_mcp::host::ClientHost>);
    // Subagents last: their definitions may name any tool above.
    let (subagents, problems) =
        crate::subagents::Subagents::load(config, grounds.profile, &model.config);
    for warning in problems {
        emitter.emit(AgentEvent::Warning { message: warning });
    }
    let registry = tools.registry;
    let build: BuildTools = Box::new(move |mcp: &McpManager| {
        let mut registry = registry.subset(registry.names());
        let mut warnings = mcp.register_tools(&mut registry);
        warnings.extend(subagents.register(&mut registry));
        (registry, warnings)
    });
    let grace = config
        .config
        .file
        .mcp_startup_grace_ms
        .map_or(crate::live_tools::DEFAULT_STARTUP_GRACE, Duration::from_millis);
    let live = Arc::new(LiveTools::new(Arc::clone(&mcp), build, emitter.clone(), grace));
    (live, mcp_host)
}

async fn agent_step(
    config: SessionConfig,
    grounds: Grounds,
    model: Model,
    tools: Tools,
    emitter: Emitter,
) -> Result<Session> {
    let root = grounds.project.root().to_path_buf();
    let approval = grounds.approval;
    let web_key: Vec<String> = config.config.file.web.key_var().into_iter().collect();
    let mut other_keys = web_key;
    other_keys.extend(crate::telemetry::HEADER_VARIABLES.iter().map(|k| (*k).to_string()));
    let redactor = secrets(
        model.config.api_key.as_deref(),
        &tools.servers,
        &model.config.api_key_env,
        &other_keys,
        &config.telemetry.secret_values(),
    );
    let sessions = Sessions {
        providers: config.config.file.providers.keys().cloned().collect(),
        store: SessionStore::new(&config.dirs.data),
        record: config.record,
        redactor,
        workspace: root.clone(),
        events: emitter.clone(),
        next_id: match &config.session {
            SessionChoice::NewAs(id) => Some(id.clone()),
            _ => None,
        },
    };
    let info = model.provider.info().clone();
    let opened = sessions.continue_(&config.session, (&info.name, &info.model))?;
    let shared = Arc::new(SessionControl::default());
    let guidance = Arc::clone(&tools.guidance);
    let agent_config = tools.agent_config.clone();
    let jobs = Arc::clone(&tools.jobs);
    let meter = Arc::clone(&tools.meter);
    let (live, mcp_host) = start_servers(&config, &grounds, &model, tools, &shared, &emitter);
    let registry = live.current();
    let context = ToolContext::new(config.workspace.clone());
    let fallback = config.fallback.clone().or_else(|| config.config.file.fallback.clone());
    // One list for the turns, the planner and compaction (in the agent):
    // each provider is connected once, by whichever needs it first.
    let fallbacks: Option<Arc<dyn axon_core::Fallbacks>> =
        fallback.filter(|names| !names.is_empty()).map(|names| {
            Arc::new(crate::fallbacks::ConfiguredFallbacks::new(names, config.config.clone()))
                as Arc<dyn axon_core::Fallbacks>
        });
    let mut planner = Planner::new(
        Arc::clone(&model.provider),
        grounds.profile.registry(),
        context.clone(),
        agent_config.clone(),
    );
    if let Some(list) = &fallbacks {
        planner = planner.with_fallbacks(Arc::clone(list));
    }
    let secret_vars: Vec<&str> = config.secret_vars.iter().map(String::as_str).collect();
    let lifecycle =
        lifecycle(&config, &root, approval, &secret_vars, &emitter, grounds.sandbox.tool.clone())?;
    planner.set_lifecycle(Arc::clone(&lifecycle) as Arc<dyn axon_core::Lifecycle>);
    let notify = crate::lifecycle::notification_watch(&lifecycle);
    let telemetry = start_telemetry(&config, &emitter);
    match &telemetry {
        Some(telemetry) => {
            let telemetry = Arc::clone(telemetry);
            emitter.watch(Arc::new(move |event: &AgentEvent| {
                notify(event);
                telemetry.on_event(event);
            }));
        }
        None => emitter.watch(notify),
    }
    if grounds.first_session
        && config.start_servers
        && let Err(e) = grounds.project.trust_store().mark_baseline()
    {
        emitter.emit(AgentEvent::Warning {
            message: format!(
                "the first session in this workspace could not be remembered (the next --yes \
                 session will run the workspace's servers and hooks it finds): {e}"
            ),
        });
    }
    let mut agent = Agent::new(
        Arc::clone(&model.provider),
        Arc::clone(&registry),
        context.clone(),
        agent_config,
    )
    .with_tool_source(Arc::clone(&live) as Arc<dyn ToolSource>)
    .with_shared_approval(Arc::clone(&shared.approval))
    .with_permissions(Arc::clone(&grounds.permissions) as Arc<dyn axon_core::Permissions>)
    .with_lifecycle(Arc::clone(&lifecycle) as Arc<dyn axon_core::Lifecycle>);
    if let Some(list) = fallbacks {
        agent = agent.with_fallbacks(list);
    }
    // Installed whenever someone can answer: the approval mode may turn
    // to `ask` later in the session.
    if config.interactive {
        agent = agent.with_approver(Arc::new(AskFrontEnd {
            events: emitter.clone(),
            shared: Arc::clone(&shared),
            tools: Arc::clone(&live) as Arc<dyn ToolSource>,
            context,
            permissions: Arc::clone(&grounds.permissions),
        }));
    }

    if let Some(warning) = meter.unenforceable(&info.model) {
        emitter.emit(AgentEvent::Warning { message: warning });
    }
    let mcp_servers = crate::servers::server_infos(live.mcp());
    let mut session_info = SessionInfo {
        session_id: None,
        workspace: root.display().to_string(),
        provider: info.name.clone(),
        model: info.model.clone(),
        context_window: info.context_window,
        mode: config.mode,
        approval: approval.into(),
        tools: offered(&registry, approval),
        mcp_servers,
        rules: guidance.numbered_rules(),
        skills: guidance.skill_infos(),
        context_tokens: 0,
        sandbox: grounds.has_shell().then_some(grounds.sandbox.info),
        usage: axon_protocol::Usage::default(),
        cost_usd: None,
    };
    let mut history = None;
    let mut journal = None;
    let mut plan = None;
    if let Some(opened) = opened {
        session_info.session_id = Some(opened.journal.id());
        // The budget and the totals go on from what it spent before.
        meter.restore(&opened.calls);
        (session_info.usage, session_info.cost_usd) = meter.totals();
        if let Some((messages, tokens)) = opened.resumed {
            history = config.replay_history.then(|| crate::replay::shown(messages.clone()));
            agent.replace_history(messages, tokens);
        }
        agent.set_journal(opened.journal.clone());
        lifecycle.set_journal(Some(Arc::clone(&opened.journal)));
        journal = Some(opened.journal);
        plan = opened.plan;
    }
    let source = if journal.is_some() { SessionSource::Resume } else { SessionSource::Startup };
    lifecycle.session_started(source).await;
    session_info.context_tokens = agent.context_tokens();
    emitter.emit(AgentEvent::SessionStarted { session: session_info.clone() });
    if let Some(messages) = history {
        emitter.emit(AgentEvent::History { messages });
    }
    // A completed plan is shown as it ended; any other waits for approval.
    let plan = plan.and_then(|plan| {
        if plan.status == PlanStatus::Completed {
            emitter.emit(AgentEvent::PlanChanged { plan });
            None
        } else {
            emitter.emit(AgentEvent::PlanProposed { plan: plan.clone() });
            Some(plan)
        }
    });
    let task = Task {
        agent,
        plans: PlanMode {
            planner,
            waiting: plan,
            revisions: 0,
            auto_approve: config.auto_approve_plans,
        },
        events: emitter,
        sessions,
        tools: live,
        models: (config.config, model.config),
        journal,
        mode: config.mode,
        workspace: config.workspace,
        info: session_info,
        turns: 0,
        lifecycle,
        meter,
        mcp_host,
        jobs,
        idle_notice: config.interactive.then_some(config.idle_notice),
        end_reason: config.end_reason,
        telemetry,
    };
    Ok(Session::start(task, shared))
}

/// The session's hooks (the workspace's only with consent) and its
/// checkpoints (for a saved session).
fn lifecycle(
    config: &SessionConfig,
    root: &std::path::Path,
    approval: ApprovalPolicy,
    secret_vars: &[&str],
    emitter: &Emitter,
    sandbox: Option<Arc<axon_tools::CommandSandbox>>,
) -> Result<Arc<SessionLifecycle>> {
    let (hooks, warnings) =
        crate::hook_files::in_effect(&config.config, root, &config.workspace_servers, approval);
    for message in warnings {
        emitter.emit(AgentEvent::Warning { message });
    }
    // Workspace hooks are the repository's commands: they run where its
    // model's commands run, in the session's sandbox.
    let hooks = hooks
        .with_env_policy(Arc::new(config.config.env_policy(secret_vars)?))
        .with_workspace_sandbox(sandbox);
    // Even a session that starts read-only: the user may switch it to
    // auto mid-session, and its turns must still be rewindable. The shadow
    // repository is opened only when a turn first may change a file.
    let checkpoints = if config.record {
        Checkpointing::Later(config.dirs.data.clone(), config.config.file.checkpoints.budget())
    } else {
        Checkpointing::Off(None)
    };
    Ok(Arc::new(SessionLifecycle::new(hooks, checkpoints, root.to_path_buf(), emitter.clone())))
}

/// The session's OpenTelemetry exporters, when the OTEL_* variables (as
/// `config.telemetry` holds them) name an endpoint; what cannot be
/// honoured is a warning, never a failed session.
fn start_telemetry(
    config: &SessionConfig,
    emitter: &Emitter,
) -> Option<Arc<crate::telemetry::Telemetry>> {
    for problem in &config.telemetry.problems {
        emitter.emit(AgentEvent::Warning { message: format!("telemetry: {problem}") });
    }
    let prices = axon_llm::Prices::new(config.config.file.prices.clone());
    // Weak: the telemetry is itself held by a watch on this emitter, and
    // a strong one would keep the session's event stream open for good.
    let weak = emitter.downgrade();
    let warn = Arc::new(move |message| weak.emit(AgentEvent::Warning { message }));
    match crate::telemetry::Telemetry::start(&config.telemetry, prices, warn) {
        Ok(telemetry) => telemetry,
        Err(e) => {
            emitter.emit(AgentEvent::Warning { message: format!("telemetry: {e}") });
            None
        }
    }
}
