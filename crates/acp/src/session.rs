//! One editor session: an axon runtime session, the task that turns its
//! events into `session/update`s, and the `session/prompt`s waiting for
//! their turn to end.
//!
//! Every prompt the runtime turns into work produces exactly one turn, and
//! turns end in the order they were asked for, so waiting prompts are a
//! queue answered at each `turn_completed`, after the turn's last update
//! went out (the same writer carries both). Permission requests are asked
//! from their own tasks, so events keep flowing while the user decides.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol_schema::v1::{
    PermissionOption, PermissionOptionKind, RequestPermissionRequest, SessionNotification,
    SessionUpdate, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use axon_protocol::{AgentEvent, ApprovalDecision, Op, SessionInfo, StopReason};
use axon_runtime::{Events, Session, SessionHandle};
use serde_json::{Value, json};

use crate::rpc::{Outgoing, Peer, RpcError};
use crate::updates::{Mapper, message_chunk, usage};
use crate::{Link, Log};

/// A `session/prompt` waiting for its answer.
struct Waiting {
    id: Value,
    /// A plan was proposed in this prompt and the user is being asked to
    /// run it; the prompt ends when they answer.
    plan_question: bool,
}

/// What the request handlers and the event task share.
#[derive(Default)]
struct State {
    waiting: VecDeque<Waiting>,
    info: Option<SessionInfo>,
    /// The session's mode as the editor names it.
    mode: String,
    /// A turn is running: notices go to the transcript, not only the log.
    in_turn: bool,
    /// The last error of the running turn, for its answer.
    error: Option<String>,
    /// A plan was proposed during the running turn.
    proposed: bool,
    /// Text streamed during the running turn (an answer not streamed is
    /// sent whole).
    streamed: bool,
}

/// An open editor session.
pub struct AcpSession {
    pub id: String,
    handle: SessionHandle,
    session: Mutex<Option<Session>>,
    state: Arc<Mutex<State>>,
    out: Outgoing,
    log: Log,
}

