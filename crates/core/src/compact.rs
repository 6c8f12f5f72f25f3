//! Fitting the history to the window before each model call (counting it
//! exactly once it nears the window), and summarising compaction: the
//! model writes a handoff summary of the oldest turns, which then stands in
//! for them in what is sent. The journal (the session file) records the
//! compaction and keeps every original message.
//! Rules and skills live in the system prompt, so compaction never loses
//! them; the open checklist, the plan step, the files changed and a
//! replaced latest request are carried forward verbatim beside the summary
//! (`carry.rs`). A summary that does not mention every open item and the
//! current step is redone once, then refused (the history is trimmed
//! instead, with a warning): a summary that lost the task is worse than none.
//! The summary request falls back as a turn does: when the provider in use
//! is out, the next of the `fallback` list writes it (`fallback.rs`).

use axon_llm::{LlmError, ProviderEvent, ProviderRequest};
use axon_protocol::{AgentEvent, Message, Role};
use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::carry::Carried;
use crate::config::ContextStrategy;
use crate::context;
use crate::lifecycle::{Lifecycle, consult};
use crate::model_turn::ModelTurn;
use crate::sink::EventSink;

/// Characters of one tool result shown to the summariser.
const RESULT_EXCERPT: usize = 2000;

const SUMMARY_SYSTEM: &str = "You write handoff summaries of an AI coding agent's work, for the \
    agent itself to continue from. Keep every fact it still needs: the user's requests and \
    constraints, decisions made and why, files read or changed (with paths), commands run and \
    their outcomes, errors met, and what remains to do. Omit pleasantries. Write plain text, \
    at most about 400 words.";

impl ModelTurn {
    /// Makes the next request fit 80 % of the model's window. Past
    /// [`context::EXACT_AT`] of it the history is counted with the model's
    /// tokenizer first, so what is trimmed or summarised is decided on
    /// exact counts; a short conversation never loads the tokenizer.
    /// `lifecycle` is told before a summary is made.
    pub(crate) async fn fit_window(
        &mut self,
        lifecycle: Option<&dyn Lifecycle>,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) {
        let window = self.provider.info().context_window;
        if window == 0 {
            return;
        }
        let budget = context::budget(window);
        let preamble = self.offered.preamble(&*self.provider);
        let tokens = self
            .history
            .count_exactly_past(&|counter| preamble.tokens(counter), context::exact_from(window));
        if tokens <= budget {
            return;
        }
        if self.context_strategy == ContextStrategy::Summarize {
            let replaced = self.oldest_half();
            if replaced > 0 {
                consult(lifecycle, emit, cancel, |l| l.compacting(true)).await;
                match self.compact(replaced, emit, cancel).await {
                    Ok(()) => {
                        emit(AgentEvent::Warning {
                            message: format!(
                                "the conversation outgrew 80 % of the model's window; its oldest \
                                 {replaced} messages were summarised (the session keeps them)"
                            ),
                        });
                        if self.context_tokens() <= budget {
                            return;
                        }
                    }
                    Err(e) => emit(AgentEvent::Warning {
                        message: format!("could not summarise the conversation ({e}); trimming it"),
                    }),
                }
            }
        }
        let fixed = self.preamble().tokens(&self.history.counter);
        let (dropped, keep) = self.history.fit(fixed, budget, self.prompt_index);
        self.prompt_index = keep;
        if dropped > 0 {
            emit(AgentEvent::Warning {
                message: format!(
                    "the conversation outgrew 80 % of the model's window; its oldest {dropped} \
                     messages are no longer sent (the session keeps them)"
                ),
            });
        }
    }

