//! What the session's events do to the UI. Every [`AgentEvent`] is handled
//! here, so a front end passes each one on and does nothing else with it:
//! the status line, the session's description ([`App::info`]), the
//! transcript, approvals and the plan panel all follow from the stream.

use axon_protocol::{AgentEvent, McpServerInfo, McpState, SessionInfo, StopReason};

use super::{App, ServerStatus};
use crate::card::{CardState, ToolCard};
use crate::transcript::{Entry, Level};

/// What a cancelled turn leaves on screen.
const STOPPED: &str = "Stopped. What was written so far is kept.";

impl App {
    /// One event of the session, in the order it was emitted.
    pub fn on_agent_event(&mut self, event: AgentEvent) {
        match event {
            // The UI shows the prompts it sends as they are typed.
            AgentEvent::Header { .. } | AgentEvent::Custom { .. } | AgentEvent::Prompt { .. } => {}
            AgentEvent::ModeChanged { mode, approval } => {
                self.mode = mode;
                if let Some(info) = &mut self.info {
                    info.mode = mode;
                    info.approval = approval;
                }
            }
            AgentEvent::SessionStarted { session } => self.session_started(session),
            AgentEvent::History { messages } => {
                self.load_history(&messages);
                // A plan belongs to the conversation that was replaced.
                self.plan = None;
            }
            // The provider's models, to pick from (`/model` without a name).
            AgentEvent::Models { provider, current, models } => {
                let items = models
                    .into_iter()
                    .map(|m| {
                        let note = if m == current { "in use" } else { "" }.to_string();
                        (m, note)
                    })
                    .collect();
                if self.pick("/model ", items) {
                    self.notice(
                        Level::Info,
                        format!("Models of {provider}: ↑/↓, Enter switches, Esc closes the list."),
                    );
                }
            }
            AgentEvent::BackgroundCommands { commands } => {
                self.notice(Level::Info, axon_protocol::background_text(&commands));
            }
            AgentEvent::SessionSaved { session_id } => {
                if let Some(info) = &mut self.info {
                    info.session_id = Some(session_id.clone());
                }
                self.status.session = session_id;
            }
            // The front end marks a turn it asked for as soon as it asks;
            // starting it again here would forget the cards it shows.
            AgentEvent::TurnStarted { .. } if self.is_busy() => {}
            AgentEvent::TurnStarted { .. } => self.turn_started(),
            AgentEvent::TurnCompleted { stop_reason, context_tokens, session_cost_usd, .. } => {
                self.status.tokens = context_tokens;
                self.status.cost_usd = session_cost_usd;
                if let Some(info) = &mut self.info {
                    info.context_tokens = context_tokens;
                }
                let note = (stop_reason == StopReason::Cancelled)
                    .then(|| (Level::Warning, STOPPED.to_string()));
                self.turn_finished(note);
            }
            AgentEvent::Token { text } => self.stream(text, false),
            AgentEvent::Thought { text } => self.stream(text, true),
            AgentEvent::ApprovalRequested { call, preview, rule } => {
                self.ask_approval(call, preview, rule)
            }
            AgentEvent::Action { call, .. } if self.has_card(&call.id) => {}
            AgentEvent::Action { call, .. } => {
                self.end_streaming();
                let server = self.server_of(&call.name);
                self.transcript.push(Entry::Tool(ToolCard::new(call, server)));
            }
            AgentEvent::Observation { call_id, output, .. } => {
                self.approvals.retain(|id| *id != call_id);
                if let Some(card) = self.transcript.card_mut(&call_id) {
                    card.awaiting_approval = false;
                    card.state = CardState::Done(output);
                }
            }
            AgentEvent::ToolProgress { call_id, message, progress, total } => {
                if let Some(card) = self.transcript.card_mut(&call_id) {
                    card.set_progress(message.as_deref(), progress, total);
                }
            }
            AgentEvent::Elicitation { id, server, message, schema } => {
                self.ask_form(id, server, message, schema)
            }
            AgentEvent::PlanProposed { plan } => self.propose_plan(plan),
            AgentEvent::PlanChanged { plan } => self.update_plan(plan),
            // The plan panel shows each step's status from `PlanChanged`.
            AgentEvent::StepStarted { .. } | AgentEvent::StepComplete { .. } => {}
            AgentEvent::Answer { text } => {
                let streamed = self.transcript.entries().skip(self.turn_start).any(
                    |e| matches!(e, Entry::Assistant { text: t, .. } if text.trim().ends_with(t.trim())),
                );
                self.end_streaming();
                if !streamed && !text.trim().is_empty() {
                    self.transcript.push(Entry::Assistant { text, streaming: false });
                }
            }
            AgentEvent::McpStatus { server, state, message } => {
                if state == McpState::Error {
                    let why = message.clone().unwrap_or_default();
                    self.notice(Level::Warning, format!("MCP server {server} failed: {why}"));
                } else if state == McpState::NeedsLogin {
                    self.notice(Level::Warning, message.clone().unwrap_or_default());
                }
                // A server that joins after the session opened is news:
                // its tools arrive from now on.
                if state == McpState::Ready
                    && let Some(took) = &message
                {
                    self.notice(Level::Info, format!("MCP server {server}: ready ({took})"));
                }
                if let Some(info) = &mut self.info {
                    let known =
                        McpServerInfo { name: server.clone(), state, message: message.clone() };
                    match info.mcp_servers.iter_mut().find(|s| s.name == server) {
                        Some(entry) => *entry = known,
                        None => info.mcp_servers.push(known),
                    }
                }
                self.status.servers.insert(server, ServerStatus { state, message });
            }
            AgentEvent::ModelChanged { provider, model, context_window } => {
                if let Some(info) = &mut self.info {
                    info.provider = provider.clone();
                    info.model = model.clone();
                    info.context_window = context_window;
                }
                self.status.provider = provider;
                self.status.model = model;
                self.status.window = context_window;
            }
            AgentEvent::TurnRestarted { reason } => {
                // What streamed of the broken reply is void.
                while self.transcript.len() > self.turn_start
                    && matches!(
                        self.transcript.last(),
                        Some(Entry::Assistant { .. } | Entry::Reasoning { .. })
                    )
                {
                    self.transcript.truncate(self.transcript.len() - 1);
                }
                self.notice(Level::Warning, reason);
            }
            AgentEvent::Info { message } => self.notice(Level::Info, message),
            AgentEvent::Warning { message } => self.notice(Level::Warning, message),
            AgentEvent::Error { message } => self.notice(Level::Error, message),
            AgentEvent::Subagent { call_id, agent, event } => {
                self.subagent_event(&call_id, &agent, *event);
            }
            AgentEvent::Usage { usage, .. } => {
                self.status.tokens = usage.input_tokens + usage.output_tokens;
            }
        }
    }

