//! A running session: the handle front ends hold, and the task that owns
//! the agent and carries out operations one at a time.
//!
//! Operations go in through [`Session::submit`]; everything that happens
//! comes out as events. `cancel`, `approve` and `elicit` act at once, even while a
//! turn runs; every other operation waits for the one before it.

use std::sync::{Arc, Mutex, PoisonError};

use crate::live_tools::LiveTools;
use axon_core::plan::Planner;
use axon_core::{Agent, ApprovalPolicy, CancellationToken, RunOutcome};
use axon_llm::ProviderConfig;
use axon_protocol::{
    AgentEvent, Attachment, ContentPart, Message, Mode, Op, Plan, PlanStatus, SessionInfo,
    StopReason,
};
use axon_tools::Workspace;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::approvals::SessionControl;
use crate::config::Effective;
use crate::events::Emitter;
use crate::journal::{SessionChoice, SessionJournal, Sessions};
use crate::lifecycle::SessionLifecycle;
use crate::meter::{Meter, Tally};

/// The session a front end opened. Dropped without [`Session::shutdown`],
/// it cancels what runs and ends in the background.
pub struct Session {
    handle: SessionHandle,
    task: Option<JoinHandle<()>>,
}

/// Sends operations to a session; cheap to clone (a Ctrl-C watcher, a
/// second window).
#[derive(Clone)]
pub struct SessionHandle {
    ops: mpsc::UnboundedSender<(Op, CancellationToken)>,
    shared: Arc<SessionControl>,
    /// The session's background commands and where to list them.
    background: Arc<(Arc<axon_tools::Jobs>, crate::events::WeakEmitter)>,
}

impl SessionHandle {
    /// Sends an operation. `cancel`, `approve`, `elicit`, `list_background` and `set_approval` take
    /// effect at once; the rest run in order after the work before them.
    pub fn submit(&self, op: Op) {
        match op {
            Op::Cancel => self.shared.cancel(),
            Op::SetApproval { approval } => {
                // At once, even mid-turn; the queued op updates what the
                // session reports about itself.
                self.shared.approval.set(approval.into());
                let _ = self.ops.send((op, self.shared.token()));
            }
            Op::Approve { call_id, decision } => {
                self.shared.answer(&call_id, decision);
            }
            Op::Elicit { id, action, content } => {
                self.shared.answer_form(&id, action, content);
            }
            // At once, even mid-turn: it is what the user looks at while a
            // turn waits on a build or a server.
            Op::ListBackground => {
                let commands = self.background_commands();
                self.background.1.emit(AgentEvent::BackgroundCommands { commands });
            }
            op => {
                let _ = self.ops.send((op, self.shared.token()));
            }
        }
    }
}

impl SessionHandle {
    /// The session's background commands, oldest first, as
    /// `list_background` reports them.
    pub fn background_commands(&self) -> Vec<axon_protocol::BackgroundCommand> {
        self.background.0.list()
    }
}

impl Session {
    pub(crate) fn start(task: Task, shared: Arc<SessionControl>) -> Session {
        let (ops, queue) = mpsc::unbounded_channel();
        let worker = Arc::clone(&shared);
        // Weak: the handle must not hold the event stream open after the
        // session ends (a front end waits for its end).
        let background = Arc::new((Arc::clone(&task.jobs), task.events.downgrade()));
        let task = tokio::spawn(task.serve(queue, worker));
        Session { handle: SessionHandle { ops, shared, background }, task: Some(task) }
    }

    /// See [`SessionHandle::submit`].
    pub fn submit(&self, op: Op) {
        self.handle.submit(op);
    }

    pub fn handle(&self) -> SessionHandle {
        self.handle.clone()
    }

    /// Ends the session after the work already submitted: MCP servers are
    /// closed, the session file synced, and the event stream ends.
    pub async fn shutdown(mut self) {
        let _ = self.handle.ops.send((Op::Shutdown, CancellationToken::new()));
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.task.is_some() {
            self.handle.shared.cancel();
            let _ = self.handle.ops.send((Op::Shutdown, CancellationToken::new()));
        }
    }
}

/// The work of one turn.
enum TurnKind {
    Prompt { text: String, attachments: Vec<Attachment> },
    Propose { text: String, attachments: Vec<Attachment> },
    RunPlan,
    Compact,
}

/// Revisions after failed steps before plan mode gives up.
pub const MAX_REVISIONS: u32 = 2;

