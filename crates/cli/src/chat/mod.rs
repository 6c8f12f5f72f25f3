//! `axon` / `axon chat`: the interactive terminal UI, a front end of the
//! session runtime.
//!
//! This task owns the terminal and the [`App`] (keys in, frames out); the
//! session owns the agent. Keys become operations, events become frames,
//! so the screen keeps drawing while a model streams or a tool runs, and
//! Esc reaches a running turn at once.

mod commands;
mod notify;
pub(crate) mod terminal;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use axon_protocol::{ApprovalDecision, Mode, Op};
use axon_runtime::{Events, ServerConsent, Session, SessionChoice};
use axon_tui::{Action, Answer, App, Level, PlanDecision, Theme};
use clap::Args;
use futures_util::StreamExt;
use ratatui::crossterm::event::{Event, EventStream};
use tokio::sync::oneshot;

use crate::exit;
use crate::options::AgentOptions;
use commands::Local;

/// How long leaving the UI waits for the session to close: the cancelled
/// turn, the SessionEnd hooks, the MCP servers.
const SHUTDOWN_BOUND: Duration = Duration::from_secs(10);

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
    let (emitter, mut events) = axon_runtime::channel();
    let (session, local) = match start(&args, emitter).await {
        Ok(started) => started,
        Err(e) => {
            // What opening said before it failed (a refused setting, a
            // server that did not start) explains it.
            while let Ok(event) = events.try_recv() {
                if let axon_protocol::AgentEvent::Warning { message } = event {
                    eprintln!("axon: warning: {message}");
                }
            }
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    let theme = Theme::from_env();
    if theme.color {
        axon_tui::highlight::warm_up();
    }
    let mut app = App::new(theme);
    while let Ok(event) = events.try_recv() {
        app.on_agent_event(event);
    }
    app.welcome();
    let (files_tx, files) = oneshot::channel();
    let root = local.workspace.root().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let _ = files_tx.send(axon_runtime::mentions::index(&root));
    });
    let mut notifier =
        notify::Notifier::new(notify::Signal::choose(local.notify, |v| std::env::var(v).ok()));
    let result = ui(&mut app, &session, events, files, &local, &mut notifier).await;
    terminal::leave();
    if !app.status.session.is_empty() {
        crate::say(&format!("resume this session with `axon --resume {}`", app.status.session));
    }
    // A turn still running was cancelled on the way out; SessionEnd hooks
    // and MCP servers' closing get what is left of the bound.
    let _ = tokio::time::timeout(SHUTDOWN_BOUND, session.shutdown()).await;
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("axon: the terminal failed: {e}");
            exit::FAILED
        }
    }
}

/// Everything before the first frame: config, model, session, MCP servers.
async fn start(args: &ChatArgs, emitter: axon_runtime::Emitter) -> Result<(Session, Local)> {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let mut config = args.options.session_config(&dir)?;
    config.session = match (&args.resume, args.continue_session) {
        (Some(id), _) => SessionChoice::Id(id.clone()),
        (None, true) => SessionChoice::Latest,
        (None, false) => SessionChoice::New,
    };
    config.interactive = true;
    config.end_reason = axon_runtime::EndReason::PromptInputExit;
    config.elicitation = true;
    config.replay_history = true;
    if !args.options.yes {
        // The terminal is still the shell's: ask there, before the UI.
        config.workspace_servers = ServerConsent::Ask(Arc::new(|server, description| {
            crate::run_cmd::confirm(&format!(
                "Start MCP server {:?} from {} ({description})?",
                server.name, server.source
            ))
        }));
    }
    // No provider at all: the local model is offered before the UI starts.
    let overrides = axon_runtime::config::Overrides {
        provider: config.provider.clone(),
        model: config.model.clone(),
    };
    if let Err(e) = config.config.provider(&overrides)
        && crate::first_run::offered_local_model(&e, &config.dirs.data, true).await
    {
        config.provider = Some("local".into());
        config.model = Some(String::new());
    }
    let local = Local {
        workspace: config.workspace.clone(),
        data: config.dirs.data.clone(),
        notify: config.config.file.notify.unwrap_or_default(),
    };
    let session = axon_runtime::open(config, emitter).await?;
    Ok((session, local))
}

