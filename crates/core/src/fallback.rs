//! Provider fallback: when the provider in use has spent its retries on a
//! rate limit, an overload, a server error or a lost connection, the same
//! turn continues on the next provider of the user's `fallback` list, and
//! the next request of the user goes to the first provider again.
//!
//! Guarantees:
//! - Every request to the model goes through it: a turn, the planner's
//!   (`plan.rs`, which returns to the first provider once the plan is in)
//!   and a compaction's summary (`compact.rs`).
//! - Only an outage (`LlmError::is_outage`: a rate limit, an overload, a 5xx,
//!   no connection, answers breaking off) falls back: a bad key, a bad
//!   request or a context overflow is the user's to fix.
//! - The request is built again for the provider taking over (its tool
//!   protocol and window may differ), and the history is counted with its
//!   tokenizer; nothing of the failed attempt is kept.
//! - Every switch is told (a warning and `model_changed`) and recorded in the
//!   session (`Journal::model_changed`), so a session says which provider
//!   answered each turn.
//! - Each provider of the list is connected on first use, so a list costs
//!   nothing until it is needed; one that cannot be reached is named and
//!   skipped.

use std::sync::Arc;

use axon_llm::{LlmError, Provider};
use axon_protocol::AgentEvent;

use crate::model_turn::ModelTurn;
use crate::sink::EventSink;

impl ModelTurn {
    /// Continues the turn on the next provider of the list that connects,
    /// after `error` ended the attempts on the one in use. False when the
    /// list has no other (the turn then fails with `error`).
    pub(crate) async fn fall_back(&mut self, error: &LlmError, emit: EventSink<'_>) -> bool {
        if !error.is_outage() {
            return false;
        }
        let Some(list) = self.fallback.list.clone() else { return false };
        while self.fallback.next < list.len() {
            let index = self.fallback.next;
            self.fallback.next += 1;
            let name = list.name(index);
            // Neither the one failing now nor the first, which already failed
            // this request.
            let first = self.fallback.primary.as_ref().map(|p| p.info().name.as_str());
            if name == self.provider.info().name || first == Some(name.as_str()) {
                continue;
            }
            let provider = match list.connect(index).await {
                Ok(provider) => provider,
                Err(why) => {
                    emit(AgentEvent::Warning {
                        message: format!("the fallback provider {name} cannot be used: {why}"),
                    });
                    continue;
                }
            };
            let failed = self.provider.info().name.clone();
            if self.fallback.primary.is_none() {
                self.fallback.primary = Some(Arc::clone(&self.provider));
            }
            self.switch_to(provider, emit);
            let info = self.provider.info();
            emit(AgentEvent::Warning {
                message: format!(
                    "{failed} failed ({}); this request continues on {} ({}), and the next one \
                     goes to {failed} again",
                    error.condition(),
                    info.name,
                    info.model
                ),
            });
            return true;
        }
        false
    }

    /// At a new request of the user: back to the provider the session was
    /// opened with, if a fallback answered the last one.
    pub(crate) fn back_to_primary(&mut self, emit: EventSink<'_>) {
        self.fallback.next = 0;
        if let Some(primary) = self.fallback.primary.take() {
            self.switch_to(primary, emit);
        }
    }

    /// Talks to `provider` from the next request on, told and recorded.
    fn switch_to(&mut self, provider: Arc<dyn Provider>, emit: EventSink<'_>) {
        self.set_provider(provider);
        let info = self.provider.info();
        self.history.model_changed(&info.name, &info.model);
        emit(AgentEvent::ModelChanged {
            provider: info.name.clone(),
            model: info.model.clone(),
            context_window: info.context_window,
        });
    }
}
