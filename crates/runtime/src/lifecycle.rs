//! The session's [`Lifecycle`]: the user's hooks run at each step of a
//! run, and a checkpoint of the workspace's files is taken before the
//! first call of a turn that may change them.
//!
//! Guarantees: a turn's checkpoint is taken before its first tool that is
//! not read-only runs (whatever that tool is: an edit, a write, a command,
//! an MCP tool), once per turn, and recorded in the session file with the
//! turn's number; nothing is snapshotted for a session that is not saved
//! (it could not be rewound); a turn that took one is snapshotted again
//! when it ends, so a rewind restores what the turn changed and nothing
//! else. A checkpoint that fails is a warning, never
//! a refusal of the call, and checkpoints stop for the session after one
//! failure (git missing) rather than warning at every turn. Hook verdicts
//! map onto the agent's one to one; hooks' own failures are warnings.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use axon_checkpoint::{Checkpoints, SkipReason};
use axon_core::{HookPermission, Lifecycle, LifecycleFuture, Verdict};
use axon_hooks::{
    CompactTrigger, EndReason, EventData, HookInput, HookOutcome, Hooks, NotificationKind,
    Permission, SessionSource,
};
use axon_protocol::{AgentEvent, ToolCall, ToolOutput, ToolSpec};

use crate::events::Emitter;
use crate::journal::SessionJournal;

/// The hooks and checkpoints of one session.
pub(crate) struct SessionLifecycle {
    hooks: Hooks,
    checkpoints: Mutex<Checkpointing>,
    workspace: PathBuf,
    events: Emitter,
    state: Mutex<TurnState>,
}

/// The shadow repository, opened at the first checkpoint (not at start-up:
/// a session that changes nothing never pays for it).
#[derive(Clone)]
pub(crate) enum Checkpointing {
    /// Opened under this data folder when first needed, keeping the
    /// config's ignored-file budget if it names one.
    Later(PathBuf, Option<axon_checkpoint::IgnoredBudget>),
    Open(Checkpoints),
    /// None are taken: the session is not saved (`None`), or they failed
    /// for this reason (recorded for every turn that then goes without).
    Off(Option<String>),
}

/// The longest Notification `message` (an MCP server's form text is its own).
const NOTIFICATION_CHARS: usize = 200;

/// Files one turn deleted or rewrote from which the user is shown them.
const MANY_LOST: usize = 20;
/// Paths named in that warning; the rest are counted.
const LOST_NAMED: usize = 20;

/// The warning for a turn that deleted or rewrote `lost` (many files).
fn lost_message(turn: u32, lost: &[PathBuf]) -> String {
    let named: Vec<String> =
        lost.iter().take(LOST_NAMED).map(|p| format!("  {}", p.display())).collect();
    let more = lost.len().saturating_sub(LOST_NAMED);
    let more = if more > 0 { format!("\n  … and {more} more") } else { String::new() };
    format!(
        "turn {turn} deleted or rewrote {} files that existed before it:\n{}{more}\n\
         `/rewind` (or `axon rewind`) puts back what the checkpoint holds",
        lost.len(),
        named.join("\n")
    )
}

#[derive(Default)]
struct TurnState {
    journal: Option<Arc<SessionJournal>>,
    /// The session-wide number of the turn running (0 before the first).
    turn: u32,
    /// This turn's checkpoint is taken.
    checkpointed: bool,
    /// Its snapshot, taken before the turn's first change.
    before: Option<String>,
    /// Paths a checkpoint left out that the user was told of.
    told: HashSet<PathBuf>,
    /// What `SessionStart` hooks added, for the first request.
    start_context: Vec<String>,
}

