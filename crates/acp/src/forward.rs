//! A session's event task: the runtime's events, in order, become
//! `session/update`s, permission requests, and the answers of waiting
//! prompts.
//!
//! Requests to the client are sent from here, in event order (a question
//! never reaches the editor after the answer of the turn that asked it);
//! only waiting for their answers happens in tasks of their own, so events
//! keep flowing while the user decides.

use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    ConfigOptionUpdate, Notice, NoticeSeverity, PermissionOption, PermissionOptionKind,
    PromptResponse, RequestPermissionRequest, SessionUpdate, StopReason as AcpStopReason,
    ToolCall as AcpToolCall, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
    Usage as AcpUsage,
};
use axon_protocol::{
    AgentEvent, ApprovalDecision, McpState, Op, RuleSuggestion, StopReason, ToolCall, Usage,
};
use axon_runtime::Events;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::rpc::RpcError;
use crate::session::AcpSession;
use crate::updates::{Mapper, context_usage, message_chunk};

/// The extension notification that carries the MCP servers' states.
pub(crate) const MCP_SERVERS_METHOD: &str = "_axon/mcp_servers";

pub(crate) struct EventForwarder {
    mapper: Mapper,
    acp: Arc<AcpSession>,
    /// Plan questions asked so far, numbering their cards.
    plan_questions: u32,
}

impl EventForwarder {
    /// Sends what `events` already hold (a replayed history first, when
    /// `replay`), then serves the rest in a task.
    pub(crate) fn start(acp: Arc<AcpSession>, mut events: Events, replay: bool) -> JoinHandle<()> {
        let mut forwarder =
            EventForwarder { mapper: Mapper::new(&acp.roots.editor), acp, plan_questions: 0 };
        while let Ok(event) = events.try_recv() {
            match event {
                AgentEvent::History { messages } if replay => {
                    for update in forwarder.mapper.replay(&messages) {
                        forwarder.send(update);
                    }
                }
                event => forwarder.event(event),
            }
        }
        tokio::spawn(forwarder.run(events))
    }

    async fn run(mut self, mut events: Events) {
        while let Some(event) = events.recv().await {
            self.event(event);
        }
        // The session ended: nothing will answer what still waits, or what
        // comes later.
        let waiting: Vec<_> = {
            let mut state = self.acp.state();
            state.closed = true;
            state.waiting.drain(..).collect()
        };
        for w in waiting {
            if let Some(card) = w.plan {
                self.send(crate::session::card_status(&card, ToolCallStatus::Failed));
            }
            self.acp.out().respond(w.id, Ok(json!({"stopReason": "cancelled"})));
        }
    }

    fn send(&self, update: SessionUpdate) {
        self.acp.notify(update);
    }

    fn log(&self, message: &str) {
        (self.acp.link.log)(message);
    }

    fn event(&mut self, event: AgentEvent) {
        match &event {
            AgentEvent::SessionStarted { session } => {
                {
                    let mut state = self.acp.state();
                    let mut info = session.clone();
                    // A server can change state after the session's list was
                    // taken and before it was sent (one that cannot start
                    // fails at once): those changes, heard first, are newer.
                    for (server, mcp, message) in std::mem::take(&mut state.early_mcp) {
                        if let Some(known) = info.mcp_servers.iter_mut().find(|s| s.name == server)
                        {
                            known.state = mcp;
                            known.message = message;
                        }
                    }
                    state.info = Some(info);
                }
                self.acp.send_mcp_servers();
            }
            AgentEvent::McpStatus { server, state, message } => {
                {
                    let mut acp = self.acp.state();
                    match acp.info.as_mut() {
                        Some(info) => {
                            if let Some(known) =
                                info.mcp_servers.iter_mut().find(|s| &s.name == server)
                            {
                                known.state = *state;
                                known.message = message.clone();
                            }
                        }
                        None => acp.early_mcp.push((server.clone(), *state, message.clone())),
                    }
                }
                self.acp.send_mcp_servers();
                match message {
                    Some(message) if *state == McpState::Error => self.notice(
                        NoticeSeverity::Error,
                        &format!("MCP server {server}: {state}: {message}"),
                    ),
                    Some(message) => self.notice(
                        NoticeSeverity::Info,
                        &format!("MCP server {server}: {state} ({message})"),
                    ),
                    None => {}
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
            AgentEvent::ModelChanged { provider, model, context_window } => {
                let options = {
                    let mut state = self.acp.state();
                    if let Some(models) = state.models.as_mut() {
                        models.current = model.clone();
                    }
                    crate::models::config_options(state.models.as_ref())
                };
                self.send(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options)));
                self.notice(
                    NoticeSeverity::Info,
                    &format!("model: {provider}/{model} ({context_window} token window)"),
                );
            }
            AgentEvent::Info { message } => self.notice(NoticeSeverity::Info, message),
            AgentEvent::Warning { message } => self.notice(NoticeSeverity::Warning, message),
            AgentEvent::Error { message } => {
                self.log(&format!("error: {message}"));
                self.acp.state().error = Some(message.clone());
            }
            AgentEvent::ApprovalRequested { call, preview, rule } => {
                let (announce, asked) = self.mapper.ask(call, preview);
                for update in announce {
                    self.send(update);
                }
                self.ask_permission(call, asked, rule.as_ref());
                return;
            }
            AgentEvent::TurnCompleted {
                stop_reason,
                context_tokens,
                usage,
                session_cost_usd,
                ..
            } => {
                self.turn_completed(*stop_reason, *context_tokens, usage, *session_cost_usd);
                return;
            }
            _ => {}
        }
        for update in self.mapper.event(&event) {
            self.send(update);
        }
    }

