//! `axon run "PROMPT"`: one task from start to answer, non-interactively.
//! A front end of the session runtime: it builds the config from its
//! flags, opens a session, sends operations and renders the events; at a
//! terminal it answers approval requests and plan decisions.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use axon_protocol::{AgentEvent, ApprovalDecision, Mode, Op, Plan, PlanStatus, StopReason};
use axon_runtime::{Events, ServerConsent, Session, SessionChoice, SessionConfig, SessionHandle};
use clap::Args;

use crate::exit;
use crate::options::AgentOptions;
use crate::render::Renderer;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The task. `-` reads it from stdin.
    #[arg(required_unless_present_any = ["compact", "approve_plan", "edit_plan"])]
    prompt: Option<String>,
    /// Continue the latest session of this workspace.
    #[arg(long = "continue", conflicts_with_all = ["resume", "compact"])]
    continue_session: bool,
    /// Continue the session ID (or a unique start of it; see `axon sessions list`).
    #[arg(long, value_name = "ID", conflicts_with = "compact")]
    resume: Option<String>,
    /// Summarise session ID's earlier turns to shrink what it sends, then stop.
    #[arg(long, value_name = "ID", conflicts_with = "prompt")]
    compact: Option<String>,
    /// Plan first: propose a plan (read-only tools only), then run its steps
    /// once approved (`--yes` approves it; otherwise the run stops with exit 4).
    #[arg(long, conflicts_with = "compact")]
    plan: bool,
    /// Run the plan saved in the session being continued (with --resume or
    /// --continue).
    #[arg(long, conflicts_with = "plan")]
    approve_plan: bool,
    /// Open the plan (proposed now, or saved in the session being
    /// continued) in $VISUAL/$EDITOR before it is approved.
    #[arg(long)]
    edit_plan: bool,
    /// Send the image FILE (PNG, JPEG, GIF or WebP) with the prompt, scaled
    /// down as read_file does; repeatable.
    #[arg(long = "image", value_name = "FILE", conflicts_with_all = ["compact", "plan", "approve_plan"])]
    images: Vec<PathBuf>,
    /// The workspace folder.
    #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    #[command(flatten)]
    options: AgentOptions,
    /// Print the event stream (docs/events.md), one JSON event per line, on
    /// stdout instead of text.
    #[arg(long)]
    json: bool,
    /// When the run ends (done or failed), write its session as an ATIF
    /// trajectory to FILE, atomically.
    #[arg(long, value_name = "FILE")]
    trajectory: Option<PathBuf>,
}

/// Exit status for a run cancelled with Ctrl-C, as shells expect.
const CANCELLED: u8 = 130;
/// Exit status when the iteration limit ended the run.
const ITERATION_LIMIT: u8 = 3;
/// Exit status when a plan waits for the user's approval.
const PLAN_PENDING: u8 = 4;

/// What a run learned from its events besides rendering them.
#[derive(Default)]
struct RunFacts {
    session_id: Option<String>,
    /// The plan as last shown, and whether it waits for approval.
    plan: Option<(Plan, bool)>,
}

/// The session and its events, as the run drives them.
struct Driver {
    session: Session,
    events: Events,
    renderer: Arc<Renderer>,
    seen: RunFacts,
    /// Someone at the terminal answers questions.
    interactive: bool,
    interrupt: Arc<Interrupt>,
}

/// Ctrl-C, as the run sees it: the session's turn is cancelled by the
/// watcher; a question waiting at the terminal stops waiting, and no
/// further operation is sent.
#[derive(Default)]
struct Interrupt {
    pressed: std::sync::atomic::AtomicBool,
    notify: tokio::sync::Notify,
}

