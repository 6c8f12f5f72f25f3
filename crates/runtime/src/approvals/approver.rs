//! Asking the front end: a tool call that needs approval becomes an
//! `approval_requested` event carrying a preview of what the call would do
//! (computed without doing it), and waits for the front end's `approve`
//! operation. Cancelling the turn answers every open question with no. A
//! call whose preview says it would fail as it stands (outside the jail)
//! is refused without asking.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use axon_core::{Approval, Approver, CancellationToken, SharedApproval, ToolSource};
use axon_protocol::{AgentEvent, ApprovalDecision, ElicitAction, Preview, ToolCall, ToolSpec};
use axon_tools::ToolContext;
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::permissions::SessionPermissions;
use crate::events::Emitter;

/// A form's answer: what the user did, and the fields with `accept`.
pub(crate) type FormAnswer = (ElicitAction, Option<Map<String, Value>>);

/// What the session's handle and its task share: the questions and forms
/// waiting for an answer, and the token that cancels the work submitted so
/// far.
#[derive(Default)]
pub struct SessionControl {
    questions: Mutex<HashMap<String, oneshot::Sender<Approval>>>,
    forms: Mutex<HashMap<String, oneshot::Sender<FormAnswer>>>,
    cancel: Mutex<CancellationToken>,
    /// The approval policy, changed at once by `set_approval` (the turn
    /// running reads it before each call it checks).
    pub(crate) approval: Arc<SharedApproval>,
}

impl SessionControl {
    /// The token for work submitted now: cancelled by the next `cancel`.
    pub fn token(&self) -> CancellationToken {
        self.cancel.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Cancels everything submitted so far; later work gets a new token.
    pub fn cancel(&self) {
        let mut cancel = self.cancel.lock().unwrap_or_else(PoisonError::into_inner);
        cancel.cancel();
        *cancel = CancellationToken::new();
    }

    /// Answers the question about `call_id`; false if none is open.
    pub fn answer(&self, call_id: &str, decision: ApprovalDecision) -> bool {
        let reply = self.questions.lock().unwrap_or_else(PoisonError::into_inner).remove(call_id);
        let Some(reply) = reply else { return false };
        let approval = match decision {
            ApprovalDecision::Once => Approval::Allow,
            ApprovalDecision::Always => Approval::AllowTool,
            ApprovalDecision::Deny { reason } => {
                Approval::Deny(reason.unwrap_or_else(|| "the user denied this call".to_string()))
            }
            ApprovalDecision::Never { reason } => Approval::DenyTool(
                reason.unwrap_or_else(|| "the user refused this tool".to_string()),
            ),
        };
        reply.send(approval).is_ok()
    }

    /// Drops the questions and forms left open (their turn ended).
    pub fn forget_questions(&self) {
        self.questions.lock().unwrap_or_else(PoisonError::into_inner).clear();
        self.forms.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }

    /// Answers the form `id`; false if none is open.
    pub fn answer_form(
        &self,
        id: &str,
        action: ElicitAction,
        content: Option<Map<String, Value>>,
    ) -> bool {
        let reply = self.forms.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
        reply.is_some_and(|reply| reply.send((action, content)).is_ok())
    }

    pub(crate) fn ask_form(&self, id: &str) -> oneshot::Receiver<FormAnswer> {
        let (reply, answer) = oneshot::channel();
        self.forms.lock().unwrap_or_else(PoisonError::into_inner).insert(id.to_string(), reply);
        answer
    }

    /// Forgets the form `id` (answered elsewhere, or its wait ended).
    pub(crate) fn drop_form(&self, id: &str) {
        self.forms.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
    }

    /// Forgets the question about `call_id`.
    pub(crate) fn drop_question(&self, call_id: &str) {
        self.questions.lock().unwrap_or_else(PoisonError::into_inner).remove(call_id);
    }

    pub(crate) fn ask(&self, call_id: &str) -> oneshot::Receiver<Approval> {
        let (reply, answer) = oneshot::channel();
        self.questions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(call_id.to_string(), reply);
        answer
    }
}

/// The approver of an interactive session.
pub struct AskFrontEnd {
    pub events: Emitter,
    pub shared: Arc<SessionControl>,
    /// The session's tools as they are now (MCP servers join later).
    pub tools: Arc<dyn ToolSource>,
    pub context: ToolContext,
    /// Suggests the rule an "always" would save, and saves it.
    pub permissions: Arc<SessionPermissions>,
}

impl Approver for AskFrontEnd {
    fn approve<'a>(
        &'a self,
        call: &'a ToolCall,
        _spec: &'a ToolSpec,
    ) -> Pin<Box<dyn Future<Output = Approval> + Send + 'a>> {
        Box::pin(async move {
            let preview = self
                .tools
                .current()
                .preview_async(&self.context, &call.name, &call.arguments)
                .await;
            // A call that would fail as it stands (a path the jail refuses,
            // an edit that no longer applies) is not put to the user: a yes
            // could only be refused after it was given.
            if let Preview::Invalid { message } = &preview {
                return Approval::Deny(format!(
                    "{message} (the user was not asked: it cannot run)"
                ));
            }
            let rule = self.permissions.suggest(call);
            let answer = self.shared.ask(&call.id);
            self.events.emit(AgentEvent::ApprovalRequested {
                call: call.clone(),
                preview,
                rule: rule.clone(),
            });
            let answer = answer
                .await
                .unwrap_or_else(|_| Approval::Deny("the question went unanswered".to_string()));
            if answer != Approval::AllowTool {
                return answer;
            }
            // "Always": the suggested rule, saved; without one, this call.
            if let Some(rule) = rule
                && let Err(e) = self.permissions.remember(&rule)
            {
                self.events.emit(AgentEvent::Warning {
                    message: format!(
                        "the rule {} applies to this session but could not be saved: {e}",
                        rule.rules.join(", ")
                    ),
                });
            }
            Approval::Allow
        })
    }
}
