//! The session answering what its MCP servers ask of it.
//!
//! Sampling (`sampling/createMessage`) runs the server's own messages on the
//! session's current model, never the conversation, and only with consent:
//! an `approval_requested` whose preview is [`Preview::Sampling`] (answered
//! with `approve`; "always" and "never" hold for that server for the rest
//! of the session), or the approval mode `auto`. A session nobody answers
//! in `ask` mode, and any in `read-only`, refuses. The request shows as a
//! call (`action`, then `observation`) named [`SAMPLING_CALL`], and the
//! model's usage is the session's, as a `usage` event counted in the turn.
//!
//! Forms (`elicitation/create`) become an `elicitation` event answered with
//! `elicit`, when the front end shows forms; the wait ends with the turn or
//! after [`FORM_TIMEOUT`]. Otherwise the MCP client's own answer stands
//! (the form's defaults, or declined).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axon_core::{Approval, ApprovalPolicy, Budget, SharedApproval};
use axon_llm::{FinishReason, Provider, ProviderEvent, ProviderRequest};
use axon_mcp::host::{
    ClientHost, ElicitationRequest, Elicited, HostFuture, SamplingReply, SamplingRequest,
};
use axon_protocol::{AgentEvent, ContentPart, ElicitAction, Preview, ToolCall, ToolOutput};
use futures_util::StreamExt;
use serde_json::json;

use crate::approvals::SessionControl;
use crate::events::Emitter;
use crate::meter::{Meter, Tally};

/// The name a sampling request goes by in `action` and `observation`.
pub const SAMPLING_CALL: &str = "mcp_sampling";
/// Longest a form waits for the user.
pub const FORM_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Characters of a server's system prompt an approval shows.
const PROMPT_SHOWN: usize = 200;

/// What the session lends its MCP servers' requests.
pub(crate) struct McpHost {
    pub events: Emitter,
    pub shared: Arc<SessionControl>,
    pub approval: Arc<SharedApproval>,
    /// Someone answers approval requests.
    pub interactive: bool,
    /// The front end shows forms and answers them.
    pub forms: bool,
    provider: Mutex<Arc<dyn Provider>>,
    /// The running turn's usage, which sampling adds to.
    usage: Mutex<Option<Arc<Mutex<Tally>>>>,
    /// Prices sampling's calls and counts them in the session's spending.
    meter: Arc<Meter>,
    /// Servers the user allowed (`true`) or refused (`false`) for good.
    decided: Mutex<(HashSet<String>, HashSet<String>)>,
    next: AtomicU64,
}

impl McpHost {
    pub(crate) fn new(
        events: Emitter,
        shared: Arc<SessionControl>,
        provider: Arc<dyn Provider>,
        interactive: bool,
        forms: bool,
        meter: Arc<Meter>,
    ) -> McpHost {
        let approval = Arc::clone(&shared.approval);
        McpHost {
            events,
            shared,
            approval,
            interactive,
            forms,
            provider: Mutex::new(provider),
            usage: Mutex::new(None),
            meter,
            decided: Mutex::default(),
            next: AtomicU64::new(1),
        }
    }

    /// The model sampling uses from now on.
    pub(crate) fn set_provider(&self, provider: Arc<dyn Provider>) {
        *self.provider.lock().unwrap_or_else(PoisonError::into_inner) = provider;
    }

    /// Where sampling's usage is counted: the running turn's total.
    pub(crate) fn set_turn_usage(&self, usage: Option<Arc<Mutex<Tally>>>) {
        *self.usage.lock().unwrap_or_else(PoisonError::into_inner) = usage;
    }

