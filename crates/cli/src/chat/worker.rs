//! The agent side of `axon chat`: one task that owns the agent, the
//! planner and the session, and carries out the UI's requests one at a
//! time. Everything it learns goes back to the UI as [`Update`]s; the UI
//! never waits on it except for approvals.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axon_core::plan::{Execution, Planner, execute, new_plan, revise, revision_request};
use axon_core::{Agent, Approval, Approver, CancellationToken, RunOutcome};
use axon_protocol::{AgentEvent, Message, Plan, PlanStatus, StepStatus, ToolCall, ToolSpec};
use axon_store::{Redactor, SessionStore, to_markdown};
use axon_tui::{Level, Mode};
use tokio::sync::{mpsc, oneshot};

use crate::session::{self, SessionJournal};
use crate::setting::Setting;

/// What the UI asks for.
pub enum Request {
    Prompt {
        text: String,
        mode: Mode,
        cancel: CancellationToken,
    },
    /// Run the proposed plan.
    ApprovePlan {
        cancel: CancellationToken,
    },
    /// The user edited the proposed plan; it waits for approval again.
    PlanEdited(Plan),
    RejectPlan,
    /// A slash command; `cancel` stops the long ones (`/compact`).
    Command {
        name: String,
        argument: String,
        cancel: CancellationToken,
    },
}

/// What the UI is told.
pub enum Update {
    Event(AgentEvent),
    /// A tool waits for the user's yes or no.
    Approval {
        call: ToolCall,
        reply: oneshot::Sender<Approval>,
    },
    /// The request being worked on ended; `note` says how if not plainly.
    Done {
        note: Option<(Level, String)>,
    },
    Notice(Level, String),
    PlanProposed(Plan),
    PlanChanged(Plan),
    /// The conversation now shown is this (after /resume, /clear).
    History(Vec<Message>),
    Session(String),
    Model {
        provider: String,
        model: String,
        window: u64,
    },
    /// Estimated tokens the next request sends.
    Tokens(u64),
    Files(Vec<String>),
    /// The worker itself failed (a bug); the UI cannot go on.
    Crashed(String),
}

pub type Updates = mpsc::UnboundedSender<Update>;

/// Asks through the UI: the call's card shows the question.
pub struct TuiApprover {
    pub updates: Updates,
}

impl Approver for TuiApprover {
    fn approve<'a>(
        &'a self,
        call: &'a ToolCall,
        _spec: &'a ToolSpec,
    ) -> Pin<Box<dyn Future<Output = Approval> + Send + 'a>> {
        let (reply, answer) = oneshot::channel();
        let sent = self.updates.send(Update::Approval { call: call.clone(), reply });
        Box::pin(async move {
            if sent.is_err() {
                return Approval::Deny("the user interface has closed".to_string());
            }
            answer
                .await
                .unwrap_or_else(|_| Approval::Deny("the question went unanswered".to_string()))
        })
    }
}

/// Revisions after failed steps before plan mode gives up.
const MAX_REVISIONS: u32 = 2;

pub struct Worker {
    pub agent: Agent,
    pub planner: Planner,
    pub setting: Setting,
    pub store: SessionStore,
    pub redactor: Redactor,
    /// `None` until the first request of a new session.
    pub journal: Option<Arc<SessionJournal>>,
    pub plan: Option<Plan>,
    /// Revisions of the current plan after failed steps.
    pub revisions: u32,
    pub updates: Updates,
}

impl Worker {
    pub async fn serve(mut self, mut requests: mpsc::UnboundedReceiver<Request>) {
        self.send(Update::Tokens(self.agent.context_tokens()));
        while let Some(request) = requests.recv().await {
            let note = match request {
                Request::Prompt { text, mode: Mode::React, cancel } => self.prompt(&text, &cancel).await,
                Request::Prompt { text, mode: Mode::Plan, cancel } => self.propose(&text, &cancel).await,
                Request::ApprovePlan { cancel } => self.run_plan(&cancel).await,
                Request::PlanEdited(plan) => {
                    self.save_plan(&plan);
                    self.send(Update::PlanProposed(plan.clone()));
                    self.plan = Some(plan);
                    continue;
                }
                Request::RejectPlan => Some((
                    Level::Info,
                    "Plan set aside (it stays in the session). Say what to change, or /plan GOAL for a new one."
                        .to_string(),
                )),
                Request::Command { name, argument, cancel } => {
                    self.command(&name, &argument, &cancel).await
                }
            };
            self.send(Update::Tokens(self.agent.context_tokens()));
            self.send(Update::Done { note });
        }
    }

    fn send(&self, update: Update) {
        // A closed UI means the user left; the work has no one to tell.
        let _ = self.updates.send(update);
    }

    fn emit(&self) -> impl Fn(AgentEvent) + Send + Sync + use<> {
        let updates = self.updates.clone();
        move |event| {
            let _ = updates.send(Update::Event(event));
        }
    }

