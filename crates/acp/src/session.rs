//! One editor session: an axon runtime session, the task that turns its
//! events into `session/update`s ([`crate::forward`]), and the
//! `session/prompt`s waiting for their turn to end.
//!
//! Every prompt the runtime turns into work produces exactly one turn, and
//! turns end in the order they were asked for, so waiting prompts are a
//! queue answered at each `turn_completed`, after the turn's last update
//! went out (the same writer carries both). A prompt is queued and
//! submitted under one lock, so the queue's order is the runtime's. The
//! one prompt whose answer waits on more than its turn is the one whose
//! plan the user is asked to run: it stays at the front until they answer,
//! cancel, or send another prompt (which sets the plan aside).

use std::collections::{HashSet, VecDeque};

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agent_client_protocol_schema::v1::{
    SessionNotification, SessionUpdate, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use axon_protocol::{Op, SessionInfo};
use axon_runtime::{Events, Session, SessionHandle};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::Outbound;
use crate::forward::EventForwarder;
use crate::prompt::Roots;
use crate::rpc::Outgoing;

/// A `session/prompt` waiting for its answer.
pub(crate) struct Waiting {
    pub(crate) id: Value,
    /// The card of the open "Run this plan?" question, while it is open.
    pub(crate) plan: Option<String>,
    /// `session/cancel` came for it: it answers `cancelled`, and no plan
    /// question is asked for it.
    pub(crate) cancelled: bool,
}

/// What the request handlers and the event task share.
#[derive(Default)]
pub(crate) struct State {
    pub(crate) waiting: VecDeque<Waiting>,
    pub(crate) info: Option<SessionInfo>,
    /// The session's mode as the editor names it.
    pub(crate) mode: String,
    /// A turn is running: notices go to the transcript, not only the log.
    pub(crate) in_turn: bool,
    /// The models the session may switch to, and the current one (the
    /// `model` config option); `None` without a provider.
    pub(crate) models: Option<axon_runtime::OfferedModels>,
    /// The client shows `notice` updates (`session.notices`): information
    /// and warnings go out as notices, never as the answer's text.
    pub(crate) notices: bool,
    /// The client asked for `_axon/mcp_servers` (`_meta.axon.mcpServers`
    /// in its capabilities).
    pub(crate) mcp_updates: bool,
    /// The answer that names the session has gone out: notifications about
    /// it may follow.
    pub(crate) announced: bool,
    /// MCP servers' changes heard before the session's description, laid
    /// over its list when it comes.
    pub(crate) early_mcp: Vec<(String, axon_protocol::McpState, Option<String>)>,
    /// The last error of the running turn, for its answer.
    pub(crate) error: Option<String>,
    /// A plan was proposed during the running turn.
    pub(crate) proposed: bool,
    /// Text streamed during the running turn (an answer not streamed is
    /// sent whole).
    pub(crate) streamed: bool,
    /// Permission questions still open, by the editor's card id: an answer
    /// to one that closed (its turn ended) is dropped, never applied to a
    /// later call that happens to share the model's call id.
    pub(crate) questions: HashSet<String>,
    /// The runtime session ended: nothing will answer a new prompt.
    pub(crate) closed: bool,
}

/// An open editor session.
pub struct AcpSession {
    pub id: String,
    /// The workspace as the editor names it and as it is.
    pub(crate) roots: Roots,
    handle: SessionHandle,
    session: Mutex<Option<Session>>,
    state: Mutex<State>,
    forwarder: Mutex<Option<JoinHandle<()>>>,
    pub(crate) link: Outbound,
}

impl AcpSession {
    /// Wraps an opened runtime session; `events` are its events so far
    /// and to come. Events already emitted (the session opening, a replayed
    /// history when `replay`) are sent before this returns, so a
    /// `session/load` answer follows them.
    pub(crate) fn start(
        id: String,
        roots: Roots,
        session: Session,
        events: Events,
        state: State,
        replay: bool,
        link: &Outbound,
    ) -> Arc<AcpSession> {
        let acp = Arc::new(AcpSession {
            id,
            roots,
            handle: session.handle(),
            session: Mutex::new(Some(session)),
            state: Mutex::new(state),
            forwarder: Mutex::new(None),
            link: link.clone(),
        });
        let task = EventForwarder::start(Arc::clone(&acp), events, replay);
        *acp.forwarder.lock().unwrap_or_else(PoisonError::into_inner) = Some(task);
        acp
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn out(&self) -> &Outgoing {
        &self.link.out
    }

    pub fn notify(&self, update: SessionUpdate) {
        self.link.out.notify("session/update", SessionNotification::new(self.id.clone(), update));
    }

    /// The answer naming the session is out: from now on the client hears
    /// of its MCP servers, starting with the list as it stands.
    pub(crate) fn announced(&self) {
        self.state().announced = true;
        self.send_mcp_servers();
        // A loaded session's spending so far, before anything is said: the
        // editor's meter goes on from it rather than from zero.
        let spent = self.state().info.as_ref().filter(|i| i.usage.total() > 0).map(|info| {
            crate::updates::context_usage(info.context_tokens, info.context_window, info.cost_usd)
        });
        if let Some(update) = spent {
            self.notify(update);
        }
    }

    /// `_axon/mcp_servers`: the session's MCP servers and their states, the
    /// whole list each time one changes (an ACP extension notification),
    /// to a client that asked for it, once the session is announced.
    pub(crate) fn send_mcp_servers(&self) {
        // Sent under the lock (a channel push): two senders cannot pass
        // each other, so the client's last list is the newest.
        let state = self.state();
        let Some(info) = state.info.as_ref().filter(|_| state.mcp_updates && state.announced)
        else {
            return;
        };
        self.link.out.notify(
            crate::forward::MCP_SERVERS_METHOD,
            serde_json::json!({"sessionId": self.id.clone(), "servers": info.mcp_servers}),
        );
    }

    /// What the session is (its rules, skills, servers), once opened.
    pub fn info(&self) -> Option<SessionInfo> {
        self.state().info.clone()
    }

    pub fn mode(&self) -> String {
        self.state().mode.clone()
    }

    pub fn set_mode(&self, mode: &str) {
        self.state().mode = mode.to_string();
    }

    /// Sends `op` as the work of the prompt `id`, answered when its turn
    /// ends. A plan question still open is settled first: the user moved on
    /// without running it.
    pub fn prompt(&self, id: Value, op: Op) {
        let mut state = self.state();
        if state.closed {
            self.link.out.respond(id, Ok(json!({"stopReason": "cancelled"})));
            return;
        }
        self.settle_plan_question(&mut state, "end_turn", Some(Op::RejectPlan));
        state.waiting.push_back(Waiting { id, plan: None, cancelled: false });
        self.handle.submit(op);
    }

    /// Sends an operation that is not a prompt's work.
    pub fn submit(&self, op: Op) {
        self.handle.submit(op);
    }

    /// The session's background commands, for `/ps`.
    pub(crate) fn background_commands(&self) -> Vec<axon_protocol::BackgroundCommand> {
        self.handle.background_commands()
    }

    /// `session/cancel`: the running turn stops (its prompt answers
    /// `cancelled` when it ends); a prompt waiting on the plan question
    /// answers now.
    pub fn cancel(&self) {
        let mut state = self.state();
        self.handle.submit(Op::Cancel);
        self.settle_plan_question(&mut state, "cancelled", None);
        // The runtime cancels every turn asked for so far, even one that
        // ended a moment ago without our hearing of it yet.
        for waiting in &mut state.waiting {
            waiting.cancelled = true;
        }
    }

    /// If the front prompt waits on the plan question, closes the question
    /// (its card fails) and answers the prompt with `stop_reason`.
    fn settle_plan_question(&self, state: &mut State, stop_reason: &str, op: Option<Op>) {
        if state.waiting.front().is_none_or(|w| w.plan.is_none()) {
            return;
        }
        let Some(waiting) = state.waiting.pop_front() else { return };
        if let Some(card) = waiting.plan {
            self.notify(card_status(&card, ToolCallStatus::Failed));
        }
        if let Some(op) = op {
            self.handle.submit(op);
        }
        self.link.out.respond(waiting.id, Ok(json!({"stopReason": stop_reason})));
    }

    /// The user's answer to the plan question on `card`: run the plan as
    /// part of the same prompt, or end the prompt. An answer to a question
    /// already settled is dropped.
    pub(crate) fn plan_answer(&self, card: &str, run: bool) {
        let mut state = self.state();
        let open = state.waiting.front().is_some_and(|w| w.plan.as_deref() == Some(card));
        if !open {
            return;
        }
        if run {
            if let Some(front) = state.waiting.front_mut() {
                front.plan = None;
            }
            self.notify(card_status(card, ToolCallStatus::Completed));
            self.handle.submit(Op::ApprovePlan);
        } else {
            self.settle_plan_question(&mut state, "end_turn", Some(Op::RejectPlan));
        }
    }

    /// Ends the session: what runs is cancelled, MCP servers and commands
    /// are stopped, and the event task sends the last updates and answers
    /// the prompts still waiting (`cancelled`) before this returns.
    pub async fn close(&self) {
        self.cancel();
        let session = self.session.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(session) = session {
            session.shutdown().await;
        }
        let forwarder = self.forwarder.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
    }
}

/// A card's new status.
pub(crate) fn card_status(card: &str, status: ToolCallStatus) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        card.to_string(),
        ToolCallUpdateFields::new().status(status),
    ))
}