impl SessionLifecycle {
    pub(crate) fn new(
        hooks: Hooks,
        checkpoints: Checkpointing,
        workspace: PathBuf,
        events: Emitter,
    ) -> Self {
        SessionLifecycle {
            hooks,
            checkpoints: Mutex::new(checkpoints),
            workspace,
            events,
            state: Mutex::new(TurnState::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, TurnState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The session file turns and checkpoints are recorded in (`None`: a
    /// session not saved, or a new conversation not saved yet).
    pub(crate) fn set_journal(&self, journal: Option<Arc<SessionJournal>>) {
        let mut state = self.state();
        state.journal = journal;
        state.checkpointed = false;
    }

    /// A turn begins: recorded in the session file, numbered across
    /// resumes; its first change will be checkpointed.
    pub(crate) fn begin_turn(&self) {
        let mut state = self.state();
        state.checkpointed = false;
        state.before = None;
        if let Some(journal) = &state.journal {
            state.turn = journal.begin_turn();
        }
    }

    /// A turn ended: if it took a checkpoint (it may have changed files),
    /// the files are snapshotted again and recorded, so a rewind knows
    /// exactly what the turn changed and can leave later edits alone. A
    /// snapshot that fails only loses that precision (a warning).
    pub(crate) async fn end_turn(&self) {
        let (journal, turn) = {
            let mut state = self.state();
            if !std::mem::take(&mut state.checkpointed) {
                return;
            }
            let Some(journal) = state.journal.clone() else { return };
            (journal, state.turn)
        };
        let state = self.checkpoints.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let Checkpointing::Open(checkpoints) = state else { return };
        let session = journal.id();
        let label = format!("after turn {turn}");
        let before = self.state().before.take();
        let taken = tokio::task::spawn_blocking(move || {
            let snapshot = checkpoints.snapshot(&session, &label)?;
            // What the turn destroyed, when it touched many files at once.
            let lost = match before {
                Some(before) if snapshot.changed >= MANY_LOST => {
                    checkpoints.lost_between(&before, &snapshot.id).unwrap_or_default()
                }
                _ => Vec::new(),
            };
            Ok::<_, axon_checkpoint::CheckpointError>((snapshot, lost))
        })
        .await;
        match taken {
            Ok(Ok((snapshot, lost))) => {
                if lost.len() >= MANY_LOST {
                    self.events.emit(AgentEvent::Warning { message: lost_message(turn, &lost) });
                }
                journal.turn_changed(turn, &snapshot.id, snapshot.changed)
            }
            Ok(Err(e)) => self.after_turn_failed(turn, &e.to_string()),
            Err(e) => self.after_turn_failed(turn, &e.to_string()),
        }
    }

    fn after_turn_failed(&self, turn: u32, error: &str) {
        self.events.emit(AgentEvent::Warning {
            message: format!(
                "the files after turn {turn} could not be snapshotted ({error}); rewinding it will \
                 restore every file as it was before the turn, later edits included"
            ),
        });
    }

    /// Runs the `SessionStart` hooks; what they add goes with the first
    /// request.
    pub(crate) async fn session_started(&self, source: SessionSource) {
        let verdict = self.run(EventData::SessionStart { source }).await;
        for message in verdict.warnings {
            self.events.emit(AgentEvent::Warning { message });
        }
        self.state().start_context.extend(verdict.context);
    }

    /// Tells the Notification hooks the session waits on the user, without
    /// waiting for them: what waits (an approval) goes on at once. The
    /// hook's input is the session as it is now (a `/clear` before the hook
    /// starts does not change its `session_id`), and the running hook holds
    /// the event stream only weakly, so a session that closes meanwhile
    /// ends its stream at once.
    pub(crate) fn notify(&self, kind: NotificationKind, message: String) {
        if !self.hooks.has(axon_hooks::HookEvent::Notification) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        // What a server or a model wrote goes into hooks' shell strings
        // (`notify-send "$message"`): one line, no control characters, short.
        let message: String = message
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(NOTIFICATION_CHARS)
            .collect();
        let input = self.input(EventData::Notification { notification_type: kind, message });
        let hooks = self.hooks.clone();
        let events = self.events.downgrade();
        runtime.spawn(async move {
            for message in verdict(hooks.run(&input).await).warnings {
                events.emit(AgentEvent::Warning { message });
            }
        });
    }

    /// The session ends: its SessionEnd hooks run (and are waited for, as
    /// in Claude Code, so a hook that saves something finishes).
    pub(crate) async fn session_ended(&self, reason: EndReason) {
        for message in self.run(EventData::SessionEnd { reason }).await.warnings {
            self.events.emit(AgentEvent::Warning { message });
        }
    }

    /// What a hook is told of the session around `data`.
    pub(crate) fn input(&self, data: EventData) -> HookInput {
        let state = self.state();
        let (session_id, transcript_path) = match &state.journal {
            Some(journal) => (journal.id(), Some(journal.path())),
            None => (String::new(), None),
        };
        HookInput {
            session_id,
            transcript_path,
            cwd: self.workspace.clone(),
            permission_mode: None,
            data,
        }
    }

    async fn run(&self, data: EventData) -> Verdict {
        if !self.hooks.has(data.event()) {
            return Verdict::default();
        }
        let input = self.input(data);
        verdict(self.hooks.run(&input).await)
    }

    /// Takes this turn's checkpoint if it is due.
    async fn checkpoint(&self) {
        let (journal, turn) = {
            let mut state = self.state();
            if state.checkpointed {
                return;
            }
            let Some(journal) = state.journal.clone() else { return };
            state.checkpointed = true;
            (journal, state.turn)
        };
        let state = self.checkpoints.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let checkpoints = match state {
            Checkpointing::Off(None) => return,
            Checkpointing::Off(Some(reason)) => return journal.checkpoint_missed(turn, &reason),
            Checkpointing::Open(checkpoints) => checkpoints,
            Checkpointing::Later(data, budget) => {
                let workspace = self.workspace.clone();
                let opened = tokio::task::spawn_blocking(move || {
                    Checkpoints::open(&data, &workspace)
                        .and_then(|checkpoints| match budget {
                            Some(budget) => checkpoints.keep_ignored_budget(budget),
                            None => Ok(checkpoints),
                        })
                        .map_err(|e| e.to_string())
                })
                .await;
                match opened {
                    Ok(Ok(checkpoints)) => {
                        *self.checkpoints.lock().unwrap_or_else(PoisonError::into_inner) =
                            Checkpointing::Open(checkpoints.clone());
                        checkpoints
                    }
                    Ok(Err(e)) => return self.give_up(&journal, turn, &e),
                    Err(e) => return self.give_up(&journal, turn, &e.to_string()),
                }
            }
        };
        let session = journal.id();
        let label = format!("turn {turn}");
        let ignored_budget = checkpoints.ignored_budget();
        let taken =
            tokio::task::spawn_blocking(move || checkpoints.snapshot(&session, &label)).await;
        let snapshot = match taken {
            Ok(Ok(snapshot)) => snapshot,
            Ok(Err(e)) => return self.give_up(&journal, turn, &e.to_string()),
            Err(e) => return self.give_up(&journal, turn, &e.to_string()),
        };
        let mut left_out = Vec::new();
        let budget = ignored_budget;
        let mut state = self.state();
        state.before = Some(snapshot.id.clone());
        for skipped in &snapshot.skipped {
            if skipped.reason == SkipReason::BuildFolder {
                // Made again by a build: recorded, not worth a warning.
                left_out.push(format!("{} (a build or dependency folder)", skipped.path.display()));
                continue;
            }
            let why = match skipped.reason {
                SkipReason::TooLarge(bytes) => {
                    format!("{} MB, over the 10 MB limit", bytes / (1024 * 1024))
                }
                SkipReason::NestedRepository => "a git repository of its own".to_string(),
                SkipReason::Unreadable => "unreadable".to_string(),
                SkipReason::Occupied => "in the way".to_string(),
                SkipReason::ChangedSince => "changed since".to_string(),
                SkipReason::OverBudget(bytes) => format!(
                    "ignored by git, and at {} KB past what snapshots keep of ignored files: {} \
                     KB a file, {} MB in all ([checkpoints] in the config)",
                    bytes.div_ceil(1024),
                    budget.file_bytes / 1024,
                    budget.total_bytes / (1024 * 1024)
                ),
                SkipReason::BuildFolder => "a build or dependency folder".to_string(),
                SkipReason::IgnoredNotHeld => "ignored, and not in that snapshot".to_string(),
            };
            left_out.push(format!("{} ({why})", skipped.path.display()));
            if state.told.insert(skipped.path.clone()) {
                self.events.emit(AgentEvent::Warning {
                    message: format!(
                        "checkpoint: {} is left out ({why}); a rewind will not restore it",
                        skipped.path.display()
                    ),
                });
            }
        }
        drop(state);
        journal.checkpoint(turn, &snapshot.id, left_out);
    }

    fn give_up(&self, journal: &SessionJournal, turn: u32, error: &str) {
        journal.checkpoint_missed(turn, error);
        *self.checkpoints.lock().unwrap_or_else(PoisonError::into_inner) =
            Checkpointing::Off(Some(error.to_string()));
        self.events.emit(AgentEvent::Warning {
            message: format!(
                "checkpoints are off for this session (turns cannot be rewound): {error}"
            ),
        });
    }
}

impl Lifecycle for SessionLifecycle {
    fn prompt_submitted<'a>(&'a self, prompt: &'a str) -> LifecycleFuture<'a> {
        Box::pin(async move {
            let mut verdict =
                self.run(EventData::UserPromptSubmit { prompt: prompt.to_string() }).await;
            if verdict.block.is_none() {
                let start = std::mem::take(&mut self.state().start_context);
                verdict.context.splice(0..0, start);
            }
            verdict
        })
    }

    fn before_tool<'a>(&'a self, call: &'a ToolCall, spec: &'a ToolSpec) -> LifecycleFuture<'a> {
        Box::pin(async move {
            let verdict = self
                .run(EventData::PreToolUse {
                    tool_name: call.name.clone(),
                    tool_input: call.arguments.clone(),
                })
                .await;
            let refused = verdict.block.is_some()
                || matches!(verdict.permission, Some(HookPermission::Deny(_)));
            if !spec.annotations.read_only && !refused {
                self.checkpoint().await;
            }
            verdict
        })
    }

    fn after_tool<'a>(&'a self, call: &'a ToolCall, output: &'a ToolOutput) -> LifecycleFuture<'a> {
        Box::pin(self.run(EventData::PostToolUse {
            tool_name: call.name.clone(),
            tool_input: call.arguments.clone(),
            tool_response: serde_json::to_value(output).unwrap_or_default(),
        }))
    }