    /// The session, started with `title` on the first request.
    fn journal(&mut self, title: &str) -> Option<Arc<SessionJournal>> {
        if self.journal.is_none() {
            let info = self.agent.provider().info().clone();
            match session::open(
                &self.store,
                session::Choice::New,
                self.setting.workspace.root(),
                title,
                (&info.name, &info.model),
                self.redactor.clone(),
            ) {
                Ok(opened) => {
                    self.agent.set_journal(opened.journal.clone());
                    self.send(Update::Session(opened.journal.id()));
                    self.journal = Some(opened.journal);
                }
                Err(e) => self.send(Update::Notice(
                    Level::Warning,
                    format!("the session cannot be saved: {e:#}"),
                )),
            }
        }
        self.journal.clone()
    }

    fn save_plan(&self, plan: &Plan) {
        if let Some(journal) = &self.journal {
            journal.plan(plan);
        }
    }

    async fn prompt(&mut self, text: &str, cancel: &CancellationToken) -> Option<(Level, String)> {
        self.journal(text);
        let emit = self.emit();
        match self.agent.run(text, &emit, cancel).await {
            RunOutcome::Answered(_) | RunOutcome::Failed(_) => None,
            RunOutcome::IterationLimit(_) => None,
            RunOutcome::Cancelled(_) => {
                Some((Level::Warning, "Stopped. What was written so far is kept.".to_string()))
            }
        }
    }

    async fn propose(&mut self, goal: &str, cancel: &CancellationToken) -> Option<(Level, String)> {
        self.journal(goal);
        let emit = self.emit();
        match self.planner.propose(goal, &emit, cancel).await {
            Ok(steps) => {
                let plan = new_plan(goal, steps);
                self.revisions = 0;
                self.save_plan(&plan);
                self.send(Update::PlanProposed(plan.clone()));
                self.plan = Some(plan);
                None
            }
            Err(e) => Some((Level::Error, format!("No plan was proposed: {e}"))),
        }
    }

    async fn run_plan(&mut self, cancel: &CancellationToken) -> Option<(Level, String)> {
        let Some(mut plan) = self.plan.take() else {
            return Some((Level::Warning, "There is no plan to run.".to_string()));
        };
        for step in &mut plan.steps {
            if matches!(step.status, StepStatus::Running | StepStatus::Failed) {
                step.status = StepStatus::Pending;
                step.result = None;
            }
        }
        plan.status = PlanStatus::Approved;
        self.save_plan(&plan);
        let emit = self.emit();
        let journal = self.journal.clone();
        let updates = self.updates.clone();
        let changed = move |p: &Plan| {
            if let Some(journal) = &journal {
                journal.plan(p);
            }
            let _ = updates.send(Update::PlanChanged(p.clone()));
        };
        let note = match execute(&mut self.agent, &mut plan, &emit, cancel, &changed).await {
            Execution::Completed => {
                self.plan = Some(plan);
                return Some((Level::Info, "Plan completed.".to_string()));
            }
            Execution::Cancelled => {
                Some((Level::Warning, "Plan stopped; approve it again to go on.".to_string()))
            }
            Execution::Failed { step, reason } if self.revisions == MAX_REVISIONS => Some((
                Level::Error,
                format!("Step {step} failed again after {MAX_REVISIONS} revisions: {reason}"),
            )),
            Execution::Failed { step, reason } => {
                self.revisions += 1;
                let request = revision_request(&plan, step, &reason);
                match self.planner.propose(&request, &emit, cancel).await {
                    Ok(steps) => {
                        plan = revise(&plan, steps);
                        Some((
                            Level::Warning,
                            format!(
                                "Step {step} failed ({reason}); a revised plan waits for approval."
                            ),
                        ))
                    }
                    Err(e) => Some((
                        Level::Error,
                        format!("Step {step} failed ({reason}) and no revision came: {e}"),
                    )),
                }
            }
        };
        // Stopped, failed or revised: the plan waits in its panel again,
        // failed and cut-off steps to be run again once approved.
        plan.status = PlanStatus::Draft;
        self.save_plan(&plan);
        self.send(Update::PlanProposed(plan.clone()));
        self.plan = Some(plan);
        note
    }