    /// A notice (a retry, a server's state, a warning): in the log always;
    /// to a client that shows notices as a `notice` update; to one that does
    /// not, while a turn runs, as a thought chunk: shown apart from the
    /// answer, never part of its text (a harness records the answer's text as
    /// the agent's message, and Harbor's runner declares no notices).
    fn notice(&self, severity: NoticeSeverity, message: &str) {
        self.log(message);
        let (notices, in_turn) = {
            let state = self.acp.state();
            (state.notices, state.in_turn)
        };
        if notices {
            self.send(SessionUpdate::Notice(Notice::new(severity, message.to_string())));
        } else if in_turn {
            let mark = if severity == NoticeSeverity::Info { "" } else { "⚠ " };
            let text = format!("{mark}{message}\n");
            self.send(SessionUpdate::AgentThoughtChunk(
                agent_client_protocol_schema::v1::ContentChunk::new(text.as_str().into()),
            ));
        }
    }

    fn turn_completed(
        &mut self,
        stop_reason: StopReason,
        context_tokens: u64,
        usage: &Usage,
        // The session's, as the runtime counts it (a resumed session's
        // earlier runs included).
        cost: Option<f64>,
    ) {
        let (window, proposed, error) = {
            let mut state = self.acp.state();
            if let Some(info) = state.info.as_mut() {
                info.cost_usd = cost;
            }
            state.in_turn = false;
            // The runtime forgot the turn's questions; so do we.
            state.questions.clear();
            let window = state.info.as_ref().map_or(0, |i| i.context_window);
            (window, std::mem::take(&mut state.proposed), state.error.take())
        };
        if window > 0 {
            self.send(context_usage(context_tokens, window, cost));
        }
        if proposed && stop_reason == StopReason::EndTurn && self.ask_to_run_plan() {
            return;
        }
        let Some(waiting) = self.acp.state().waiting.pop_front() else { return };
        let stop_reason = if waiting.cancelled { StopReason::Cancelled } else { stop_reason };
        let answer = match stop_reason {
            StopReason::EndTurn => Ok(AcpStopReason::EndTurn),
            StopReason::MaxIterations => Ok(AcpStopReason::MaxTurnRequests),
            StopReason::Cancelled => Ok(AcpStopReason::Cancelled),
            StopReason::Refusal => Ok(AcpStopReason::Refusal),
            StopReason::Error => Err(RpcError::internal(
                error.unwrap_or_else(|| "the turn failed; axon's log on stderr says why".into()),
            )),
        };
        let answer = answer.map(|stop| {
            let response = PromptResponse::new(stop).usage(turn_usage(usage));
            serde_json::to_value(response).unwrap_or_else(|_| json!({"stopReason": "end_turn"}))
        });
        self.acp.out().respond(waiting.id, answer);
    }