/// Plan mode's state, owned by the session: the planner that proposes and
/// revises, the plan waiting for approval (or being carried out), and how
/// often it was revised after failed steps.
pub(crate) struct PlanMode {
    pub(crate) planner: Planner,
    pub(crate) waiting: Option<Plan>,
    /// Revisions of the waiting plan after failed steps.
    pub(crate) revisions: u32,
    /// A plan revised after a failed step runs without asking again.
    pub(crate) auto_approve: bool,
}

/// The session's state, owned by its task.
pub(crate) struct Task {
    pub(crate) agent: Agent,
    /// Plan mode's planner, waiting plan and revisions.
    pub(crate) plans: PlanMode,
    pub(crate) events: Emitter,
    pub(crate) sessions: Sessions,
    /// The session's tools, as its MCP servers join and change.
    pub(crate) tools: Arc<LiveTools>,
    /// The config, to find another model of the same provider.
    pub(crate) models: (Effective, ProviderConfig),
    /// `None` until something is said in a new session.
    pub(crate) journal: Option<Arc<SessionJournal>>,
    pub(crate) mode: Mode,
    pub(crate) workspace: Workspace,
    pub(crate) info: SessionInfo,
    /// Turns begun so far, numbering `turn_started`.
    pub(crate) turns: u32,
    /// Hooks and checkpoints (the agent's `Lifecycle`), told of the
    /// session file and of each turn.
    pub(crate) lifecycle: Arc<SessionLifecycle>,
    /// Prices the session's model calls and counts its spending.
    pub(crate) meter: Arc<Meter>,
    /// Answers the MCP servers' sampling and forms.
    pub(crate) mcp_host: Arc<crate::mcp_host::McpHost>,
    /// The background commands of the session's `shell`.
    pub(crate) jobs: Arc<axon_tools::Jobs>,
    /// After a turn, how long the next prompt is waited for before the
    /// Notification hooks hear `idle_prompt`; `None` when the session is
    /// not interactive (no one answers it).
    pub(crate) idle_notice: Option<std::time::Duration>,
    /// What SessionEnd hooks hear on shutdown.
    pub(crate) end_reason: axon_hooks::EndReason,
    /// The OpenTelemetry exporters, when an endpoint is set: flushed at
    /// the session's end.
    pub(crate) telemetry: Option<Arc<crate::telemetry::Telemetry>>,
}

impl Task {
    async fn serve(
        mut self,
        mut queue: mpsc::UnboundedReceiver<(Op, CancellationToken)>,
        shared: Arc<SessionControl>,
    ) {
        // Set by a turn's end, cleared by the next op or the one notice.
        let mut idle_since_turn = false;
        loop {
            let next = match self.idle_notice.filter(|_| idle_since_turn) {
                Some(after) => tokio::time::timeout(after, queue.recv()).await,
                None => Ok(queue.recv().await),
            };
            let Ok(next) = next else {
                idle_since_turn = false;
                self.lifecycle.notify(
                    axon_hooks::NotificationKind::IdlePrompt,
                    "axon is waiting for your input".to_string(),
                );
                continue;
            };
            let Some((op, cancel)) = next else { break };
            // A turn arms the notice; the next prompt-like op disarms it.
            // Settings changed meanwhile (mode, model, approval) say nothing
            // of whether the user is there to prompt.
            match op {
                Op::UserTurn { .. } | Op::ApprovePlan | Op::Compact | Op::Rewind { .. } => {
                    idle_since_turn = true;
                }
                Op::SetMode { .. }
                | Op::SetApproval { .. }
                | Op::SwitchModel { .. }
                | Op::ListBackground => {}
                _ => idle_since_turn = false,
            }
            match op {
                Op::Shutdown => {
                    self.lifecycle.session_ended(self.end_reason).await;
                    break;
                }
                Op::UserTurn { text, attachments } => {
                    let work = match self.mode {
                        Mode::React => TurnKind::Prompt { text, attachments },
                        Mode::Plan => TurnKind::Propose { text, attachments },
                    };
                    self.turn(&shared, &cancel, work).await;
                }
                Op::ApprovePlan => self.turn(&shared, &cancel, TurnKind::RunPlan).await,
                Op::Compact => self.turn(&shared, &cancel, TurnKind::Compact).await,
                Op::EditPlan { plan } => self.edit_plan(plan),
                Op::RejectPlan => self.events.emit(AgentEvent::Info {
                    message: "plan set aside; it stays saved in the session. Say what to change, \
                              or propose a new one"
                        .to_string(),
                }),
                Op::SetMode { mode } => {
                    self.mode = mode;
                    self.info.mode = mode;
                    self.mode_changed();
                }
                // The handle already set it; a later switch may have too.
                Op::SetApproval { .. } => {
                    self.sync_approval();
                    self.mode_changed();
                }
                Op::SwitchModel { model } => self.switch_model(&model).await,
                Op::NewConversation => {
                    self.lifecycle.session_ended(axon_hooks::EndReason::Clear).await;
                    self.new_conversation();
                    self.lifecycle.session_started(axon_hooks::SessionSource::Clear).await;
                }
                Op::Resume { id } => {
                    if self.journal.is_some() {
                        self.lifecycle.session_ended(axon_hooks::EndReason::Other).await;
                    }
                    self.resume(id);
                }
                Op::Rewind { turn, scope } => self.rewind(turn, scope).await,
                // Handled by the handle itself.
                Op::Cancel | Op::Approve { .. } | Op::Elicit { .. } | Op::ListBackground => {}
            }
        }
        if let Some(journal) = &self.journal {
            journal.sync();
        }
        // The last export goes out while the servers close, not after: a
        // front end bounds the whole of the session's end.
        let telemetry = async {
            if let Some(telemetry) = &self.telemetry {
                telemetry.shutdown().await;
            }
        };
        tokio::join!(self.tools.mcp().shutdown(), telemetry);
    }

