//! The session's events as OpenTelemetry metrics and spans: a watch on the
//! session's [`Emitter`](crate::events::Emitter), so every front end's
//! session is recorded the same way, below them all.
//!
//! Metrics (names in the shape of Claude Code's `claude_code.*`):
//! `axon.session.count` (one per session started), `axon.token.usage`
//! (`tokens`, by `model` and `type`: `input` not read from the cache,
//! `cacheRead`, `output`), `axon.cost.usage` (`USD`, by `model`; a call
//! whose model has no known price adds nothing). Each carries `session.id`
//! once the session has one.
//!
//! Spans (OpenTelemetry's GenAI conventions): `invoke_agent axon` per
//! turn; below it `chat {model}` per model request (from when the agent
//! was last free to ask, the turn's start or the last tool result or
//! answer, to the request's usage report: retries included) and
//! `execute_tool {tool}` per tool call (from its action to its result).
//!
//! Guarantees: never a prompt, an answer, a tool's arguments or its
//! output, only names, counts, costs, outcomes and times; recording never
//! blocks (the SDK queues) and never fails the session; a span left open
//! (a turn cut short) is ended with its turn or at shutdown.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use axon_llm::Prices;
use axon_protocol::{AgentEvent, StopReason, Usage};
use opentelemetry::metrics::{Counter, Meter};
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{SdkTracer, Span};

/// The metric instruments.
pub(crate) struct Instruments {
    sessions: Counter<u64>,
    tokens: Counter<u64>,
    cost: Counter<f64>,
}

impl Instruments {
    pub(crate) fn new(meter: &Meter) -> Instruments {
        Instruments {
            sessions: meter
                .u64_counter("axon.session.count")
                .with_unit("{session}")
                .with_description("Sessions started")
                .build(),
            tokens: meter
                .u64_counter("axon.token.usage")
                .with_unit("tokens")
                .with_description("Tokens used, by model and type (input, cacheRead, output)")
                .build(),
            cost: meter
                .f64_counter("axon.cost.usage")
                .with_unit("USD")
                .with_description("Cost of model requests, by model")
                .build(),
        }
    }
}

/// What the events told so far.
#[derive(Default)]
struct State {
    session_id: Option<String>,
    provider: String,
    model: String,
    /// The running turn's span, as the parent of its requests and calls.
    turn: Option<Context>,
    /// Since when the agent was free to ask the model: a request's start.
    free_since: Option<SystemTime>,
    /// Open tool calls by id, with whether they were refused.
    tools: HashMap<String, (Span, bool)>,
}

/// Turns events into metrics and spans.
pub(crate) struct Recorder {
    prices: Prices,
    metrics: Option<Instruments>,
    tracer: Option<SdkTracer>,
    state: Mutex<State>,
}