impl AcpSession {
    /// Wraps an opened runtime session; `events` are its events so far
    /// and to come. Events already emitted (the session opening, a replayed
    /// history when `replay`) are sent before this returns, so a
    /// `session/load` answer follows them.
    pub fn start(
        id: String,
        session: Session,
        mut events: Events,
        root: &std::path::Path,
        mode: String,
        replay: bool,
        link: &Link,
    ) -> Arc<AcpSession> {
        let Link { out, peer, log } = link.clone();
        let state = Arc::new(Mutex::new(State { mode, ..State::default() }));
        let acp = Arc::new(AcpSession {
            id: id.clone(),
            handle: session.handle(),
            session: Mutex::new(Some(session)),
            state: Arc::clone(&state),
            out: out.clone(),
            log,
        });
        let mut pump = Pump { id, mapper: Mapper::new(root), acp: Arc::clone(&acp), peer };
        while let Ok(event) = events.try_recv() {
            match event {
                AgentEvent::History { messages } if replay => {
                    for update in pump.mapper.replay(&messages) {
                        pump.send(update);
                    }
                }
                event => pump.event(event),
            }
        }
        tokio::spawn(pump.run(events));
        acp
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn notify(&self, update: SessionUpdate) {
        self.out.notify("session/update", SessionNotification::new(self.id.clone(), update));
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

    /// Sends `op` as the work of the prompt `id`, answered when its turn ends.
    pub fn prompt(&self, id: Value, op: Op) {
        self.state().waiting.push_back(Waiting { id, plan_question: false });
        self.handle.submit(op);
    }

    /// Sends an operation that is not a prompt's work.
    pub fn submit(&self, op: Op) {
        self.handle.submit(op);
    }

    /// `session/cancel`: the running turn stops; a prompt waiting on the
    /// plan question ends now.
    pub fn cancel(&self) {
        self.handle.submit(Op::Cancel);
        let asked = {
            let mut state = self.state();
            match state.waiting.front() {
                Some(w) if w.plan_question => state.waiting.pop_front(),
                _ => None,
            }
        };
        if let Some(waiting) = asked {
            self.out.respond(waiting.id, Ok(json!({"stopReason": "cancelled"})));
        }
    }

    /// Ends the session: what runs is cancelled, MCP servers and commands
    /// are stopped, prompts still waiting answer `cancelled`.
    pub async fn close(&self) {
        self.handle.submit(Op::Cancel);
        let session = self.session.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(session) = session {
            session.shutdown().await;
        }
        let waiting: Vec<Waiting> = self.state().waiting.drain(..).collect();
        for w in waiting {
            self.out.respond(w.id, Ok(json!({"stopReason": "cancelled"})));
        }
    }
}

/// Turns one session's events into updates and answers.
struct Pump {
    id: String,
    mapper: Mapper,
    acp: Arc<AcpSession>,
    peer: Arc<Peer>,
}

impl Pump {
    async fn run(mut self, mut events: Events) {
        while let Some(event) = events.recv().await {
            self.event(event);
        }
        // The session ended: nothing will answer what still waits.
        let waiting: Vec<Waiting> = self.acp.state().waiting.drain(..).collect();
        for w in waiting {
            self.acp.out.respond(w.id, Ok(json!({"stopReason": "cancelled"})));
        }
    }

    fn send(&self, update: SessionUpdate) {
        self.acp.notify(update);
    }

    fn event(&mut self, event: AgentEvent) {
        match &event {
            AgentEvent::SessionStarted { session } => {
                self.acp.state().info = Some(session.clone());
            }
            AgentEvent::McpStatus { server, state, message } => {
                if let Some(info) = self.acp.state().info.as_mut()
                    && let Some(known) = info.mcp_servers.iter_mut().find(|s| &s.name == server)
                {
                    known.state = *state;
                    known.message = message.clone();
                }
                if let Some(message) = message {
                    self.notice(&format!("MCP server {server}: {state}: {message}"));
                }
            }
            AgentEvent::TurnStarted { .. } => {
                let mut state = self.acp.state();
                state.in_turn = true;
                state.error = None;
                state.proposed = false;
                state.streamed = false;
            }
            AgentEvent::Token { .. } => self.acp.state().streamed = true,
            AgentEvent::Answer { text } if !self.acp.state().streamed && !text.is_empty() => {
                self.send(message_chunk(text));
            }
            AgentEvent::PlanProposed { .. } => self.acp.state().proposed = true,
            AgentEvent::Info { message } => self.notice(message),
            AgentEvent::Warning { message } => self.notice(&format!("⚠ {message}")),
            AgentEvent::Error { message } => {
                (self.acp.log)(&format!("error: {message}"));
                self.acp.state().error = Some(message.clone());
            }
            AgentEvent::ApprovalRequested { call, preview } => {
                let (announce, asked) = self.mapper.ask(call, preview);
                for update in announce {
                    self.send(update);
                }
                self.ask_permission(call.id.clone(), asked);
            }
            AgentEvent::TurnCompleted { stop_reason, context_tokens, .. } => {
                self.turn_completed(*stop_reason, *context_tokens);
                return;
            }
            _ => {}
        }
        for update in self.mapper.event(&event) {
            self.send(update);
        }
    }

    /// A notice: in the transcript while a turn runs, in the log always.
    fn notice(&self, message: &str) {
        (self.acp.log)(message);
        if self.acp.state().in_turn {
            self.send(message_chunk(&format!("\n\n_{message}_\n\n")));
        }
    }

    fn turn_completed(&mut self, stop_reason: StopReason, context_tokens: u64) {
        let (window, proposed, error) = {
            let mut state = self.acp.state();
            state.in_turn = false;
            let window = state.info.as_ref().map_or(0, |i| i.context_window);
            (window, std::mem::take(&mut state.proposed), state.error.take())
        };
        if window > 0 {
            self.send(usage(context_tokens, window));
        }
        if proposed && stop_reason == StopReason::EndTurn {
            let asked = {
                let mut state = self.acp.state();
                match state.waiting.front_mut() {
                    Some(w) if !w.plan_question => {
                        w.plan_question = true;
                        true
                    }
                    _ => false,
                }
            };
            if asked {
                self.ask_to_run_plan();
                return;
            }
        }
        let Some(waiting) = self.acp.state().waiting.pop_front() else { return };
        let answer = match stop_reason {
            StopReason::EndTurn => Ok(json!({"stopReason": "end_turn"})),
            StopReason::MaxIterations => Ok(json!({"stopReason": "max_turn_requests"})),
            StopReason::Cancelled => Ok(json!({"stopReason": "cancelled"})),
            StopReason::Refusal => Ok(json!({"stopReason": "refusal"})),
            StopReason::Error => Err(RpcError::internal(
                error.unwrap_or_else(|| "the turn failed; axon's log on stderr says why".into()),
            )),
        };
        self.acp.out.respond(waiting.id, answer);
    }

    /// Asks the editor about one tool call; its answer goes to the runtime.
    fn ask_permission(&self, call_id: String, call: ToolCallUpdate) {
        let options = vec![
            PermissionOption::new("allow_once", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                "allow_always",
                "Always allow this tool in this session",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new("reject_once", "Reject", PermissionOptionKind::RejectOnce),
            PermissionOption::new(
                "reject_always",
                "Reject, and say not to try again",
                PermissionOptionKind::RejectAlways,
            ),
        ];
        let request = RequestPermissionRequest::new(self.id.clone(), call, options);
        let peer = Arc::clone(&self.peer);
        let acp = Arc::clone(&self.acp);
        tokio::spawn(async move {
            let answer = peer.request("session/request_permission", request).await;
            let decision = match selected(&answer).as_deref() {
                Some("allow_once") => ApprovalDecision::Once,
                Some("allow_always") => ApprovalDecision::Always,
                Some("reject_always") => ApprovalDecision::Deny {
                    reason: Some(
                        "the user rejected this and asks you not to try it again".to_string(),
                    ),
                },
                Some(_) => ApprovalDecision::Deny { reason: None },
                None => ApprovalDecision::Deny {
                    reason: Some(match answer {
                        Err(e) => format!("the editor could not ask the user: {}", e.message),
                        Ok(_) => "the user cancelled".to_string(),
                    }),
                },
            };
            acp.submit(Op::Approve { call_id, decision });
        });
    }

    /// Plan mode proposed a plan: the editor is asked whether to run it.
    /// Yes runs it as part of the same prompt; no ends the prompt.
    fn ask_to_run_plan(&self) {
        let call_id = format!("plan-{}", fastid());
        let fields = ToolCallUpdateFields::new()
            .title("Run this plan?".to_string())
            .kind(ToolKind::SwitchMode)
            .status(ToolCallStatus::Pending);
        let announce =
            agent_client_protocol_schema::v1::ToolCall::new(call_id.clone(), "Run this plan?")
                .kind(ToolKind::SwitchMode)
                .status(ToolCallStatus::Pending);
        self.send(SessionUpdate::ToolCall(announce));
        let options = vec![
            PermissionOption::new("run", "Run the plan", PermissionOptionKind::AllowOnce),
            PermissionOption::new("keep", "Keep planning", PermissionOptionKind::RejectOnce),
        ];
        let request = RequestPermissionRequest::new(
            self.id.clone(),
            ToolCallUpdate::new(call_id.clone(), fields),
            options,
        );
        let peer = Arc::clone(&self.peer);
        let acp = Arc::clone(&self.acp);
        tokio::spawn(async move {
            let answer = peer.request("session/request_permission", request).await;
            let run = selected(&answer).as_deref() == Some("run");
            let status = if run { ToolCallStatus::Completed } else { ToolCallStatus::Failed };
            acp.notify(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id.clone(),
                ToolCallUpdateFields::new().status(status),
            )));
            let still_asked = matches!(acp.state().waiting.front(), Some(w) if w.plan_question);
            if !still_asked {
                // Cancelled meanwhile: the prompt was answered.
                return;
            }
            if run {
                acp.submit(Op::ApprovePlan);
            } else {
                let waiting = acp.state().waiting.pop_front();
                acp.submit(Op::RejectPlan);
                if let Some(w) = waiting {
                    acp.out.respond(w.id, Ok(json!({"stopReason": "end_turn"})));
                }
            }
        });
    }
}

/// The option the user picked; `None` when they cancelled or the request
/// failed.
fn selected(answer: &Result<Value, RpcError>) -> Option<String> {
    let outcome = answer.as_ref().ok()?.get("outcome")?;
    if outcome.get("outcome")?.as_str()? != "selected" {
        return None;
    }
    Some(outcome.get("optionId")?.as_str()?.to_string())
}

fn fastid() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{nanos:08x}")
}