    /// One turn: `turn_started`, the work, then `turn_completed` with the
    /// usage it took and why it stopped; the session file is synced.
    async fn turn(&mut self, shared: &SessionControl, cancel: &CancellationToken, work: TurnKind) {
        self.turns += 1;
        let turn = self.turns;
        self.events.emit(AgentEvent::TurnStarted { turn });
        if let TurnKind::Prompt { text, attachments } | TurnKind::Propose { text, attachments } =
            &work
        {
            self.events.emit(AgentEvent::Prompt {
                text: text.clone(),
                attachments: attachments.iter().map(attachment_name).collect(),
            });
        }
        if let TurnKind::Prompt { text, .. } | TurnKind::Propose { text, .. } = &work {
            self.tools.before_prompt(text, cancel).await;
        }
        let usage = Arc::new(Mutex::new(Tally::default()));
        let counted = Arc::clone(&usage);
        self.mcp_host.set_turn_usage(Some(Arc::clone(&usage)));
        let stop_reason = if cancel.is_cancelled() {
            StopReason::Cancelled
        } else {
            match work {
                TurnKind::Prompt { text, attachments } => {
                    self.prompt(&text, &attachments, counted, cancel).await
                }
                TurnKind::Propose { text, attachments } => {
                    self.propose(&text, &attachments, counted, cancel).await
                }
                TurnKind::RunPlan => self.run_plan(counted, cancel).await,
                TurnKind::Compact => self.compact(cancel).await,
            }
        };
        shared.forget_questions();
        self.mcp_host.set_turn_usage(None);
        self.lifecycle.end_turn().await;
        if let Some(journal) = &self.journal {
            journal.sync();
        }
        let tally = *usage.lock().unwrap_or_else(PoisonError::into_inner);
        let (usage, cost_usd) = (tally.usage, tally.cost.known());
        self.sync_info();
        let context_tokens = self.agent.context_tokens();
        self.info.context_tokens = context_tokens;
        let (session_usage, session_cost_usd) = self.meter.totals();
        (self.info.usage, self.info.cost_usd) = (session_usage, session_cost_usd);
        self.events.emit(AgentEvent::TurnCompleted {
            turn,
            stop_reason,
            usage,
            context_tokens,
            cost_usd,
            session_usage,
            session_cost_usd,
        });
    }

    /// The event sink of a turn's agent runs, adding up their usage and
    /// its cost.
    pub(crate) fn sink(
        &self,
        usage: Arc<Mutex<Tally>>,
    ) -> impl Fn(AgentEvent) + Send + Sync + use<> {
        let emit = self.events.sink();
        let meter = Arc::clone(&self.meter);
        move |event| {
            if let AgentEvent::Usage { usage: reported, model } = &event {
                meter.count(Some(&usage), model.as_deref(), reported);
            }
            emit(event);
        }
    }

