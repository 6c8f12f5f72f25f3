//! LLM providers for axon.
//!
//! A [`Provider`] turns a [`ProviderRequest`] (system prompt, history, tool
//! specs) into a stream of [`ProviderEvent`]s as the model's answer arrives.
//! Two wire formats cover the field: OpenAI chat completions ([`openai`],
//! also DeepSeek, Ollama, OpenRouter, vLLM, llama.cpp…) and Anthropic
//! Messages ([`anthropic`]). Both retry failed requests before the first byte
//! of an answer ([`retry`]) and fail with a typed [`LlmError`] whose message
//! says what to do. [`TurnAssembler`] folds a stream into the assistant
//! message; [`text_protocol`] lets models without native tool calling use
//! tools through ```` ```json:tool ```` blocks (seed 000); [`tool_text`]
//! turns the call syntax local models leak into their text (Hermes,
//! Llama 3, Mistral) into real tool calls.
//!
//! [`PROVIDERS`] is the one table of providers known by name (base URL, key
//! variable, default model, model context windows); presets, key-variable
//! lists and help texts are all read from it.
//!
//! This crate knows nothing of tools beyond their specs: it never imports
//! `axon-tools`; the two meet in `axon-core`.

pub mod anthropic;
mod assemble;
mod discover;
mod error;
mod http;
mod json_end;
pub mod openai;
mod openai_wire;
pub mod overflow;
mod presets;
pub mod prices;
mod providers;
pub mod retry;
mod scan_cost;
pub mod text_protocol;
pub mod tool_text;

use std::pin::Pin;
use std::time::Duration;

use axon_protocol::{Message, ToolSpec, Usage};
use futures_util::Stream;
use serde::{Deserialize, Serialize};

pub use assemble::{AssembledTurn, TurnAssembler};
pub use discover::{connect, discover_context_window, list_models};
pub use error::LlmError;
pub use presets::{
    DEFAULT_CONTEXT_WINDOW, MAX_TOKENS_CAP, ProviderConfig, ProviderKind, build_provider,
    context_window_for, default_max_tokens, preset,
};
pub use prices::{Price, Prices};
pub use providers::{
    KnownProvider, OTHER_WINDOWS, PROVIDERS, key_variables, known_context_window, known_provider,
    provider_names, takes_images,
};
pub use tool_text::{CallExtractor, CallFormat, Piece, extract_calls, with_text_calls};

/// How tools reach the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolProtocol {
    /// The API's own tool calling.
    #[default]
    Native,
    /// Tool definitions in the system prompt, calls as ```json:tool blocks.
    Text,
}

/// Everything a provider needs for one model call. It borrows the history:
/// a provider encodes it once, so the agent never copies it per turn.
#[derive(Debug, Clone, Default)]
pub struct ProviderRequest<'a> {
    /// Borrowed from the agent, which builds it once, like the tools.
    pub system: std::borrow::Cow<'a, str>,
    pub messages: &'a [Message],
    /// Empty when the text protocol describes the tools in `system`.
    pub tools: std::borrow::Cow<'a, [ToolSpec]>,
    /// In the text protocol, the tools `system` describes (empty
    /// otherwise). Never sent; a provider may hold its output to them (the
    /// local model's grammar makes a started call a valid one).
    pub text_tools: std::borrow::Cow<'a, [ToolSpec]>,
    pub max_output_tokens: Option<u32>,
    pub temperature: Option<f32>,
    /// This call must answer in text: the tools stay defined (the history
    /// may hold calls, which some APIs refuse without them) but none may
    /// be called (`tool_choice: none`; no grammar for the local model).
    pub answer_only: bool,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    /// The output token limit was reached.
    Length,
    ContentFilter,
    Other(String),
}

/// One piece of a streamed answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderEvent {
    TextDelta(String),
    /// Text received but held back, not yet known to be prose or a tool
    /// call (see [`with_text_calls`]); added to what is held so far. Kept
    /// if the turn is cancelled before it is settled.
    TextHeld(String),
    /// Everything held so far is settled: given out as `TextDelta`s or
    /// taken as calls.
    HeldTextSettled,
    /// Reasoning text (DeepSeek `reasoning_content`, Anthropic thinking).
    ReasoningDelta(String),
    /// Anthropic's signature for the thinking block, to be sent back.
    ReasoningSignature(String),
    /// A tool call begins. `index` identifies it among this turn's calls.
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    /// More of a tool call's JSON arguments.
    ToolCallDelta {
        index: usize,
        arguments: String,
    },
    /// A tool call's arguments are complete.
    ToolCallEnd {
        index: usize,
    },
    Usage(Usage),
    /// The request failed and will be sent again after `delay`.
    Retrying {
        attempt: u32,
        delay: Duration,
        reason: String,
    },
    /// The model finished; the stream ends after this.
    Finish(FinishReason),
}

pub type EventStream = Pin<Box<dyn Stream<Item = Result<ProviderEvent, LlmError>> + Send>>;

/// What a front end and the context manager need to know about a provider.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderInfo {
    /// The preset or configured name, e.g. `deepseek`.
    pub name: String,
    pub model: String,
    /// The model's context window in tokens.
    pub context_window: u64,
    pub tool_protocol: ToolProtocol,
}

/// A model behind some API.
pub trait Provider: Send + Sync {
    fn info(&self) -> &ProviderInfo;
    /// Starts a call. Dropping the stream cancels it (the connection closes).
    fn stream(&self, request: &ProviderRequest<'_>) -> EventStream;
}