    /// Summarises everything before the last user request (`axon run
    /// --compact`). Returns how many messages the summary replaced.
    /// `lifecycle` is told first.
    pub(crate) async fn compact_all(
        &mut self,
        lifecycle: Option<&dyn Lifecycle>,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<usize, String> {
        // The current request, not a text-protocol result after it.
        let last_user = crate::carry::last_request(self.history.messages()).unwrap_or(0);
        if last_user == 0 {
            return Ok(0);
        }
        // A request of the user's: a fallback answered only the last one.
        self.back_to_primary(emit);
        // PreCompact hooks cannot stop it; they are told, and may warn.
        consult(lifecycle, emit, cancel, |l| l.compacting(false)).await;
        self.compact(last_user, emit, cancel).await?;
        Ok(last_user)
    }

    /// Where the oldest half of the finished turns ends: a user message
    /// before the current request, so what is kept starts with one.
    fn oldest_half(&self) -> usize {
        let messages = self.history.messages();
        let half = self.prompt_index / 2;
        messages[..self.prompt_index.min(messages.len())]
            .iter()
            .enumerate()
            .filter(|(i, m)| *i > 0 && m.role == Role::User)
            .map(|(i, _)| i)
            .min_by_key(|i| i.abs_diff(half))
            .unwrap_or(0)
    }

    async fn compact(
        &mut self,
        replaced: usize,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<(), String> {
        let carried = Carried::gather(self.history.messages(), replaced);
        let transcript = transcript(&self.history.messages()[..replaced]);
        let required = carried.required();
        let mut summary = self.summary_or_fallback(&transcript, &required, emit, cancel).await?;
        let mut missing = carried.missing_from(&summary);
        if !missing.is_empty() {
            summary = self.summary_or_fallback(&transcript, &required, emit, cancel).await?;
            missing = carried.missing_from(&summary);
        }
        if !missing.is_empty() {
            return Err(format!(
                "its summary left out, twice, what is still to do: {}",
                missing.iter().map(|m| format!("\"{m}\"")).collect::<Vec<_>>().join(", ")
            ));
        }
        self.history.compact(&summary, carried.render().as_deref(), replaced);
        self.prompt_index = self.prompt_index.saturating_sub(replaced);
        Ok(())
    }

    /// The summary, from the next provider of the fallback list when the
    /// one in use is out (as a turn would continue there: `fallback.rs`).
    async fn summary_or_fallback(
        &mut self,
        transcript: &str,
        required: &[String],
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        loop {
            match self.summarise(transcript, required, cancel).await {
                Ok(summary) => return Ok(summary),
                Err(Unsummarised::Provider(e)) if self.fall_back(&e, emit).await => {}
                Err(Unsummarised::Provider(e)) => return Err(e.to_string()),
                Err(Unsummarised::Other(why)) => return Err(why),
            }
        }
    }

    /// The model's summary of `transcript`, asked to name each of
    /// `required` (the open items and the current step).
    async fn summarise(
        &self,
        transcript: &str,
        required: &[String],
        cancel: &CancellationToken,
    ) -> Result<String, Unsummarised> {
        let mut ask = format!(
            "Here is the earlier part of the conversation:\n\n{transcript}\n\nWrite the handoff summary."
        );
        if !required.is_empty() {
            let listed: Vec<String> = required.iter().map(|r| format!("- {r}")).collect();
            ask.push_str(&format!(
                " It must name each of these, which are still to do, in its own words or these:\n{}",
                listed.join("\n")
            ));
        }
        // A summary is a request like any other: a spent budget sends none
        // (the window is trimmed instead, with the reason in the warning).
        if let Some(refusal) = self.budget.as_ref().and_then(crate::cost::Budget::refusal) {
            return Err(Unsummarised::Other(refusal));
        }
        let messages = [Message::user(ask)];
        let request = ProviderRequest {
            system: SUMMARY_SYSTEM.into(),
            messages: &messages,
            tools: Default::default(),
            text_tools: Default::default(),
            max_output_tokens: Some(2048),
            temperature: None,
            answer_only: false,
        };
        let mut stream = self.provider.stream(&request);
        let mut text = String::new();
        loop {
            let item = tokio::select! {
                () = cancel.cancelled() => return Err(Unsummarised::Other("cancelled".into())),
                item = stream.next() => item,
            };
            match item {
                Some(Ok(ProviderEvent::TextDelta(delta))) => text.push_str(&delta),
                Some(Ok(ProviderEvent::Usage(usage))) => self.history.record_usage(&usage),
                Some(Ok(ProviderEvent::Finish(_))) | None => break,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(Unsummarised::Provider(e)),
            }
        }
        let text = text.trim().to_string();
        if text.is_empty() {
            Err(Unsummarised::Other("the model wrote an empty summary".into()))
        } else {
            Ok(text)
        }
    }
}

/// Why no summary came: the provider's error (which may fall back), or
/// another reason.
enum Unsummarised {
    Provider(LlmError),
    Other(String),
}

/// The messages as a plain transcript for the summariser.
fn transcript(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages {
        let text = message.text();
        match message.role {
            Role::System => {}
            Role::User => out.push_str(&format!("User: {text}\n\n")),
            Role::Assistant => {
                if !text.trim().is_empty() {
                    out.push_str(&format!("Assistant: {text}\n\n"));
                }
                for call in &message.tool_calls {
                    out.push_str(&format!(
                        "Assistant called {} with {}\n\n",
                        call.name, call.arguments
                    ));
                }
            }
            Role::Tool => {
                let status = if message.is_error { "error" } else { "result" };
                let excerpt: String = text.chars().take(RESULT_EXCERPT).collect();
                let more = if text.chars().count() > RESULT_EXCERPT { " […]" } else { "" };
                out.push_str(&format!("Tool {status}: {excerpt}{more}\n\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axon_llm::{ToolProtocol, build_provider, preset};
    use axon_protocol::AgentEvent;
    use axon_testkit::{Reply, ScriptedServer};
    use axon_tools::{ToolContext, ToolRegistry, Workspace};

    use crate::agent::{Agent, RunOutcome};
    use crate::config::AgentConfig;
    use tokio_util::sync::CancellationToken;

    /// An agent without tools (so the preamble is small) on a scripted
    /// OpenAI-format model with a `window`-token context.
    async fn agent(script: Vec<Reply>, window: u64) -> (ScriptedServer, tempfile::TempDir, Agent) {
        let server = ScriptedServer::start(script).await.unwrap();
        let mut config = preset("openai").unwrap();
        config.base_url = server.openai_base();
        config.api_key = Some("test-key".into());
        config.model = "scripted".into();
        config.tool_protocol = ToolProtocol::Native;
        config.context_window = Some(window);
        let provider = build_provider(&config).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let tools = ToolContext::new(Workspace::new(dir.path()).unwrap());
        let config =
            AgentConfig { system_prompt: "You are axon.".into(), ..AgentConfig::default() };
        (server, dir, Agent::new(provider, Arc::new(ToolRegistry::new()), tools, config))
    }

    /// Runs `prompt` to its answer; returns the warnings it gave.
    async fn ask(agent: &mut Agent, prompt: &str) -> Vec<String> {
        let warnings = std::sync::Mutex::new(Vec::new());
        let emit = |event: AgentEvent| {
            if let AgentEvent::Warning { message } = event {
                warnings.lock().unwrap().push(message);
            }
        };
        let outcome = agent.run(prompt, &emit, &CancellationToken::new()).await;
        assert!(matches!(outcome, RunOutcome::Answered(_)), "{outcome:?}");
        warnings.into_inner().unwrap()
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    /// The benchmark's case: a few short turns never load a vocabulary.
    #[test]
    fn a_short_run_never_loads_the_tokenizer() {
        runtime().block_on(async {
            let script = (0..3).map(|_| Reply::text("done")).collect();
            let (_server, _dir, mut agent) = agent(script, 128_000).await;
            for n in 0..3 {
                ask(&mut agent, &format!("short request {n}")).await;
            }
            assert!(!agent.model.history.counter.is_loaded());
        });
    }

    /// A summary is a request: once the budget is spent, compaction sends
    /// none and says why.
    #[test]
    fn a_spent_budget_sends_no_summary_request() {
        runtime().block_on(async {
            let script = vec![
                Reply::text("first answer"),
                Reply::text("second answer"),
                Reply::text("a summary"),
            ];
            let (server, _dir, mut agent) = agent(script, 100_000).await;
            let spend = Arc::new(crate::cost::Spend::default());
            agent.model.budget = Some(crate::cost::Budget { limit_usd: 1.0, spend: spend.clone() });
            ask(&mut agent, "hello").await;
            ask(&mut agent, "and again").await;
            let before = server.requests().len();
            spend.add(Some(1.0));
            let noop = |_: AgentEvent| {};
            let outcome = agent.compact_all(&noop, &CancellationToken::new()).await;
            let why = outcome.expect_err("nothing to summarise with a spent budget");
            assert!(why.contains("budget") && why.contains("--max-budget-usd"), "{why}");
            assert_eq!(server.requests().len(), before, "no request went out");
        });
    }

    /// Growing towards a small window, the history is counted exactly
    /// before the first trim, and the trim keeps the request within it.
    #[test]
    fn a_run_near_its_window_counts_exactly_before_trimming() {
        runtime().block_on(async {
            let long = "word ".repeat(300);
            let script = (0..9).map(|_| Reply::text(&long)).collect();
            let (_server, _dir, mut agent) = agent(script, 2000).await;
            ask(&mut agent, "hello").await;
            assert!(!agent.model.history.counter.is_loaded(), "far from the window");
            let mut trimmed = false;
            for n in 0..8 {
                let warnings = ask(&mut agent, &format!("question {n}: {long}")).await;
                if warnings.iter().any(|w| w.contains("80 %")) {
                    assert!(agent.model.history.counter.is_loaded(), "trimmed on estimates");
                    trimmed = true;
                }
            }
            assert!(trimmed, "the window was reached");
            assert!(agent.model.history.counter.is_loaded());
            let counter = crate::tokens::TokenCounter::for_model("scripted");
            counter.load();
            let exact: u64 =
                agent.model.history.messages().iter().map(|m| counter.message(m)).sum();
            assert_eq!(agent.model.history.raw_tokens(), exact, "every cost is exact");
            assert!(agent.context_tokens() <= crate::context::budget(2000));
        });
    }
}