/// Draws, reads keys and applies events until the user leaves.
async fn ui(
    app: &mut App,
    session: &Session,
    mut events: Events,
    mut files: oneshot::Receiver<Vec<String>>,
    local: &Local,
    notifier: &mut notify::Notifier,
) -> std::io::Result<()> {
    let mut terminal = terminal::enter()?;
    let mut keys = EventStream::new();
    let mut ticker = tokio::time::interval(Duration::from_millis(100));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut mode = Mode::React;
    let mut indexed = false;
    loop {
        terminal.draw(|frame| axon_tui::draw(frame, app))?;
        let animate = app.is_busy() || app.hint.is_some();
        let action = tokio::select! {
            key = keys.next() => match key {
                Some(Ok(Event::Key(key))) => app.on_key(key),
                Some(Ok(Event::Paste(text))) => {
                    paste(app, &text, local.workspace.root()).await;
                    None
                }
                Some(Ok(Event::FocusGained)) => {
                    notifier.focus(true);
                    None
                }
                Some(Ok(Event::FocusLost)) => {
                    notifier.focus(false);
                    None
                }
                Some(Ok(_)) => None,
                Some(Err(e)) => return Err(e),
                None => Some(Action::Quit),
            },
            event = events.recv() => {
                let Some(event) = event else {
                    return Err(std::io::Error::other("the session ended unexpectedly"));
                };
                notifier.notify(&event);
                app.on_agent_event(event);
                // Tokens arrive faster than frames: take all that wait.
                while let Ok(event) = events.try_recv() {
                    notifier.notify(&event);
                    app.on_agent_event(event);
                }
                None
            }
            listed = &mut files, if !indexed => {
                indexed = true;
                if let Ok(listed) = listed {
                    app.files = listed;
                }
                None
            }
            _ = ticker.tick(), if animate => {
                app.tick();
                None
            }
        };
        let Some(action) = action else { continue };
        match action {
            Action::Quit => {
                session.submit(Op::Cancel);
                return Ok(());
            }
            Action::Cancel => session.submit(Op::Cancel),
            Action::Submit { text, mode: wanted, images } => {
                if wanted != mode {
                    mode = wanted;
                    session.submit(Op::SetMode { mode });
                }
                app.turn_started();
                let mut attachments = axon_runtime::mentions::mentioned(&text, &app.files);
                attachments.extend(images);
                session.submit(Op::UserTurn { text, attachments });
            }
            Action::PasteImage => match axon_runtime::paste::clipboard_image().await {
                Ok(image) => app.attach_image("clipboard image".to_string(), image),
                Err(e) => app.notice(Level::Warning, e),
            },
            Action::Approve { call_id, answer } => {
                let decision = match answer {
                    Answer::Once => ApprovalDecision::Once,
                    Answer::Session => ApprovalDecision::Always,
                    Answer::Deny => ApprovalDecision::Deny { reason: None },
                };
                session.submit(Op::Approve { call_id, decision });
            }
            Action::DenyWithReason { call_id, reason } => {
                let decision = ApprovalDecision::Deny { reason: Some(reason) };
                session.submit(Op::Approve { call_id, decision });
            }
            Action::Elicit { id, action, content } => {
                session.submit(Op::Elicit { id, action, content });
            }
            Action::Plan(PlanDecision::Approve) => {
                app.turn_started();
                session.submit(Op::ApprovePlan);
            }
            Action::Plan(PlanDecision::Reject) => {
                app.plan = None;
                session.submit(Op::RejectPlan);
            }
            Action::Plan(PlanDecision::Edit) => {
                let Some(plan) = app.plan.as_ref().map(|p| p.plan.clone()) else { continue };
                terminal::leave();
                let edited = crate::plan_edit::edit(&plan);
                terminal = terminal::enter()?;
                terminal.clear()?;
                match edited {
                    Ok(plan) => session.submit(Op::EditPlan { plan }),
                    Err(e) => app.notice(Level::Error, e),
                }
            }
            Action::Command { name, argument } => match local.command(app, &name, &argument) {
                Some(Op::Compact) => {
                    app.turn_started();
                    session.submit(Op::Compact);
                }
                Some(op) => session.submit(op),
                None => {}
            },
            Action::Confirmed { name, argument } => {
                if let Some(op) = local.confirmed(app, &name, &argument) {
                    session.submit(op);
                }
            }
        }
    }
}

/// A paste: exactly one image file's path attaches that image (as
/// `axon run --image` reads it: the user's own file, wherever it is);
/// anything else is text for the input.
async fn paste(app: &mut App, text: &str, workspace: &std::path::Path) {
    let image = app
        .takes_attachments()
        .then(|| axon_runtime::paste::pasted_image_path(text, workspace))
        .flatten();
    let Some(path) = image else {
        app.on_paste(text);
        return;
    };
    let name = path
        .file_name()
        .map_or_else(|| path.display().to_string(), |name| name.to_string_lossy().into_owned());
    let read = tokio::task::spawn_blocking(move || axon_runtime::user_image(&path)).await;
    match read {
        Ok(Ok(image)) => app.attach_image(name, image),
        Ok(Err(e)) => app.notice(Level::Warning, e),
        Err(e) => app.notice(Level::Warning, format!("cannot attach {name}: {e}")),
    }
}
