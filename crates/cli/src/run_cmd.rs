//! `axon run "PROMPT"`: one task from start to answer, non-interactively.

use std::future::Future;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use axon_core::{Agent, Approval, ApprovalPolicy, Approver, CancellationToken, RunOutcome};
use axon_mcp::config::{ServerConfig, Transport};
use axon_mcp::{McpManager, ServerState, StatusObserver};
use axon_protocol::AgentEvent;
use axon_protocol::StepStatus;
use axon_protocol::{ToolCall, ToolSpec};
use axon_store::SessionStore;
use axon_tools::{Profile, ToolContext};
use clap::Args;

use crate::config::Effective;
use crate::exit;
use crate::render::Renderer;
use crate::session;
use crate::setting::{AgentOptions, Setting, mcp_status_event};
use crate::tool_cmd::ProfileArg;
use axon_core::plan::{Execution, Planner, execute, new_plan, revise, revision_request};

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
    /// The workspace folder.
    #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    #[command(flatten)]
    options: AgentOptions,
    /// Print one JSON event per line on stdout instead of text.
    #[arg(long)]
    json: bool,
}

/// Exit status for a run cancelled with Ctrl-C, as shells expect.
const CANCELLED: u8 = 130;
/// Exit status when the iteration limit ended the run.
const ITERATION_LIMIT: u8 = 3;