    /// The session file, started with `title` by the first thing said.
    pub(crate) fn journal(&mut self, title: &str) {
        if self.journal.is_some() {
            return;
        }
        let info = self.agent.provider().info().clone();
        match self.sessions.create(title, (&info.name, &info.model)) {
            Ok(None) => {}
            Ok(Some(opened)) => {
                self.agent.set_journal(opened.journal.clone());
                self.lifecycle.set_journal(Some(Arc::clone(&opened.journal)));
                let session_id = opened.journal.id();
                self.info.session_id = Some(session_id.clone());
                self.events.emit(AgentEvent::SessionSaved { session_id });
                self.journal = Some(opened.journal);
            }
            Err(e) => self.events.emit(AgentEvent::Warning {
                message: format!("the session cannot be saved: {e:#}"),
            }),
        }
    }

    pub(crate) fn save_plan(&self, plan: &Plan) {
        if let Some(journal) = &self.journal {
            journal.plan(plan);
        }
    }

    async fn prompt(
        &mut self,
        text: &str,
        attachments: &[Attachment],
        usage: Arc<Mutex<Tally>>,
        cancel: &CancellationToken,
    ) -> StopReason {
        let Some(message) = self.user_message(text, attachments) else {
            return StopReason::Error;
        };
        self.journal(text);
        self.lifecycle.begin_turn();
        let emit = self.sink(usage);
        match self.agent.run_message(message, &emit, cancel).await {
            RunOutcome::Answered(_) => StopReason::EndTurn,
            RunOutcome::Failed(_) => StopReason::Error,
            RunOutcome::IterationLimit(_) => StopReason::MaxIterations,
            RunOutcome::Cancelled(_) => StopReason::Cancelled,
            RunOutcome::Refused(_) | RunOutcome::Blocked(_) => StopReason::Refusal,
        }
    }

    /// The user's message: the text, then each attachment (files of the
    /// workspace read through its handle, so nothing outside it is). An
    /// attachment that cannot be read is an `error` event and `None`.
    pub(crate) fn user_message(&self, text: &str, attachments: &[Attachment]) -> Option<Message> {
        match self.message_with(text, attachments) {
            Ok(message) => Some(message),
            Err(message) => {
                self.events.emit(AgentEvent::Error { message });
                None
            }
        }
    }

    fn message_with(&self, text: &str, attachments: &[Attachment]) -> Result<Message, String> {
        let mut message = Message::user(text);
        for attachment in attachments {
            match attachment {
                Attachment::File { path } => {
                    match crate::attach::read_file(&self.workspace, path)? {
                        crate::attach::Attached::Text(body) => {
                            let body = self.mask_attachment(path, body);
                            message
                                .content
                                .push(ContentPart::text(crate::attach::quote(path, &body)));
                        }
                        crate::attach::Attached::Image(image) => {
                            message.content.push(ContentPart::text(image.summary(path)));
                            message.content.push(ContentPart::Image {
                                media_type: image.media_type,
                                data: image.data,
                            });
                        }
                    }
                }
                Attachment::Text { name, text } => {
                    let text = self.mask_attachment(name, text.clone());
                    message.content.push(ContentPart::text(crate::attach::quote(name, &text)));
                }
                Attachment::Image { media_type, data } => {
                    let image = crate::attach::sent_image(media_type, data)?;
                    message
                        .content
                        .push(ContentPart::Image { media_type: image.media_type, data: image.data })
                }
            }
        }
        let model = &self.agent.provider().info().model;
        if let Some(warning) = crate::attach::unseen_images(model, &message) {
            self.events.emit(AgentEvent::Warning { message: warning });
        }
        Ok(message)
    }

    /// An attachment's text as the model may see it: its secrets masked
    /// (unless `secrets = "off"`), the user told what and where.
    fn mask_attachment(&self, name: &str, text: String) -> String {
        if self.models.0.file.secrets == Some(crate::config::SecretsMode::Off) {
            return text;
        }
        let (masked, notice) = axon_tools::secret_mask::mask_text(name, &text);
        match notice {
            Some(message) => {
                self.events.emit(AgentEvent::Warning { message });
                masked
            }
            None => text,
        }
    }

    async fn compact(&mut self, cancel: &CancellationToken) -> StopReason {
        let events = &self.events;
        match self.agent.compact_all(&|event| events.emit(event), cancel).await {
            Ok(0) => {
                self.events.emit(AgentEvent::Info {
                    message: "nothing to compact: the conversation has only its latest request"
                        .to_string(),
                });
                StopReason::EndTurn
            }
            Ok(n) => {
                self.events.emit(AgentEvent::Info {
                    message: format!(
                        "summarised the session's oldest {n} messages; the session file keeps them all"
                    ),
                });
                StopReason::EndTurn
            }
            Err(e) if cancel.is_cancelled() => {
                self.events
                    .emit(AgentEvent::Warning { message: format!("compaction stopped: {e}") });
                StopReason::Cancelled
            }
            Err(e) => {
                self.events.emit(AgentEvent::Error { message: format!("could not compact: {e}") });
                StopReason::Error
            }
        }
    }