impl Interrupt {
    fn press(&self) {
        self.pressed.store(true, std::sync::atomic::Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    fn pressed(&self) -> bool {
        self.pressed.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// `question` asked on a blocking thread; `None` once Ctrl-C is pressed
    /// (the read is abandoned; the process leaves without it).
    async fn ask<T: Send + 'static>(
        &self,
        question: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let pressed = self.notify.notified();
        if self.pressed() {
            return None;
        }
        tokio::select! {
            answer = tokio::task::spawn_blocking(question) => answer.ok(),
            () = pressed => None,
        }
    }
}

pub async fn run(args: RunArgs) -> u8 {
    let renderer = Arc::new(Renderer::new(args.json));
    let prompt = match args.prompt.as_deref().map(read_prompt).transpose() {
        Ok(prompt) => prompt.unwrap_or_default(),
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    // The user named these files, so they may lie outside the workspace;
    // each is checked and scaled as read_file's images are.
    let images = args.images.iter().map(|p| axon_runtime::user_image(p));
    let attachments = match images.collect::<Result<Vec<_>, String>>() {
        Ok(images) => images,
        Err(e) => {
            eprintln!("axon: {e}");
            return exit::USAGE;
        }
    };
    let saved_plan = args.approve_plan || (args.edit_plan && !args.plan);
    if saved_plan && args.resume.is_none() && !args.continue_session {
        eprintln!(
            "axon: --approve-plan and --edit-plan work on a saved plan: add --resume ID or --continue (or --plan for a new one)"
        );
        return exit::USAGE;
    }
    // Asking needs someone at a terminal who is not also the prompt's source.
    let interactive = args.prompt.as_deref() != Some("-")
        && std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal();
    let (emitter, mut events) = axon_runtime::channel();
    let mut opened = match config(&args, interactive) {
        Ok(config) => axon_runtime::open(config, emitter).await,
        Err(e) => Err(e),
    };
    // No provider at all: at a terminal, the local model is offered.
    if let Err(e) = &opened
        && let Ok(dirs) = axon_runtime::config::Dirs::from_env()
        && crate::first_run::offered_local_model(e, &dirs.data, interactive).await
    {
        let (emitter, fresh) = axon_runtime::channel();
        events = fresh;
        opened = match config(&args, interactive) {
            Ok(mut config) => {
                // The default pulled model, not a remote one the config names.
                config.provider = Some("local".into());
                config.model = Some(String::new());
                axon_runtime::open(config, emitter).await
            }
            Err(e) => Err(e),
        };
    }
    let session = match opened {
        Ok(session) => session,
        Err(e) => {
            while let Ok(event) = events.try_recv() {
                renderer.event(event);
            }
            eprintln!("axon: {e:#}");
            if let Some(path) = &args.trajectory {
                eprintln!(
                    "axon: no trajectory written to {}: the run ended before its session began",
                    path.display()
                );
            }
            return exit::USAGE;
        }
    };
    let interrupt = Arc::new(Interrupt::default());
    let watcher = tokio::spawn(watch_ctrl_c(session.handle(), Arc::clone(&interrupt)));
    let mut driver =
        Driver { session, events, renderer, seen: RunFacts::default(), interactive, interrupt };
    driver.drain();
    let code = if args.compact.is_some() {
        match driver.turn(Op::Compact).await {
            StopReason::EndTurn => exit::OK,
            StopReason::Cancelled => CANCELLED,
            _ => exit::FAILED,
        }
    } else if args.plan || saved_plan {
        driver.plan(&args, &prompt, saved_plan).await
    } else {
        let op = Op::UserTurn { text: prompt, attachments };
        match driver.turn(op).await {
            StopReason::EndTurn => exit::OK,
            // The refusal was shown as a warning; the task was not done.
            StopReason::Error | StopReason::Refusal => exit::FAILED,
            StopReason::MaxIterations => ITERATION_LIMIT,
            StopReason::Cancelled => {
                eprintln!("axon: cancelled");
                CANCELLED
            }
        }
    };
    watcher.abort();
    driver.renderer.finish();
    let Driver { session, mut events, renderer, seen, .. } = driver;
    session.shutdown().await;
    // Servers closing, as the stream's last events.
    while let Some(event) = events.recv().await {
        renderer.event(event);
    }
    match (&args.trajectory, seen.session_id) {
        // The file a harness waits for is missing: not a success.
        (Some(path), Some(id)) if !write_trajectory(&id, path) && code == exit::OK => exit::FAILED,
        (Some(path), None) => {
            eprintln!(
                "axon: no trajectory written to {}: the run saved no session",
                path.display()
            );
            if code == exit::OK { exit::FAILED } else { code }
        }
        _ => code,
    }
}

/// `--trajectory FILE`: the run's session as ATIF, what could not be read
/// of it and any failure said on stderr; false if it was not written.
fn write_trajectory(id: &str, path: &std::path::Path) -> bool {
    let written = axon_runtime::config::Dirs::from_env().and_then(|dirs| {
        let store = axon_runtime::SessionStore::new(&dirs.data);
        axon_runtime::trajectory::write(&store, id, path)
    });
    match written {
        Ok(skipped) => {
            for line in skipped {
                eprintln!("axon: warning: left out of the trajectory: {line}");
            }
            true
        }
        Err(e) => {
            eprintln!("axon: no trajectory written to {}: {e:#}", path.display());
            false
        }
    }
}

/// The session config: the agent's flags, the session to continue, and
/// who may be asked.
fn config(args: &RunArgs, interactive: bool) -> Result<SessionConfig> {
    let mut config = args.options.session_config(&args.dir)?;
    config.session = match (&args.compact, &args.resume, args.continue_session) {
        (Some(id), _, _) | (None, Some(id), _) => SessionChoice::Id(id.clone()),
        (None, None, true) => SessionChoice::Latest,
        (None, None, false) => SessionChoice::New,
    };
    config.interactive = interactive;
    // `--yes` approves the plan, and so the revisions after a failed step.
    config.auto_approve_plans = args.options.yes;
    if !args.options.yes && interactive {
        config.workspace_servers = ServerConsent::Ask(Arc::new(|server, description| {
            confirm(&format!(
                "Start MCP server {:?} from {} ({description})?",
                server.name, server.source
            ))
        }));
    }
    // Compacting needs no tools, so no servers are started for it.
    config.start_servers = args.compact.is_none();
    Ok(config)
}

impl Driver {
    /// Renders the events already there (those of opening the session).
    fn drain(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            self.note(&event);
            self.renderer.event(event);
        }
    }

    fn note(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::SessionStarted { session } => {
                self.seen.session_id.clone_from(&session.session_id);
            }
            AgentEvent::SessionSaved { session_id } => {
                self.seen.session_id = Some(session_id.clone());
            }
            AgentEvent::PlanProposed { plan } => self.seen.plan = Some((plan.clone(), true)),
            AgentEvent::PlanChanged { plan } => self.seen.plan = Some((plan.clone(), false)),
            _ => {}
        }
    }

    /// Sends `op` and renders its events until its turn completes.
    async fn turn(&mut self, op: Op) -> StopReason {
        if self.interrupt.pressed() {
            return StopReason::Cancelled;
        }
        self.session.submit(op);
        while let Some(event) = self.events.recv().await {
            self.note(&event);
            let done = match &event {
                AgentEvent::TurnCompleted { stop_reason, .. } => Some(*stop_reason),
                _ => None,
            };
            if let AgentEvent::ApprovalRequested { call, rule, preview } = &event {
                // What the call would do (its diff is printed above), not
                // its raw arguments.
                let question = format!("Allow {}: {}?", call.name, preview.summary(&call.name));
                let always = rule.as_ref().map(|rule| rule.always_text());
                let call_id = call.id.clone();
                self.renderer.event(event);
                let decision = if self.interactive {
                    self.interrupt.ask(move || ask(&question, always.as_deref())).await.unwrap_or(
                        ApprovalDecision::Deny {
                            reason: Some("the run was cancelled".to_string()),
                        },
                    )
                } else {
                    ApprovalDecision::Deny { reason: Some("no one can answer here".to_string()) }
                };
                self.session.submit(Op::Approve { call_id, decision });
                continue;
            }
            self.renderer.event(event);
            if let Some(stop_reason) = done {
                return stop_reason;
            }
        }
        StopReason::Error
    }

    /// `--plan`, `--approve-plan`, `--edit-plan`: propose (or take the
    /// saved plan), let the user approve or edit it, then run it.
    async fn plan(&mut self, args: &RunArgs, goal: &str, saved: bool) -> u8 {
        if saved {
            match &self.seen.plan {
                Some((_, true)) => {}
                Some((plan, false)) if plan.status == PlanStatus::Completed => {
                    eprintln!("axon: the session's plan is already completed");
                    return exit::USAGE;
                }
                _ => {
                    eprintln!(
                        "axon: the session has no plan to approve; propose one with axon run --plan \"GOAL\""
                    );
                    return exit::USAGE;
                }
            }
        } else {
            self.session.submit(Op::SetMode { mode: Mode::Plan });
            let op = Op::UserTurn { text: goal.to_string(), attachments: Vec::new() };
            let stop = self.turn(op).await;
            self.session.submit(Op::SetMode { mode: Mode::React });
            match stop {
                StopReason::EndTurn => {}
                StopReason::Cancelled => return CANCELLED,
                _ => return exit::FAILED,
            }
        }
        if args.edit_plan && !self.edit().await {
            return exit::FAILED;
        }
        // At a terminal the user can approve, edit or reject it now; a
        // rejection keeps it saved for later.
        let mut approved = args.options.yes || args.approve_plan;
        while self.interactive && !approved {
            match self.interrupt.ask(ask_plan).await {
                Some('y') => approved = true,
                Some('e') => {
                    self.edit().await;
                }
                Some(_) => break,
                None => {
                    eprintln!("axon: cancelled; the plan stays saved in the session");
                    return CANCELLED;
                }
            }
        }
        if !approved {
            return self.pending();
        }
        match self.turn(Op::ApprovePlan).await {
            StopReason::EndTurn if matches!(self.seen.plan, Some((_, true))) => self.pending(),
            StopReason::EndTurn => exit::OK,
            StopReason::Cancelled => {
                eprintln!("axon: cancelled");
                CANCELLED
            }
            _ => exit::FAILED,
        }
    }

    /// Opens the waiting plan in the user's editor; false if that failed.
    async fn edit(&mut self) -> bool {
        let Some((plan, _)) = self.seen.plan.clone() else { return false };
        match tokio::task::spawn_blocking(move || crate::plan_edit::edit(&plan)).await {
            Ok(Ok(edited)) => {
                self.session.submit(Op::EditPlan { plan: edited });
                // It waits again once the session has it.
                while let Some(event) = self.events.recv().await {
                    self.note(&event);
                    let shown = matches!(event, AgentEvent::PlanProposed { .. });
                    self.renderer.event(event);
                    if shown {
                        break;
                    }
                }
                true
            }
            Ok(Err(e)) => {
                eprintln!("axon: {e}");
                false
            }
            Err(e) => {
                eprintln!("axon: the editor could not be started: {e}");
                false
            }
        }
    }

    fn pending(&self) -> u8 {
        let id = self.seen.session_id.as_deref().unwrap_or("ID");
        eprintln!(
            "axon: the plan awaits approval; run it with: axon run --resume {id} --approve-plan"
        );
        PLAN_PENDING
    }
}

/// `y` (run it), `e` (edit it) or `n` (keep it for later), asked at the terminal.
fn ask_plan() -> char {
    eprint!("Run this plan? [y]es / [e]dit / [N]o: ");
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_err() {
        return 'n';
    }
    answer.trim().chars().next().map(|c| c.to_ascii_lowercase()).unwrap_or('n')
}

/// The first Ctrl-C cancels the run cleanly; a second one leaves at once.
async fn watch_ctrl_c(session: SessionHandle, interrupt: Arc<Interrupt>) {
    if tokio::signal::ctrl_c().await.is_ok() {
        session.submit(Op::Cancel);
        interrupt.press();
        if tokio::signal::ctrl_c().await.is_ok() {
            crate::leave(CANCELLED);
        }
    }
}

pub(crate) fn confirm(question: &str) -> bool {
    eprint!("{question} [y/N]: ");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok() && matches!(answer.trim(), "y" | "Y" | "yes")
}

fn read_prompt(arg: &str) -> Result<String> {
    let prompt = if arg == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).context("cannot read the prompt from stdin")?;
        text
    } else {
        arg.to_string()
    };
    if prompt.trim().is_empty() {
        bail!("the prompt is empty; say what to do, e.g. axon run \"explain src/main.rs\"");
    }
    Ok(prompt)
}

/// Asks at the terminal. "Always" is offered only with the rule it would
/// save (`always`, its description), and says what that is.
fn ask(question: &str, always: Option<&str>) -> ApprovalDecision {
    let shown: String = question.chars().take(300).collect();
    match always {
        Some(rule) => eprint!("{shown} [y]es / [a]lways: {rule} / [n]o: "),
        None => eprint!("{shown} [y]es / [n]o: "),
    }
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_err() {
        return ApprovalDecision::Deny { reason: Some("no answer could be read".to_string()) };
    }
    match answer.trim().to_lowercase().as_str() {
        "y" | "yes" => ApprovalDecision::Once,
        "a" | "always" if always.is_some() => ApprovalDecision::Always,
        _ => ApprovalDecision::Deny { reason: Some("the user said no".to_string()) },
    }
}