    async fn command(
        &mut self,
        name: &str,
        argument: &str,
        cancel: &CancellationToken,
    ) -> Option<(Level, String)> {
        let info = |text: String| Some((Level::Info, text));
        match name {
            "clear" => {
                self.agent.clear();
                self.journal = None;
                self.plan = None;
                self.send(Update::History(Vec::new()));
                self.send(Update::Session(String::new()));
                info("New session. Nothing said before is sent again.".to_string())
            }
            "compact" => match self.agent.compact_all(cancel).await {
                Ok(0) => info("Nothing to compact yet.".to_string()),
                Ok(n) => info(format!(
                    "Summarised the oldest {n} messages; the session file keeps them all."
                )),
                Err(e) => Some((Level::Error, format!("Could not compact: {e}"))),
            },
            "sessions" => Some(self.sessions()),
            "resume" => Some(self.resume(argument)),
            "skills" => {
                let lines = self.setting.guidance.skill_lines();
                if lines.is_empty() {
                    info(crate::guidance::NO_SKILLS.to_string())
                } else {
                    info(format!("Skills:\n{}", lines.join("\n")))
                }
            }
            "rules" => {
                let rules = &self.setting.guidance.rules;
                if rules.is_empty() {
                    info("No rules: add `rules = [\"…\"]` to the config or an AGENTS.md to the repository.".to_string())
                } else {
                    info(axon_core::rules::numbered(rules))
                }
            }
            "model" => Some(self.model(argument).await),
            "export" => Some(self.export(argument)),
            other => Some((Level::Warning, format!("/{other} is not something axon can do here"))),
        }
    }

    fn sessions(&self) -> (Level, String) {
        match self.store.list(Some(self.setting.workspace.root())) {
            Ok(list) if list.is_empty() => {
                (Level::Info, "No sessions in this workspace yet.".to_string())
            }
            Ok(list) => {
                let mut text = String::from("Sessions (newest first; /resume ID continues one):");
                for s in list.iter().take(20) {
                    text.push_str(&format!("\n  {}  {:>4} msgs  {}", s.id, s.messages, s.title));
                }
                (Level::Info, text)
            }
            Err(e) => (Level::Error, format!("Cannot list sessions: {e}")),
        }
    }

    fn resume(&mut self, id: &str) -> (Level, String) {
        let id = if id.is_empty() {
            match self.store.latest(self.setting.workspace.root()) {
                Ok(Some(session)) => session.header.id.clone(),
                Ok(None) => {
                    return (Level::Warning, "No session to resume in this workspace.".to_string());
                }
                Err(e) => return (Level::Error, format!("Cannot find sessions: {e}")),
            }
        } else {
            id.to_string()
        };
        let info = self.agent.provider().info().clone();
        let opened = session::open(
            &self.store,
            session::Choice::Id(&id),
            self.setting.workspace.root(),
            "",
            (&info.name, &info.model),
            self.redactor.clone(),
        );
        match opened {
            Ok(opened) => {
                let (history, tokens) = opened.resumed.unwrap_or_default();
                self.send(Update::History(history.clone()));
                self.agent.replace_history(history, tokens);
                self.agent.set_journal(opened.journal.clone());
                let id = opened.journal.id();
                self.send(Update::Session(id.clone()));
                self.journal = Some(opened.journal);
                self.plan = opened.plan.filter(|p| p.status != PlanStatus::Completed);
                if let Some(plan) = &self.plan {
                    self.send(Update::PlanProposed(plan.clone()));
                }
                (Level::Info, format!("Resumed session {id}."))
            }
            Err(e) => (Level::Error, format!("{e:#}")),
        }
    }

    async fn model(&mut self, name: &str) -> (Level, String) {
        let info = self.agent.provider().info().clone();
        if name.is_empty() {
            return (
                Level::Info,
                format!(
                    "Model: {}/{} ({} token window). /model NAME switches.",
                    info.name, info.model, info.context_window
                ),
            );
        }
        match self.setting.other_model(name).await {
            Ok((config, provider)) => {
                let info = provider.info().clone();
                self.agent.set_provider(Arc::clone(&provider));
                self.planner.set_provider(provider);
                self.setting.provider_config = config;
                self.send(Update::Model {
                    provider: info.name.clone(),
                    model: info.model.clone(),
                    window: info.context_window,
                });
                (Level::Info, format!("Now talking to {}/{}.", info.name, info.model))
            }
            Err(e) => (Level::Error, format!("Cannot switch the model: {e:#}")),
        }
    }

    fn export(&self, file: &str) -> (Level, String) {
        let Some(journal) = &self.journal else {
            return (
                Level::Warning,
                "Nothing to export: the session has no messages yet.".to_string(),
            );
        };
        let id = journal.id();
        let session = match self.store.open(&id) {
            Ok(session) => session,
            Err(e) => return (Level::Error, format!("Cannot read the session: {e}")),
        };
        let name = if file.is_empty() { format!("axon-session-{id}.md") } else { file.to_string() };
        let place = match self.setting.workspace.resolve(&name) {
            Ok(place) => place,
            Err(e) => return (Level::Error, format!("Cannot write {name}: {e}")),
        };
        let path = place.path().display();
        match axon_tools::atomic_write(&place, to_markdown(&session).as_bytes()) {
            Ok(()) => (Level::Info, format!("Exported the session to {path}")),
            Err(e) => (Level::Error, format!("Cannot write {path}: {e}")),
        }
    }
}