    fn mode_changed(&self) {
        self.events
            .emit(AgentEvent::ModeChanged { mode: self.info.mode, approval: self.info.approval });
    }

    /// Takes the approval mode the handle set (the latest switch), never
    /// the one this queued op carried.
    fn sync_approval(&mut self) {
        self.agent.sync_approval();
        let approval = self.agent.approval();
        self.info.approval = approval.into();
        self.info.tools = offered(self.agent.registry(), approval);
    }

    /// What the session says it offers follows its servers: tools that
    /// joined during the turn, servers that became ready or went away.
    fn sync_info(&mut self) {
        self.info.tools = offered(self.agent.registry(), self.agent.approval());
        self.info.mcp_servers = crate::servers::server_infos(self.tools.mcp());
    }

    fn new_conversation(&mut self) {
        if let Some(journal) = self.journal.take() {
            journal.sync();
        }
        self.agent.detach_journal();
        self.lifecycle.set_journal(None);
        self.agent.clear();
        self.plans.waiting = None;
        self.plans.revisions = 0;
        self.info.session_id = None;
        self.info.context_tokens = self.agent.context_tokens();
        self.meter.restore(&[]);
        (self.info.usage, self.info.cost_usd) = self.meter.totals();
        self.events.emit(AgentEvent::History { messages: Vec::new() });
        self.events.emit(AgentEvent::SessionStarted { session: self.info.clone() });
        self.events.emit(AgentEvent::Info {
            message: "new conversation: nothing said before is sent again".to_string(),
        });
    }

    fn resume(&mut self, id: Option<String>) {
        let choice = match id {
            Some(id) if !id.trim().is_empty() => SessionChoice::Id(id),
            _ => SessionChoice::Latest,
        };
        let info = self.agent.provider().info().clone();
        let opened = match self.sessions.continue_(&choice, (&info.name, &info.model)) {
            Ok(Some(opened)) => opened,
            Ok(None) => return,
            Err(e) => {
                self.events.emit(AgentEvent::Error { message: format!("{e:#}") });
                return;
            }
        };
        if let Some(journal) = self.journal.take() {
            journal.sync();
        }
        let (history, tokens) = opened.resumed.unwrap_or_default();
        self.agent.replace_history(history.clone(), tokens);
        self.agent.set_journal(opened.journal.clone());
        self.lifecycle.set_journal(Some(Arc::clone(&opened.journal)));
        let id = opened.journal.id();
        self.journal = Some(opened.journal);
        self.plans.revisions = 0;
        self.info.session_id = Some(id.clone());
        self.info.context_tokens = self.agent.context_tokens();
        self.meter.restore(&opened.calls);
        (self.info.usage, self.info.cost_usd) = self.meter.totals();
        self.events.emit(AgentEvent::History { messages: crate::replay::shown(history) });
        self.events.emit(AgentEvent::SessionStarted { session: self.info.clone() });
        self.plans.waiting = None;
        match opened.plan {
            Some(plan) if plan.status == PlanStatus::Completed => {
                self.events.emit(AgentEvent::PlanChanged { plan });
            }
            Some(plan) => {
                self.events.emit(AgentEvent::PlanProposed { plan: plan.clone() });
                self.plans.waiting = Some(plan);
            }
            None => {}
        }
        self.events.emit(AgentEvent::Info { message: format!("resumed session {id}") });
    }
}

/// What an attachment is called in a `prompt` event: its path or name, or
/// an image's type (never its bytes).
fn attachment_name(attachment: &Attachment) -> String {
    match attachment {
        Attachment::File { path } => path.clone(),
        Attachment::Text { name, .. } => name.clone(),
        Attachment::Image { media_type, .. } => media_type.clone(),
    }
}

/// The tools the model is offered under `approval`: a read-only session
/// offers only those that read.
pub(crate) fn offered(
    registry: &axon_tools::ToolRegistry,
    approval: ApprovalPolicy,
) -> Vec<String> {
    registry.specs().filter(|s| approval.offers(s)).map(|s| s.name.clone()).collect()
}