    fn fresh_id(&self, kind: &str) -> String {
        format!("{kind}-{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Whether `server` may sample now: `Err` says why not.
    async fn consent(&self, server: &str, call: &ToolCall, preview: Preview) -> Result<(), String> {
        // The session's mode first: an earlier "always" does not outlive a
        // switch to read-only.
        if self.approval.get() == ApprovalPolicy::ReadOnly {
            return Err("the session is read-only: sampling is refused".to_string());
        }
        {
            let decided = self.decided.lock().unwrap_or_else(PoisonError::into_inner);
            if decided.1.contains(server) {
                return Err(format!("the user refused sampling for MCP server {server}"));
            }
            if decided.0.contains(server) {
                return Ok(());
            }
        }
        match self.approval.get() {
            ApprovalPolicy::Auto => return Ok(()),
            ApprovalPolicy::ReadOnly => {
                return Err("the session is read-only: sampling is refused".to_string());
            }
            ApprovalPolicy::Ask if !self.interactive => {
                return Err(
                    "nobody can approve sampling in this session (run with --yes to allow it)"
                        .to_string(),
                );
            }
            ApprovalPolicy::Ask => {}
        }
        let answer = self.shared.ask(&call.id);
        let cancel = self.shared.token();
        self.events.emit(AgentEvent::ApprovalRequested { call: call.clone(), preview, rule: None });
        let answer = tokio::select! {
            answer = answer => answer.unwrap_or_else(|_| Approval::Deny("the question went unanswered".into())),
            () = cancel.cancelled() => {
                self.shared.drop_question(&call.id);
                Approval::Deny("the turn was cancelled".into())
            }
        };
        let mut decided = self.decided.lock().unwrap_or_else(PoisonError::into_inner);
        match answer {
            Approval::Allow => Ok(()),
            Approval::AllowTool => {
                decided.0.insert(server.to_string());
                Ok(())
            }
            Approval::Deny(reason) => Err(reason),
            Approval::DenyTool(reason) => {
                decided.1.insert(server.to_string());
                Err(reason)
            }
        }
    }

    /// Runs `request` on the session's model.
    async fn run(&self, request: &SamplingRequest) -> Result<SamplingReply, String> {
        // Sampling spends the session's budget like the agent's requests:
        // once it is spent, the server is told so and nothing is sent.
        if let Some(refusal) = self.meter.budget().as_ref().and_then(Budget::refusal) {
            return Err(refusal);
        }
        let provider = Arc::clone(&self.provider.lock().unwrap_or_else(PoisonError::into_inner));
        let system = request.system_prompt.clone().unwrap_or_default();
        let provider_request = ProviderRequest {
            system: system.into(),
            messages: &request.messages,
            tools: Default::default(),
            text_tools: Default::default(),
            max_output_tokens: Some(request.max_tokens.max(1)),
            temperature: request.temperature,
            answer_only: true,
        };
        let cancel = self.shared.token();
        let mut stream = provider.stream(&provider_request);
        let (mut text, mut stop) = (String::new(), None);
        loop {
            let item = tokio::select! {
                () = cancel.cancelled() => return Err("the turn was cancelled".to_string()),
                item = stream.next() => item,
            };
            match item {
                Some(Ok(ProviderEvent::TextDelta(delta))) => text.push_str(&delta),
                Some(Ok(ProviderEvent::Usage(usage))) => {
                    let model = provider.info().model.clone();
                    let turn = self.usage.lock().unwrap_or_else(PoisonError::into_inner).clone();
                    self.meter.count(turn.as_deref(), Some(&model), &usage);
                    self.events.emit(AgentEvent::Usage { usage, model: Some(model) });
                }
                Some(Ok(ProviderEvent::Finish(reason))) => {
                    stop = Some(match reason {
                        FinishReason::Length => "maxTokens".to_string(),
                        _ => "endTurn".to_string(),
                    });
                    break;
                }
                None => break,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(format!("the model failed: {e}")),
            }
        }
        Ok(SamplingReply { model: provider.info().model.clone(), text, stop_reason: stop })
    }
}

fn preview(server: &str, request: &SamplingRequest) -> Preview {
    let characters = request
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .map(|part| match part {
            ContentPart::Text { text } => text.chars().count(),
            _ => 0,
        })
        .sum();
    let system_prompt = request.system_prompt.as_ref().map(|prompt| {
        let mut shown: String = prompt.chars().take(PROMPT_SHOWN).collect();
        if shown.len() < prompt.len() {
            shown.push('…');
        }
        shown
    });
    Preview::Sampling {
        server: server.to_string(),
        messages: request.messages.len(),
        characters,
        max_tokens: request.max_tokens,
        system_prompt,
    }
}

impl ClientHost for McpHost {
    fn sample<'a>(
        &'a self,
        server: &'a str,
        request: SamplingRequest,
    ) -> HostFuture<'a, Result<SamplingReply, String>> {
        Box::pin(async move {
            let preview = preview(server, &request);
            let Preview::Sampling { messages, characters, max_tokens, .. } = &preview else {
                return Err("internal: not a sampling preview".to_string());
            };
            let call = ToolCall {
                id: self.fresh_id("sampling"),
                name: SAMPLING_CALL.to_string(),
                arguments: json!({
                    "server": server, "messages": messages, "characters": characters,
                    "max_tokens": max_tokens,
                }),
            };
            let result = match self.consent(server, &call, preview).await {
                Ok(()) => {
                    self.events.emit(AgentEvent::Action {
                        call: call.clone(),
                        refused: false,
                        preview: None,
                    });
                    self.run(&request).await
                }
                Err(reason) => {
                    self.events.emit(AgentEvent::Action {
                        call: call.clone(),
                        refused: true,
                        preview: None,
                    });
                    Err(format!("sampling refused: {reason}"))
                }
            };
            let output = match &result {
                Ok(reply) => ToolOutput::text(format!(
                    "{} answered MCP server {server} ({} characters)",
                    reply.model,
                    reply.text.chars().count()
                )),
                Err(message) => ToolOutput::error(message.clone()),
            };
            self.events.emit(AgentEvent::Observation { call_id: call.id, name: call.name, output });
            result
        })
    }