    fn stopping<'a>(&'a self, answer: &'a str, again: bool) -> LifecycleFuture<'a> {
        Box::pin(self.run(EventData::Stop {
            stop_hook_active: again,
            last_assistant_message: Some(answer.to_string()),
        }))
    }

    fn subagent_stopping<'a>(
        &'a self,
        agent: &'a str,
        answer: &'a str,
        again: bool,
    ) -> LifecycleFuture<'a> {
        Box::pin(self.run(EventData::SubagentStop {
            stop_hook_active: again,
            agent_type: Some(agent.to_string()),
            last_assistant_message: Some(answer.to_string()),
        }))
    }

    fn compacting(&self, auto: bool) -> LifecycleFuture<'_> {
        let trigger = if auto { CompactTrigger::Auto } else { CompactTrigger::Manual };
        Box::pin(self.run(EventData::PreCompact { trigger, custom_instructions: None }))
    }
}

/// The agent's verdict for what the hooks said.
pub(crate) fn verdict(outcome: HookOutcome) -> Verdict {
    let mut warnings = outcome.warnings;
    warnings.extend(outcome.system_messages);
    Verdict {
        block: outcome.blocked,
        halt: outcome.stop,
        permission: outcome.permission.map(|p| match p {
            Permission::Allow => HookPermission::Allow,
            Permission::Deny(reason) => HookPermission::Deny(reason),
            Permission::Ask(reason) => HookPermission::Ask(reason),
        }),
        context: outcome.additional_context,
        warnings,
    }
}

/// The watch that raises the Notification hooks: on each event that waits
/// on the user (a call to approve, an MCP server's form). Holds the
/// lifecycle weakly: the lifecycle's own emitter carries the watch.
pub(crate) fn notification_watch(lifecycle: &Arc<SessionLifecycle>) -> crate::events::Watch {
    let lifecycle = Arc::downgrade(lifecycle);
    Arc::new(move |event: &AgentEvent| {
        let (kind, message) = match event {
            AgentEvent::ApprovalRequested { call, .. } => (
                NotificationKind::PermissionPrompt,
                format!("axon needs your permission to use {}", call.name),
            ),
            AgentEvent::Elicitation { server, message, .. } => {
                (NotificationKind::ElicitationDialog, format!("{server} asks: {message}"))
            }
            _ => return,
        };
        if let Some(lifecycle) = lifecycle.upgrade() {
            lifecycle.notify(kind, message);
        }
    })
}