    /// Asks the editor about one tool call; its answer goes to the runtime
    /// while the question is still open ("reject always" makes the runtime
    /// refuse the tool for the session, in every mode). "Always allow" is
    /// offered only with a rule to save, and names it.
    fn ask_permission(
        &self,
        call: &ToolCall,
        asked: ToolCallUpdate,
        rule: Option<&RuleSuggestion>,
    ) {
        let card = asked.tool_call_id.0.to_string();
        let mut options =
            vec![PermissionOption::new("allow_once", "Allow", PermissionOptionKind::AllowOnce)];
        if let Some(rule) = rule {
            options.push(PermissionOption::new(
                "allow_always",
                format!("Always: {}", rule.always_text()),
                PermissionOptionKind::AllowAlways,
            ));
        }
        options.extend([
            PermissionOption::new("reject_once", "Reject", PermissionOptionKind::RejectOnce),
            PermissionOption::new(
                "reject_always",
                "Always reject this tool in this session",
                PermissionOptionKind::RejectAlways,
            ),
        ]);
        self.acp.state().questions.insert(card.clone());
        let request = RequestPermissionRequest::new(self.acp.id.clone(), asked, options);
        let answer = self.acp.link.peer.start("session/request_permission", request);
        let acp = Arc::clone(&self.acp);
        let call_id = call.id.clone();
        tokio::spawn(async move {
            let answer = answer.wait().await;
            let picked = selected(&answer);
            let decision = match picked.as_deref() {
                Some("allow_once") => ApprovalDecision::Once,
                Some("allow_always") => ApprovalDecision::Always,
                Some("reject_always") => ApprovalDecision::Never { reason: None },
                Some(_) => ApprovalDecision::Deny { reason: None },
                None => ApprovalDecision::Deny {
                    reason: Some(match answer {
                        Err(e) => format!("the editor could not ask the user: {}", e.message),
                        Ok(_) => "the user cancelled".to_string(),
                    }),
                },
            };
            let mut state = acp.state();
            if !state.questions.remove(&card) {
                return;
            }
            acp.submit(Op::Approve { call_id, decision });
        });
    }

    /// Plan mode proposed a plan for the one prompt waiting: the editor is
    /// asked whether to run it (as part of the same prompt). False when
    /// there is none to ask for: no prompt, one cancelled, or another
    /// prompt already sent behind it (the user moved on, and its turn
    /// comes next, so the plan is left as proposed).
    fn ask_to_run_plan(&mut self) -> bool {
        self.plan_questions += 1;
        let card = format!("plan-{}", self.plan_questions);
        {
            let mut state = self.acp.state();
            if state.waiting.len() != 1 {
                return false;
            }
            match state.waiting.front_mut() {
                Some(front) if front.plan.is_none() && !front.cancelled => {
                    front.plan = Some(card.clone());
                }
                _ => return false,
            }
        }
        let announce = AcpToolCall::new(card.clone(), "Run this plan?").kind(ToolKind::SwitchMode);
        self.send(SessionUpdate::ToolCall(announce));
        let fields = ToolCallUpdateFields::new()
            .title("Run this plan?".to_string())
            .kind(ToolKind::SwitchMode)
            .status(ToolCallStatus::Pending);
        let options = vec![
            PermissionOption::new("run", "Run the plan", PermissionOptionKind::AllowOnce),
            PermissionOption::new("keep", "Keep planning", PermissionOptionKind::RejectOnce),
        ];
        let request = RequestPermissionRequest::new(
            self.acp.id.clone(),
            ToolCallUpdate::new(card.clone(), fields),
            options,
        );
        let answer = self.acp.link.peer.start("session/request_permission", request);
        let acp = Arc::clone(&self.acp);
        tokio::spawn(async move {
            let run = selected(&answer.wait().await).as_deref() == Some("run");
            acp.plan_answer(&card, run);
        });
        true
    }
}

/// The tokens a turn's model calls used, as ACP's end-of-turn usage (a
/// harness records them as the turn's cost): input counts every prompt
/// token, cached ones included; cached and reasoning tokens are given when
/// the provider reported any.
fn turn_usage(usage: &Usage) -> AcpUsage {
    let some = |n: u64| (n > 0).then_some(n);
    AcpUsage::new(usage.total(), usage.input_tokens, usage.output_tokens)
        .thought_tokens(some(usage.reasoning_tokens))
        .cached_read_tokens(some(usage.cached_input_tokens))
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
