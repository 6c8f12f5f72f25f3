//! `axon` / `axon chat`: the interactive terminal UI.
//!
//! Two tasks: this one owns the terminal and the [`App`] (keys in, frames
//! out), and [`worker::Worker`] owns the agent. They talk only through
//! [`worker::Request`]s and [`worker::Update`]s, so the screen keeps
//! drawing while a model streams or a tool runs, and Esc reaches a
//! running turn at once through its cancellation token.

mod files;
pub(crate) mod terminal;
mod worker;

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use axon_core::plan::Planner;
use axon_core::{Agent, Approval, ApprovalPolicy, CancellationToken};
use axon_mcp::{McpManager, ServerState, StatusObserver};
use axon_protocol::PlanStatus;
use axon_store::SessionStore;
use axon_tools::ToolContext;
use axon_tui::{Action, Answer, App, Level, PlanDecision, Theme};
use clap::Args;
use futures_util::StreamExt;
use ratatui::crossterm::event::{Event, EventStream};
use tokio::sync::{mpsc, oneshot};

use crate::exit;
use crate::session;
use crate::setting::{AgentOptions, Setting, mcp_status_event};
use worker::{Request, TuiApprover, Update, Worker};

#[derive(Debug, Args, Default)]
pub struct ChatArgs {
    /// The workspace folder.
    #[arg(short = 'C', long = "dir", value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Continue the latest session of this workspace.
    #[arg(long = "continue", conflicts_with = "resume")]
    continue_session: bool,
    /// Continue session ID (or a unique start of it).
    #[arg(long, value_name = "ID")]
    resume: Option<String>,
    #[command(flatten)]
    options: AgentOptions,
}

pub async fn run(args: ChatArgs) -> u8 {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!(
            "axon: the chat needs a terminal; for scripts and pipes use axon run \"TASK\" (or --json)"
        );
        return exit::USAGE;
    }
    let (updates, updates_rx) = mpsc::unbounded_channel();
    let started = match start(&args, updates.clone()).await {
        Ok(started) => started,
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    let Started { worker, app, mcp } = started;
    let (requests, requests_rx) = mpsc::unbounded_channel();
    let root = worker.setting.workspace.root().to_path_buf();
    let indexer = updates.clone();
    tokio::task::spawn_blocking(move || {
        let _ = indexer.send(Update::Files(files::index(&root)));
    });
    let agent_task = tokio::spawn(async move {
        let served = tokio::spawn(worker.serve(requests_rx)).await;
        if let Err(e) = served {
            let _ = updates.send(Update::Crashed(format!("the agent task failed: {e}")));
        }
    });
    let result = ui(app, requests, updates_rx).await;
    terminal::leave();
    // The worker stops once its requests end; a turn still running was
    // cancelled by the UI on its way out.
    let _ = tokio::time::timeout(Duration::from_secs(3), agent_task).await;
    mcp.shutdown().await;
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("axon: the terminal failed: {e}");
            exit::FAILED
        }
    }
}

struct Started {
    worker: Worker,
    app: App,
    mcp: McpManager,
}

/// Everything before the first frame: config, model, session, MCP servers.
async fn start(args: &ChatArgs, updates: worker::Updates) -> Result<Started> {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let setting = Setting::load(&dir, &args.options).await?;
    let theme = Theme::from_env();
    if theme.color {
        axon_tui::highlight::warm_up();
    }
    let mut app = App::new(theme);
    let info = setting.provider.info().clone();
    app.status.provider = info.name.clone();
    app.status.model = info.model.clone();
    app.status.window = info.context_window;

    let servers = crate::run_cmd::servers_to_start(
        args.options.yes,
        setting.approval,
        true,
        setting.config.user_servers.clone(),
        setting.config.workspace_servers.clone(),
    );
    let redactor = session::secrets(
        setting.provider_config.api_key.as_deref(),
        &servers,
        &setting.provider_config.api_key_env,
    );
    let store = SessionStore::new(&setting.dirs.data);
    let choice = match (&args.resume, args.continue_session) {
        (Some(id), _) => Some(session::Choice::Id(id)),
        (None, true) => Some(session::Choice::Latest),
        (None, false) => None,
    };
    let opened = match choice {
        Some(choice) => Some(session::open(
            &store,
            choice,
            setting.workspace.root(),
            "",
            (&info.name, &info.model),
            redactor.clone(),
        )?),
        None => None,
    };

    let observer_updates = updates.clone();
    let observer: StatusObserver = Arc::new(move |server: &str, state: &ServerState| {
        let _ = observer_updates.send(Update::Event(mcp_status_event(server, state)));
    });
    let mcp = McpManager::start_observed(servers, setting.workspace.root(), Some(observer)).await;
    let mut setting = setting;
    let mut registry = std::mem::take(&mut setting.registry);
    for warning in mcp.register_tools(&mut registry) {
        app.notice(Level::Warning, warning);
    }
    let workspace = setting.workspace.clone();
    let planner = Planner::new(
        Arc::clone(&setting.provider),
        setting.profile.registry(),
        ToolContext::new(workspace.clone()),
        setting.agent_config.clone(),
    );
    let mut agent = Agent::new(
        Arc::clone(&setting.provider),
        Arc::new(registry),
        ToolContext::new(workspace),
        setting.agent_config.clone(),
    );
    if setting.approval == ApprovalPolicy::Ask {
        agent = agent.with_approver(Arc::new(TuiApprover { updates: updates.clone() }));
    }
    let (mut journal, mut plan) = (None, None);
    if let Some(opened) = opened {
        app.status.session = opened.journal.id();
        if let Some((history, tokens)) = opened.resumed {
            app.load_history(&history);
            agent = agent.with_counted_history(history, tokens);
        }
        agent = agent.with_journal(opened.journal.clone());
        plan = opened.plan.filter(|p| p.status != PlanStatus::Completed);
        if let Some(plan) = &plan {
            app.propose_plan(plan.clone());
        }
        journal = Some(opened.journal);
    }
    let worker =
        Worker { agent, planner, setting, store, redactor, journal, plan, revisions: 0, updates };
    Ok(Started { worker, app, mcp })
}