    /// A step of the subagent the call `call_id` started, shown in its
    /// card. A call of the subagent's that the user was asked about has a
    /// card of its own (the question); its result closes that card.
    fn subagent_event(&mut self, call_id: &str, agent: &str, event: AgentEvent) {
        let mut inner = &event;
        while let AgentEvent::Subagent { event, .. } = inner {
            inner = event;
        }
        if let AgentEvent::Observation { call_id: asked, output, .. } = inner
            && asked != call_id
            && self.has_card(asked)
        {
            self.approvals.retain(|id| id != asked);
            if let Some(card) = self.transcript.card_mut(asked) {
                card.awaiting_approval = false;
                card.state = CardState::Done(output.clone());
            }
        }
        if let Some(card) = self.transcript.card_mut(call_id) {
            card.steps.get_or_insert_default().push(agent, &event);
        }
    }

    /// The session opened, or its conversation was replaced: the status
    /// line and mode follow what it says it is. A server that failed is
    /// told once: not again when it was already shown failed (an earlier
    /// `McpStatus`, or the conversation before this one).
    fn session_started(&mut self, session: SessionInfo) {
        for server in &session.mcp_servers {
            let known = self.status.servers.get(&server.name).map(|s| s.state);
            if server.state == McpState::Error && known != Some(McpState::Error) {
                let why = server.message.clone().unwrap_or_default();
                self.notice(Level::Warning, format!("MCP server {} failed: {why}", server.name));
            }
        }
        self.status.provider = session.provider.clone();
        self.status.model = session.model.clone();
        self.status.window = session.context_window;
        self.status.session = session.session_id.clone().unwrap_or_default();
        self.status.tokens = session.context_tokens;
        self.status.cost_usd = session.cost_usd;
        self.status.servers = session
            .mcp_servers
            .iter()
            .map(|s| (s.name.clone(), ServerStatus { state: s.state, message: s.message.clone() }))
            .collect();
        // The mode switch is the user's: the front end sends it with each
        // prompt, so a session's own mode (a one-off /plan) never flips it.
        self.info = Some(session);
    }
}
