//! Plan mode's whole policy, once for every front end: a proposal (the
//! planner, read-only tools), approval, the steps run in order, and after
//! a failed step a revision that keeps the completed steps — run at once
//! when the session approves revisions itself, else proposed again — at
//! most [`MAX_REVISIONS`] times.

use std::sync::{Arc, Mutex};

use axon_core::CancellationToken;
use axon_core::plan::{Execution, execute, new_plan, revise, revision_request};
use axon_protocol::{AgentEvent, Attachment, Plan, PlanStatus, StepStatus, StopReason};

use crate::journal::SessionJournal;
use crate::meter::Tally;
use crate::session::{MAX_REVISIONS, Task};

impl Task {
    /// Asks the planner for a plan for `goal`; it then waits for approval.
    pub(crate) async fn propose(
        &mut self,
        goal: &str,
        attachments: &[Attachment],
        usage: Arc<Mutex<Tally>>,
        cancel: &CancellationToken,
    ) -> StopReason {
        let Some(request) = self.user_message(goal, attachments).map(|m| m.text()) else {
            return StopReason::Error;
        };
        if attachments.iter().any(|a| matches!(a, Attachment::Image { .. })) {
            self.events.emit(AgentEvent::Warning {
                message: "plan mode plans from text: the attached images were left out".to_string(),
            });
        }
        self.journal(goal);
        let emit = recording_models(self.journal.clone(), self.sink(usage));
        match self.plans.planner.propose(&request, &emit, cancel).await {
            Ok(steps) => {
                let plan = new_plan(goal, steps);
                self.plans.revisions = 0;
                self.save_plan(&plan);
                self.events.emit(AgentEvent::PlanProposed { plan: plan.clone() });
                self.plans.waiting = Some(plan);
                StopReason::EndTurn
            }
            Err(_) if cancel.is_cancelled() => StopReason::Cancelled,
            Err(e) => {
                self.events
                    .emit(AgentEvent::Error { message: format!("no plan was proposed: {e}") });
                StopReason::Error
            }
        }
    }

    /// The user replaced the waiting plan; it waits again.
    pub(crate) fn edit_plan(&mut self, plan: Plan) {
        let mut plan = plan;
        plan.status = PlanStatus::Draft;
        self.save_plan(&plan);
        self.events.emit(AgentEvent::PlanProposed { plan: plan.clone() });
        self.plans.waiting = Some(plan);
    }

    /// Runs the waiting plan: steps that failed or were cut off run again.
    pub(crate) async fn run_plan(
        &mut self,
        usage: Arc<Mutex<Tally>>,
        cancel: &CancellationToken,
    ) -> StopReason {
        let Some(mut plan) = self.plans.waiting.take() else {
            self.events.emit(AgentEvent::Error {
                message: "there is no plan waiting for approval; propose one in plan mode first"
                    .to_string(),
            });
            return StopReason::Error;
        };
        // Carrying the plan out is the turn that changes files.
        self.lifecycle.begin_turn();
        for step in &mut plan.steps {
            if matches!(step.status, StepStatus::Running | StepStatus::Failed) {
                step.status = StepStatus::Pending;
                step.result = None;
            }
        }
        let emit = self.sink(usage);
        loop {
            plan.status = PlanStatus::Approved;
            self.save_plan(&plan);
            let journal = self.journal.clone();
            let events = self.events.clone();
            let changed = move |p: &Plan| {
                if let Some(journal) = &journal {
                    journal.plan(p);
                }
                events.emit(AgentEvent::PlanChanged { plan: p.clone() });
            };
            let outcome = execute(&mut self.agent, &mut plan, &emit, cancel, &changed).await;
            let (step, reason) = match outcome {
                Execution::Completed => {
                    self.events.emit(AgentEvent::Info { message: "plan completed".to_string() });
                    self.plans.waiting = Some(plan);
                    return StopReason::EndTurn;
                }
                Execution::Cancelled => {
                    self.events.emit(AgentEvent::Warning {
                        message: "plan stopped; approve it again to go on".to_string(),
                    });
                    return self.wait_again(plan, StopReason::Cancelled);
                }
                Execution::Failed { step, reason } => (step, reason),
            };
            if self.plans.revisions == MAX_REVISIONS {
                self.events.emit(AgentEvent::Error {
                    message: format!(
                        "step {step} failed again after {MAX_REVISIONS} revisions: {reason}"
                    ),
                });
                return self.wait_again(plan, StopReason::Error);
            }
            let request = revision_request(&plan, step, &reason);
            let planning = recording_models(self.journal.clone(), &emit);
            match self.plans.planner.propose(&request, &planning, cancel).await {
                Ok(steps) => {
                    self.plans.revisions += 1;
                    plan = revise(&plan, steps);
                }
                Err(_) if cancel.is_cancelled() => {
                    return self.wait_again(plan, StopReason::Cancelled);
                }
                Err(e) => {
                    self.events.emit(AgentEvent::Error {
                        message: format!("step {step} failed ({reason}) and no revision came: {e}"),
                    });
                    return self.wait_again(plan, StopReason::Error);
                }
            }
            if !self.plans.auto_approve {
                self.events.emit(AgentEvent::Warning {
                    message: format!(
                        "step {step} failed ({reason}); a revised plan waits for approval"
                    ),
                });
                return self.wait_again(plan, StopReason::EndTurn);
            }
            self.events.emit(AgentEvent::Warning {
                message: format!(
                    "step {step} failed ({reason}); the plan was revised (revision {} of \
                     {MAX_REVISIONS}) and goes on",
                    self.plans.revisions
                ),
            });
            self.save_plan(&plan);
            self.events.emit(AgentEvent::PlanChanged { plan: plan.clone() });
        }
    }

    /// Stopped, failed or revised: the plan waits for approval again.
    fn wait_again(&mut self, mut plan: Plan, stop: StopReason) -> StopReason {
        plan.status = PlanStatus::Draft;
        self.save_plan(&plan);
        self.events.emit(AgentEvent::PlanProposed { plan: plan.clone() });
        self.plans.waiting = Some(plan);
        stop
    }
}

/// `emit`, and `journal` (the session file) records which provider planned
/// when a fallback took over: the planner's events pass here (its own
/// messages are not the session's, so it has no journal of its own).
fn recording_models<F: Fn(AgentEvent)>(
    journal: Option<Arc<SessionJournal>>,
    emit: F,
) -> impl Fn(AgentEvent) {
    move |event| {
        if let (AgentEvent::ModelChanged { provider, model, .. }, Some(journal)) =
            (&event, &journal)
        {
            axon_core::Journal::model_changed(&**journal, provider, model);
        }
        emit(event);
    }
}