impl Recorder {
    pub(crate) fn new(
        prices: Prices,
        metrics: Option<Instruments>,
        tracer: Option<SdkTracer>,
    ) -> Self {
        Recorder { prices, metrics, tracer, state: Mutex::default() }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn on_event(&self, event: &AgentEvent) {
        let mut state = self.state();
        let now = SystemTime::now();
        match event {
            AgentEvent::SessionStarted { session } => {
                state.session_id.clone_from(&session.session_id);
                state.provider.clone_from(&session.provider);
                state.model.clone_from(&session.model);
                if let Some(metrics) = &self.metrics {
                    metrics.sessions.add(1, &session_attributes(&state));
                }
            }
            AgentEvent::SessionSaved { session_id } => state.session_id = Some(session_id.clone()),
            AgentEvent::ModelChanged { provider, model, .. } => {
                state.provider.clone_from(provider);
                state.model.clone_from(model);
            }
            AgentEvent::TurnStarted { turn } => {
                end_turn(&mut state, None, now);
                state.free_since = Some(now);
                if let Some(tracer) = &self.tracer {
                    let mut attributes = vec![
                        KeyValue::new("gen_ai.operation.name", "invoke_agent"),
                        KeyValue::new("gen_ai.agent.name", "axon"),
                        KeyValue::new("gen_ai.provider.name", state.provider.clone()),
                        KeyValue::new("gen_ai.request.model", state.model.clone()),
                        KeyValue::new("axon.turn", i64::from(*turn)),
                    ];
                    attributes.extend(conversation(&state));
                    let span = tracer
                        .span_builder("invoke_agent axon")
                        .with_kind(SpanKind::Internal)
                        .with_start_time(now)
                        .with_attributes(attributes)
                        .start_with_context(tracer, &Context::new());
                    state.turn = Some(Context::new().with_span(span));
                }
            }
            AgentEvent::Usage { usage, model } => {
                let model = model.clone().unwrap_or_else(|| state.model.clone());
                let cost = self.prices.cost(&model, usage);
                self.count(&state, &model, usage, cost);
                let start = state.free_since.replace(now).unwrap_or(now);
                if let Some(tracer) = &self.tracer {
                    let mut attributes = vec![
                        KeyValue::new("gen_ai.operation.name", "chat"),
                        KeyValue::new("gen_ai.provider.name", state.provider.clone()),
                        KeyValue::new("gen_ai.request.model", state.model.clone()),
                        KeyValue::new("gen_ai.response.model", model.clone()),
                        KeyValue::new("gen_ai.usage.input_tokens", tokens(usage.input_tokens)),
                        KeyValue::new("gen_ai.usage.output_tokens", tokens(usage.output_tokens)),
                        KeyValue::new(
                            "gen_ai.usage.cache_read.input_tokens",
                            tokens(usage.cached_input_tokens),
                        ),
                    ];
                    attributes.extend(cost.map(|usd| KeyValue::new("axon.cost_usd", usd)));
                    attributes.extend(conversation(&state));
                    let parent = state.turn.clone().unwrap_or_default();
                    tracer
                        .span_builder(format!("chat {model}"))
                        .with_kind(SpanKind::Client)
                        .with_start_time(start)
                        .with_attributes(attributes)
                        .start_with_context(tracer, &parent)
                        .end_with_timestamp(now);
                }
            }
            AgentEvent::Action { call, refused, .. } => {
                if let Some(tracer) = &self.tracer {
                    let parent = state.turn.clone().unwrap_or_default();
                    let span = tracer
                        .span_builder(format!("execute_tool {}", call.name))
                        .with_kind(SpanKind::Internal)
                        .with_start_time(now)
                        .with_attributes([
                            KeyValue::new("gen_ai.operation.name", "execute_tool"),
                            KeyValue::new("gen_ai.tool.name", call.name.clone()),
                            KeyValue::new("gen_ai.tool.call.id", call.id.clone()),
                        ])
                        .start_with_context(tracer, &parent);
                    state.tools.insert(call.id.clone(), (span, *refused));
                }
            }
            AgentEvent::Observation { call_id, output, .. } => {
                state.free_since = Some(now);
                if let Some((mut span, refused)) = state.tools.remove(call_id) {
                    let outcome = match (refused, output.is_error) {
                        (true, _) => "refused",
                        (false, true) => "error",
                        (false, false) => "ok",
                    };
                    span.set_attribute(KeyValue::new("axon.tool.outcome", outcome));
                    if outcome != "ok" {
                        span.set_status(Status::error(outcome));
                    }
                    span.end_with_timestamp(now);
                }
            }
            AgentEvent::TurnCompleted { stop_reason, usage, cost_usd, .. } => {
                let mut attributes = vec![
                    KeyValue::new("axon.stop_reason", stop_name(*stop_reason)),
                    KeyValue::new("gen_ai.usage.input_tokens", tokens(usage.input_tokens)),
                    KeyValue::new("gen_ai.usage.output_tokens", tokens(usage.output_tokens)),
                ];
                attributes.extend(cost_usd.map(|usd| KeyValue::new("axon.cost_usd", usd)));
                end_turn(&mut state, Some((attributes, *stop_reason)), now);
            }
            _ => {}
        }
    }

    /// Ends whatever is still open (the session is closing).
    pub(crate) fn close(&self) {
        end_turn(&mut self.state(), None, SystemTime::now());
    }

    fn count(&self, state: &State, model: &str, usage: &Usage, cost: Option<f64>) {
        let Some(metrics) = &self.metrics else { return };
        let cached = usage.cached_input_tokens.min(usage.input_tokens);
        let by_type = [
            ("input", usage.input_tokens - cached),
            ("cacheRead", cached),
            ("output", usage.output_tokens),
        ];
        for (kind, count) in by_type.into_iter().filter(|(_, count)| *count > 0) {
            let mut attributes = session_attributes(state);
            attributes.push(KeyValue::new("model", model.to_string()));
            attributes.push(KeyValue::new("type", kind));
            metrics.tokens.add(count, &attributes);
        }
        if let Some(usd) = cost {
            let mut attributes = session_attributes(state);
            attributes.push(KeyValue::new("model", model.to_string()));
            metrics.cost.add(usd, &attributes);
        }
    }
}

/// Ends the open tool spans and the turn's, with what the turn's end said
/// (`None`: it was cut short).
fn end_turn(state: &mut State, end: Option<(Vec<KeyValue>, StopReason)>, now: SystemTime) {
    for (_, (mut span, _)) in state.tools.drain() {
        span.set_attribute(KeyValue::new("axon.tool.outcome", "unfinished"));
        span.end_with_timestamp(now);
    }
    let Some(turn) = state.turn.take() else { return };
    let span = turn.span();
    match end {
        Some((attributes, stop_reason)) => {
            span.set_attributes(attributes);
            if stop_reason == StopReason::Error {
                span.set_status(Status::error("the turn ended with an error"));
            }
        }
        None => span.set_attribute(KeyValue::new("axon.stop_reason", "unfinished")),
    }
    span.end_with_timestamp(now);
}

fn session_attributes(state: &State) -> Vec<KeyValue> {
    state.session_id.iter().map(|id| KeyValue::new("session.id", id.clone())).collect()
}

fn conversation(state: &State) -> Vec<KeyValue> {
    state
        .session_id
        .iter()
        .flat_map(|id| {
            [
                KeyValue::new("session.id", id.clone()),
                KeyValue::new("gen_ai.conversation.id", id.clone()),
            ]
        })
        .collect()
}

/// A token count as an attribute (OpenTelemetry's integers are i64).
fn tokens(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// The stop reason as the event protocol spells it.
fn stop_name(reason: StopReason) -> String {
    serde_json::to_value(reason)
        .ok()
        .and_then(|value| value.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{reason:?}"))
}