    fn elicit<'a>(
        &'a self,
        server: &'a str,
        request: ElicitationRequest,
    ) -> HostFuture<'a, Option<Elicited>> {
        Box::pin(async move {
            if !self.forms {
                // Nobody sees forms here: a server's defaults stand for the
                // user only when the user let the session act alone.
                if self.approval.get() == ApprovalPolicy::Auto {
                    return None;
                }
                return Some(Elicited { action: ElicitAction::Decline, content: None });
            }
            let id = self.fresh_id("form");
            let answer = self.shared.ask_form(&id);
            let cancel = self.shared.token();
            self.events.emit(AgentEvent::Elicitation {
                id: id.clone(),
                server: server.to_string(),
                message: request.message,
                schema: request.schema,
            });
            let answered = tokio::select! {
                answer = answer => answer.ok(),
                () = cancel.cancelled() => None,
                () = tokio::time::sleep(FORM_TIMEOUT) => None,
            };
            self.shared.drop_form(&id);
            // Unanswered (the turn ended, time ran out): cancelled, not
            // filled in with defaults the user never saw.
            let (action, content) = answered.unwrap_or((ElicitAction::Cancel, None));
            Some(Elicited { action, content })
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use axon_protocol::ApprovalDecision;

    /// A host whose model is never reached: these tests stop at consent.
    fn host(interactive: bool, policy: ApprovalPolicy) -> (McpHost, crate::events::Events) {
        let mut config = axon_llm::preset("openai").unwrap();
        config.base_url = "http://127.0.0.1:9".into();
        config.api_key = Some("unused".into());
        let provider = axon_llm::build_provider(&config).unwrap();
        let (emitter, events) = crate::events::channel();
        let shared = Arc::new(SessionControl::default());
        shared.approval.set(policy);
        let meter = Arc::new(Meter::new(&crate::config::ConfigFile::default(), None));
        (McpHost::new(emitter, shared, provider, interactive, false, meter), events)
    }

    fn call() -> ToolCall {
        ToolCall { id: "sampling-9".into(), name: SAMPLING_CALL.into(), arguments: json!({}) }
    }

    fn asked() -> Preview {
        Preview::Sampling {
            server: "fx".into(),
            messages: 1,
            characters: 3,
            max_tokens: 10,
            system_prompt: None,
        }
    }

    #[tokio::test]
    async fn nobody_to_ask_or_a_read_only_session_refuses_without_asking() {
        let (ask, mut events) = host(false, ApprovalPolicy::Ask);
        let refused = ask.consent("fx", &call(), asked()).await.unwrap_err();
        assert!(refused.contains("--yes"), "{refused}");
        let (read_only, _) = host(true, ApprovalPolicy::ReadOnly);
        let refused = read_only.consent("fx", &call(), asked()).await.unwrap_err();
        assert!(refused.contains("read-only"), "{refused}");
        let (auto, _) = host(false, ApprovalPolicy::Auto);
        assert_eq!(auto.consent("fx", &call(), asked()).await, Ok(()));
        assert!(events.try_recv().is_err(), "nothing was asked");
    }

    /// Sampling is a request to the session's model: a spent budget sends
    /// none (this host's model is unreachable, so an attempt would fail
    /// otherwise, with another message).
    #[tokio::test]
    async fn a_spent_budget_refuses_sampling_without_a_request() {
        let (mut host, _events) = host(false, ApprovalPolicy::Auto);
        let file = crate::config::ConfigFile { max_budget_usd: Some(0.0), ..Default::default() };
        host.meter = Arc::new(Meter::new(&file, None));
        let request = SamplingRequest {
            system_prompt: None,
            messages: vec![axon_protocol::Message::user("hi")],
            max_tokens: 10,
            temperature: None,
        };
        let refused = host.run(&request).await.unwrap_err();
        assert!(refused.contains("budget") && refused.contains("--max-budget-usd"), "{refused}");
    }

    #[tokio::test]
    async fn never_refuses_that_servers_sampling_for_the_session() {
        let (host, mut events) = host(true, ApprovalPolicy::Ask);
        let shared = Arc::clone(&host.shared);
        let answering = tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                if let AgentEvent::ApprovalRequested { call, .. } = event {
                    shared.answer(&call.id, ApprovalDecision::Never { reason: None });
                    return;
                }
            }
        });
        assert!(host.consent("fx", &call(), asked()).await.is_err());
        answering.await.unwrap();
        // Not asked again: nobody answers now, and it is refused at once.
        let again = host.consent("fx", &call(), asked()).await.unwrap_err();
        assert!(again.contains("refused sampling for MCP server fx"), "{again}");
    }

    #[tokio::test]
    async fn always_does_not_outlive_a_switch_to_read_only() {
        let (host, _events) = host(true, ApprovalPolicy::Ask);
        host.decided.lock().unwrap().0.insert("fx".to_string());
        assert_eq!(host.consent("fx", &call(), asked()).await, Ok(()));
        host.shared.approval.set(ApprovalPolicy::ReadOnly);
        let refused = host.consent("fx", &call(), asked()).await.unwrap_err();
        assert!(refused.contains("read-only"), "{refused}");
    }

    #[tokio::test]
    async fn a_form_nobody_sees_is_declined_unless_the_session_acts_alone() {
        let request = || ElicitationRequest {
            message: "Delete the repository?".into(),
            schema: json!({"type": "object", "properties": {"confirm": {"type": "boolean", "default": true}}}),
        };
        let (ask, _events) = host(true, ApprovalPolicy::Ask);
        let answer = ask.elicit("fx", request()).await.unwrap();
        assert_eq!((answer.action, answer.content), (ElicitAction::Decline, None));
        // In auto mode, the form's own defaults stand (None: the client's
        // defaults-or-decline).
        let (auto, _events) = host(true, ApprovalPolicy::Auto);
        assert!(auto.elicit("fx", request()).await.is_none());
    }
}