pub async fn run(args: RunArgs) -> u8 {
    let renderer = Arc::new(Renderer::new(args.json));
    let prepared = match prepare(&args, Arc::clone(&renderer)).await {
        Ok(prepared) => prepared,
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    let Prepared { mut agent, prompt, mcp, journal, plan, planner } = prepared;
    let cancel = CancellationToken::new();
    let watcher = tokio::spawn(watch_ctrl_c(cancel.clone()));
    if let Some(planner) = planner {
        let code =
            run_plan(&args, &renderer, &mut agent, planner, &journal, plan, &prompt, &cancel).await;
        watcher.abort();
        renderer.finish();
        mcp.shutdown().await;
        return code;
    }
    if args.compact.is_some() {
        let result = agent.compact_all(&cancel).await;
        watcher.abort();
        return match result {
            Ok(0) => {
                eprintln!("axon: nothing to compact: the session has only its latest request");
                exit::OK
            }
            Ok(n) => {
                eprintln!(
                    "axon: summarised the session's oldest {n} messages; the file keeps them all"
                );
                exit::OK
            }
            Err(e) => {
                eprintln!("axon: could not compact the session: {e}");
                exit::FAILED
            }
        };
    }
    let emit = |event| renderer.event(event);
    let outcome = agent.run(&prompt, &emit, &cancel).await;
    watcher.abort();
    renderer.finish();
    mcp.shutdown().await;
    match outcome {
        RunOutcome::Answered(_) => exit::OK,
        RunOutcome::Failed(_) => exit::FAILED,
        RunOutcome::IterationLimit(_) => ITERATION_LIMIT,
        RunOutcome::Cancelled(_) => {
            eprintln!("axon: cancelled");
            CANCELLED
        }
    }
}

/// Exit status when a plan waits for the user's approval.
const PLAN_PENDING: u8 = 4;
/// Revisions after failed steps before plan mode gives up.
const MAX_REVISIONS: u32 = 2;

/// `--plan` and `--approve-plan`: propose (or take the saved plan), wait for
/// approval, run the steps in order, and revise after a failed step.
#[allow(clippy::too_many_arguments)]
async fn run_plan(
    args: &RunArgs,
    renderer: &Renderer,
    agent: &mut Agent,
    mut planner: Planner,
    journal: &session::SessionJournal,
    saved: Option<axon_protocol::Plan>,
    goal: &str,
    cancel: &CancellationToken,
) -> u8 {
    let emit = |event| renderer.event(event);
    let pending = |journal: &session::SessionJournal| {
        eprintln!(
            "axon: the plan awaits approval; run it with: axon run --resume {} --approve-plan",
            journal.id()
        );
        PLAN_PENDING
    };
    let mut plan = if args.approve_plan || (args.edit_plan && !args.plan) {
        match saved {
            Some(mut plan) if plan.status != axon_protocol::PlanStatus::Completed => {
                // A step that failed or was cut off runs again.
                for step in &mut plan.steps {
                    if matches!(step.status, StepStatus::Running | StepStatus::Failed) {
                        step.status = StepStatus::Pending;
                        step.result = None;
                    }
                }
                plan
            }
            Some(_) => {
                eprintln!("axon: the session's plan is already completed");
                return exit::USAGE;
            }
            None => {
                eprintln!(
                    "axon: the session has no plan to approve; propose one with axon run --plan \"GOAL\""
                );
                return exit::USAGE;
            }
        }
    } else {
        match planner.propose(goal, &emit, cancel).await {
            Ok(steps) => {
                let plan = new_plan(goal, steps);
                journal.plan(&plan);
                emit(AgentEvent::Plan { plan: plan.clone() });
                plan
            }
            Err(e) => {
                eprintln!("axon: no plan was proposed: {e}");
                return if cancel.is_cancelled() { CANCELLED } else { exit::FAILED };
            }
        }
    };
    if args.edit_plan {
        match crate::plan_edit::edit(&plan) {
            Ok(edited) => {
                plan = edited;
                journal.plan(&plan);
                emit(AgentEvent::Plan { plan: plan.clone() });
            }
            Err(e) => {
                eprintln!("axon: {e}");
                return exit::FAILED;
            }
        }
    }
    // At a terminal the user can approve, edit or reject it now; a
    // rejection keeps it saved for later.
    let interactive = args.prompt.as_deref() != Some("-")
        && std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal();
    let mut approved = args.options.yes || args.approve_plan;
    while interactive && !approved {
        match ask_plan() {
            'y' => approved = true,
            'e' => match crate::plan_edit::edit(&plan) {
                Ok(edited) => {
                    plan = edited;
                    journal.plan(&plan);
                    emit(AgentEvent::Plan { plan: plan.clone() });
                }
                Err(e) => eprintln!("axon: {e}"),
            },
            _ => break,
        }
    }
    if !approved {
        return pending(journal);
    }
    plan.status = axon_protocol::PlanStatus::Approved;
    journal.plan(&plan);
    let mut revisions = 0;
    loop {
        let save = |p: &axon_protocol::Plan| journal.plan(p);
        match execute(agent, &mut plan, &emit, cancel, &save).await {
            Execution::Completed => return exit::OK,
            Execution::Cancelled => {
                eprintln!("axon: cancelled");
                return CANCELLED;
            }
            Execution::Failed { step, reason } => {
                if revisions == MAX_REVISIONS {
                    eprintln!(
                        "axon: step {step} failed again after {MAX_REVISIONS} revisions: {reason}"
                    );
                    return exit::FAILED;
                }
                revisions += 1;
                let request = revision_request(&plan, step, &reason);
                match planner.propose(&request, &emit, cancel).await {
                    Ok(steps) => {
                        plan = revise(&plan, steps);
                        journal.plan(&plan);
                        emit(AgentEvent::Plan { plan: plan.clone() });
                        if !args.options.yes {
                            return pending(journal);
                        }
                        plan.status = axon_protocol::PlanStatus::Approved;
                    }
                    Err(e) => {
                        eprintln!("axon: step {step} failed ({reason}) and no revision came: {e}");
                        return exit::FAILED;
                    }
                }
            }
        }
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
async fn watch_ctrl_c(cancel: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_ok() {
        cancel.cancel();
        if tokio::signal::ctrl_c().await.is_ok() {
            crate::leave(CANCELLED);
        }
    }
}

struct Prepared {
    agent: Agent,
    prompt: String,
    mcp: McpManager,
    journal: Arc<session::SessionJournal>,
    /// The plan saved in a continued session.
    plan: Option<axon_protocol::Plan>,
    /// For plan mode: proposes and revises plans.
    planner: Option<Planner>,
}

async fn prepare(args: &RunArgs, renderer: Arc<Renderer>) -> Result<Prepared> {
    let prompt = match &args.prompt {
        Some(prompt) => read_prompt(prompt)?,
        None => String::new(),
    };
    if (args.approve_plan || (args.edit_plan && !args.plan))
        && args.resume.is_none()
        && !args.continue_session
    {
        bail!(
            "--approve-plan and --edit-plan work on a saved plan: add --resume ID or --continue (or --plan for a new one)"
        );
    }
    let Setting {
        workspace,
        dirs,
        config,
        provider_config,
        provider,
        profile,
        approval,
        guidance: _,
        mut registry,
        agent_config,
    } = Setting::load(&args.dir, &args.options).await?;
    // Asking needs someone at a terminal who is not also the prompt's source.
    let interactive = args.prompt.as_deref() != Some("-")
        && std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal();
    let servers = servers_to_start(
        args.options.yes,
        approval,
        interactive,
        config.user_servers,
        config.workspace_servers,
    );
    let observer: StatusObserver = Arc::new(move |server: &str, state: &ServerState| {
        renderer.event(mcp_status_event(server, state));
    });
    let redactor = session::secrets(
        provider_config.api_key.as_deref(),
        &servers,
        &provider_config.api_key_env,
    );
    let choice = match (&args.compact, &args.resume, args.continue_session) {
        (Some(id), _, _) | (None, Some(id), _) => session::Choice::Id(id),
        (None, None, true) => session::Choice::Latest,
        (None, None, false) => session::Choice::New,
    };
    let store = SessionStore::new(&dirs.data);
    let info = provider.info();
    let opened = session::open(
        &store,
        choice,
        workspace.root(),
        &prompt,
        (&info.name, &info.model),
        redactor,
    )?;
    // Compacting needs no tools, so no servers are started for it.
    let servers = if args.compact.is_some() { Vec::new() } else { servers };
    let mcp = McpManager::start_observed(servers, workspace.root(), Some(observer)).await;
    for warning in mcp.register_tools(&mut registry) {
        eprintln!("axon: warning: {warning}");
    }
    let registry = Arc::new(registry);
    let planner = (args.plan || args.approve_plan || args.edit_plan).then(|| {
        let tools = profile.registry();
        let context = ToolContext::new(workspace.clone());
        Planner::new(Arc::clone(&provider), tools, context, agent_config.clone())
    });
    let journal = opened.journal;
    let mut agent = Agent::new(provider, registry, ToolContext::new(workspace), agent_config)
        .with_journal(journal.clone());
    if let Some((history, tokens)) = opened.resumed {
        agent = agent.with_counted_history(history, tokens);
    }
    if approval == ApprovalPolicy::Ask && interactive {
        agent = agent.with_approver(Arc::new(TerminalApprover));
    }
    Ok(Prepared { agent, prompt, mcp, journal, plan: opened.plan, planner })
}

/// The tool set: the command line's choice, else the config's, else code.
pub(crate) fn choose_profile(arg: Option<ProfileArg>, config: &Effective) -> Result<Profile> {
    Ok(match (arg, config.file.profile.as_deref()) {
        (Some(p), _) => p.into(),
        (None, None | Some("code")) => Profile::Code,
        (None, Some("vault")) => Profile::Vault,
        (None, Some(other)) => bail!("unknown profile '{other}' in the config; use code or vault"),
    })
}

/// The user's own MCP servers always start. A workspace's are commands a
/// repository asks to run: they start with --yes, after a yes at the
/// terminal, and never in read-only mode.
pub(crate) fn servers_to_start(
    yes: bool,
    approval: ApprovalPolicy,
    interactive: bool,
    user: Vec<ServerConfig>,
    workspace: Vec<ServerConfig>,
) -> Vec<ServerConfig> {
    let mut servers = user;
    for server in workspace {
        let allowed = if yes {
            true
        } else if approval == ApprovalPolicy::ReadOnly || !interactive {
            eprintln!(
                "axon: warning: MCP server {} from {} was not started: workspace servers run commands; pass --yes to allow them",
                server.name, server.source
            );
            false
        } else {
            confirm(&format!(
                "Start MCP server {:?} from {} ({})?",
                server.name,
                server.source,
                describe(&server)
            ))
        };
        if allowed {
            servers.push(server);
        }
    }
    servers
}

/// Everything about a server that decides what it runs or where secrets go,
/// quoted so control characters cannot disguise it.
pub(crate) fn describe(server: &ServerConfig) -> String {
    match &server.transport {
        Transport::Stdio { command, args, env, cwd } => {
            let mut text = format!("command {command:?} args {args:?}");
            if !env.is_empty() {
                text.push_str(&format!(" env {env:?}"));
            }
            if let Some(cwd) = cwd {
                text.push_str(&format!(" cwd {cwd:?}"));
            }
            text
        }
        Transport::Http { url, headers, bearer_token_env } => {
            let mut text = format!("url {url:?}");
            if !headers.is_empty() {
                text.push_str(&format!(" headers {:?}", headers.keys().collect::<Vec<_>>()));
            }
            if let Some(var) = bearer_token_env {
                text.push_str(&format!(" sending ${var} as a bearer token"));
            }
            text
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

/// Asks on the terminal before a tool changes anything.
struct TerminalApprover;

impl Approver for TerminalApprover {
    fn approve<'a>(
        &'a self,
        call: &'a ToolCall,
        _spec: &'a ToolSpec,
    ) -> Pin<Box<dyn Future<Output = Approval> + Send + 'a>> {
        let question = format!("Allow {} {}?", call.name, call.arguments);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || ask(&question))
                .await
                .unwrap_or_else(|e| Approval::Deny(format!("the question could not be asked: {e}")))
        })
    }
}

fn ask(question: &str) -> Approval {
    let shown: String = question.chars().take(300).collect();
    eprint!("{shown} [y]es / [a]lways for this tool / [n]o: ");
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_err() {
        return Approval::Deny("no answer could be read".to_string());
    }
    match answer.trim().to_lowercase().as_str() {
        "y" | "yes" => Approval::Allow,
        "a" | "always" => Approval::AllowTool,
        _ => Approval::Deny("the user said no".to_string()),
    }
}
