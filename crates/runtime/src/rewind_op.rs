//! `Op::Rewind` in a live session: the saved session is rewound (see
//! `rewind`), then the agent goes on from the conversation as it now
//! stands, and front ends get it again as a `history` event followed by
//! `session_started` (as after a resume).

use std::sync::Arc;

use axon_core::Journal;
use axon_protocol::{AgentEvent, RewindScope};

use crate::rewind::{describe, rewind};
use crate::session::Task;

impl Task {
    pub(crate) async fn rewind(&mut self, turn: Option<u32>, scope: RewindScope) {
        let Some(journal) = self.journal.clone() else {
            self.events.emit(AgentEvent::Error {
                message: "there is nothing to rewind: this conversation is not saved".to_string(),
            });
            return;
        };
        journal.sync();
        let path = journal.path();
        let data = self.models.0.data.clone();
        let writer = Arc::clone(&journal);
        let done = tokio::task::spawn_blocking(move || {
            let session = axon_store::load(&path)?;
            let turn = turn.or_else(|| session.last_turn()).unwrap_or(0);
            rewind(&data, &session, turn, scope, |messages| {
                writer.withdrawn(messages);
                writer.sync();
                Ok(())
            })
        })
        .await;
        let report = match done {
            Ok(Ok(report)) => report,
            Ok(Err(e)) => {
                self.events.emit(AgentEvent::Error { message: format!("cannot rewind: {e:#}") });
                return;
            }
            Err(e) => {
                self.events.emit(AgentEvent::Error { message: format!("cannot rewind: {e}") });
                return;
            }
        };
        if report.withdrawn.is_some() {
            match axon_store::load(&journal.path()) {
                Ok(session) => {
                    let (history, tokens) = session.history_with_tokens();
                    let messages = crate::replay::shown(history.clone());
                    self.agent.replace_history(history, tokens);
                    self.info.context_tokens = self.agent.context_tokens();
                    self.events.emit(AgentEvent::History { messages });
                    // As after a resume: front ends that replace what they
                    // know on `history` (the web panel's log) learn the
                    // session again, its context now smaller.
                    self.events.emit(AgentEvent::SessionStarted { session: self.info.clone() });
                }
                Err(e) => self.events.emit(AgentEvent::Error {
                    message: format!("the session was rewound but cannot be read back: {e}"),
                }),
            }
        }
        for message in describe(&report) {
            self.events.emit(AgentEvent::Info { message });
        }
    }
}