/// Draws, reads keys and applies updates until the user leaves.
async fn ui(
    mut app: App,
    requests: mpsc::UnboundedSender<Request>,
    mut updates: mpsc::UnboundedReceiver<Update>,
) -> std::io::Result<()> {
    let mut terminal = terminal::enter()?;
    let mut events = EventStream::new();
    let mut ticker = tokio::time::interval(Duration::from_millis(100));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut pending: HashMap<String, oneshot::Sender<Approval>> = HashMap::new();
    let mut cancel = CancellationToken::new();
    loop {
        terminal.draw(|frame| axon_tui::draw(frame, &mut app))?;
        let animate = app.is_busy() || app.hint.is_some();
        let action = tokio::select! {
            event = events.next() => match event {
                Some(Ok(Event::Key(key))) => app.on_key(key),
                Some(Ok(Event::Paste(text))) => {
                    app.on_paste(&text);
                    None
                }
                Some(Ok(_)) => None,
                Some(Err(e)) => return Err(e),
                None => Some(Action::Quit),
            },
            update = updates.recv() => {
                let Some(update) = update else { return Ok(()) };
                apply(&mut app, update, &mut pending)?;
                // Tokens arrive faster than frames: take all that wait.
                while let Ok(update) = updates.try_recv() {
                    apply(&mut app, update, &mut pending)?;
                }
                None
            }
            _ = ticker.tick(), if animate => {
                app.tick();
                None
            }
        };
        let Some(action) = action else { continue };
        let request = match action {
            Action::Quit => {
                cancel.cancel();
                return Ok(());
            }
            Action::Cancel => {
                cancel.cancel();
                None
            }
            Action::Submit { text, mode } => {
                cancel = CancellationToken::new();
                app.turn_started();
                Some(Request::Prompt { text, mode, cancel: cancel.clone() })
            }
            Action::Approve { call_id, answer } => {
                if let Some(reply) = pending.remove(&call_id) {
                    let _ = reply.send(match answer {
                        Answer::Once => Approval::Allow,
                        Answer::Session => Approval::AllowTool,
                        Answer::Deny => Approval::Deny("the user denied this call".to_string()),
                    });
                }
                None
            }
            Action::Plan(PlanDecision::Approve) => {
                cancel = CancellationToken::new();
                app.turn_started();
                Some(Request::ApprovePlan { cancel: cancel.clone() })
            }
            Action::Plan(PlanDecision::Reject) => {
                app.plan = None;
                Some(Request::RejectPlan)
            }
            Action::Plan(PlanDecision::Edit) => {
                let Some(plan) = app.plan.as_ref().map(|p| p.plan.clone()) else { continue };
                terminal::leave();
                let edited = crate::plan_edit::edit(&plan);
                terminal = terminal::enter()?;
                terminal.clear()?;
                match edited {
                    Ok(plan) => Some(Request::PlanEdited(plan)),
                    Err(e) => {
                        app.notice(Level::Error, format!("{e:#}"));
                        None
                    }
                }
            }
            Action::Command { name, argument } => {
                cancel = CancellationToken::new();
                if name == "compact" {
                    app.turn_started();
                }
                Some(Request::Command { name, argument, cancel: cancel.clone() })
            }
        };
        if let Some(request) = request
            && requests.send(request).is_err()
        {
            app.notice(Level::Error, "the agent has stopped; restart axon");
        }
    }
}

fn apply(
    app: &mut App,
    update: Update,
    pending: &mut HashMap<String, oneshot::Sender<Approval>>,
) -> std::io::Result<()> {
    match update {
        Update::Crashed(message) => return Err(std::io::Error::other(message)),
        Update::Event(event) => app.on_agent_event(event),
        Update::Approval { call, reply } => {
            pending.insert(call.id.clone(), reply);
            app.ask_approval(call);
        }
        Update::Done { note } => app.turn_finished(note),
        Update::Notice(level, text) => app.notice(level, text),
        Update::PlanProposed(plan) => app.propose_plan(plan),
        Update::PlanChanged(plan) => app.update_plan(plan),
        Update::History(history) => {
            app.load_history(&history);
            app.plan = None;
        }
        Update::Session(id) => app.status.session = id,
        Update::Model { provider, model, window } => {
            app.status.provider = provider;
            app.status.model = model;
            app.status.window = window;
        }
        Update::Tokens(tokens) => app.status.tokens = tokens,
        Update::Files(files) => app.files = files,
    }
    Ok(())
}
