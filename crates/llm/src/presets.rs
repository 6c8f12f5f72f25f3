//! Known providers and how a configured one is built.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::anthropic::AnthropicProvider;
use crate::http::Settings;
use crate::openai::OpenAiProvider;
use crate::retry::RetryPolicy;
use crate::{LlmError, Provider, ProviderInfo, ToolProtocol};

/// The wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI chat completions (OpenAI, DeepSeek, Ollama, OpenRouter, …).
    #[serde(rename = "openai")]
    OpenAi,
    Anthropic,
}

/// A provider as configured: a preset's values with the user's overrides.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Where the key is normally found, for messages.
    pub api_key_env: String,
    /// Local servers need no key.
    pub requires_key: bool,
    /// Overrides the built-in table of context windows.
    pub context_window: Option<u64>,
    pub tool_protocol: ToolProtocol,
    pub headers: Vec<(String, String)>,
    pub retry: RetryPolicy,
    pub stream_idle_timeout: Duration,
    /// Anthropic extended thinking: tokens it may spend; `None` is off.
    pub thinking_budget: Option<u32>,
    /// The output limit each request carries (`max_tokens`); `None` is
    /// [`default_max_tokens`]. `Some(0)` sends none where the API allows
    /// (the OpenAI format; Anthropic requires one).
    pub max_tokens: Option<u32>,
}

/// The built-in presets: `openai`, `deepseek`, `anthropic`, `ollama`,
/// `openrouter`.
pub fn preset(name: &str) -> Option<ProviderConfig> {
    let (kind, base_url, model, env, requires_key) = match name {
        "openai" => {
            (ProviderKind::OpenAi, "https://api.openai.com/v1", "gpt-4.1", "OPENAI_API_KEY", true)
        }
        "deepseek" => (
            ProviderKind::OpenAi,
            "https://api.deepseek.com",
            "deepseek-chat",
            "DEEPSEEK_API_KEY",
            true,
        ),
        "anthropic" => (
            ProviderKind::Anthropic,
            "https://api.anthropic.com",
            "claude-sonnet-4-5",
            "ANTHROPIC_API_KEY",
            true,
        ),
        "ollama" => {
            (ProviderKind::OpenAi, "http://127.0.0.1:11434/v1", "llama3.1", "OLLAMA_API_KEY", false)
        }
        "openrouter" => (
            ProviderKind::OpenAi,
            "https://openrouter.ai/api/v1",
            "deepseek/deepseek-chat",
            "OPENROUTER_API_KEY",
            true,
        ),
        _ => return None,
    };
    Some(ProviderConfig {
        name: name.to_string(),
        kind,
        base_url: base_url.to_string(),
        model: model.to_string(),
        api_key: None,
        api_key_env: env.to_string(),
        requires_key,
        context_window: None,
        tool_protocol: ToolProtocol::Native,
        headers: Vec::new(),
        retry: RetryPolicy::default(),
        stream_idle_timeout: Duration::from_secs(120),
        thinking_budget: None,
        max_tokens: None,
    })
}

/// The window assumed for a model that is neither in the table nor
/// reported by its server.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// The context window of well-known models, in tokens;
/// [`DEFAULT_CONTEXT_WINDOW`] otherwise.
pub fn context_window_for(model: &str) -> u64 {
    known_context_window(model).unwrap_or(DEFAULT_CONTEXT_WINDOW)
}

/// The context window of a model in the built-in table.
pub fn known_context_window(model: &str) -> Option<u64> {
    let model = model.to_lowercase();
    let model = model.rsplit('/').next().unwrap_or(&model);
    Some(match model {
        m if m.starts_with("claude") => 200_000,
        m if m.starts_with("gpt-4.1") => 1_047_576,
        m if m.starts_with("gpt-5") => 400_000,
        m if m.starts_with("o3") || m.starts_with("o4") => 200_000,
        m if m.starts_with("gemini") => 1_048_576,
        // deepseek-chat and deepseek-reasoner (V3.1 and later).
        "deepseek-chat" | "deepseek-reasoner" => 128_000,
        _ => return None,
    })
}

/// The most a request asks for by default, whatever the window: what
/// DeepSeek and Anthropic's older models accept, and plenty for a turn.
pub const MAX_TOKENS_CAP: u32 = 8192;

/// The output limit sent when the config sets none: a fifth of the window
/// (the part the 80 % trim keeps free, so prompt and answer fit together)
/// up to [`MAX_TOKENS_CAP`]. A small model stuck repeating itself then
/// stops within seconds instead of filling its window. `None` for OpenAI's
/// own API, whose reasoning models spend their output budget on thinking and
/// refuse `max_tokens`; set `max_tokens` in the config to limit them.
pub fn default_max_tokens(config: &ProviderConfig, context_window: u64) -> Option<u32> {
    match config.max_tokens {
        Some(0) if config.kind == ProviderKind::Anthropic => {}
        Some(0) => return None,
        Some(n) => return Some(n),
        None if config.kind == ProviderKind::OpenAi && is_openai_api(&config.base_url) => {
            return None;
        }
        None => {}
    }
    let fifth = u32::try_from(context_window / 5).unwrap_or(u32::MAX);
    Some(fifth.clamp(256, MAX_TOKENS_CAP))
}

fn is_openai_api(base_url: &str) -> bool {
    base_url.contains("://api.openai.com")
}

/// Builds the configured provider, or says what is missing.
/// The window is the config's, else the table's, else
/// [`DEFAULT_CONTEXT_WINDOW`]; [`connect`](crate::connect) asks the server
/// before falling back.
pub fn build_provider(config: &ProviderConfig) -> Result<Arc<dyn Provider>, LlmError> {
    let window = config.context_window.unwrap_or_else(|| context_window_for(&config.model));
    build_with_window(config, window)
}

/// The API key to send, or the error saying where to set it.
pub(crate) fn api_key(config: &ProviderConfig) -> Result<Option<String>, LlmError> {
    let api_key = config.api_key.clone().filter(|k| !k.trim().is_empty());
    if config.requires_key && api_key.is_none() {
        return Err(LlmError::Config(format!(
            "no API key for provider '{}': set {} (or `api_key` under [providers.{}] in the config)",
            config.name, config.api_key_env, config.name
        )));
    }
    Ok(api_key)
}

/// Builds the configured provider with a known context window.
pub(crate) fn build_with_window(
    config: &ProviderConfig,
    window: u64,
) -> Result<Arc<dyn Provider>, LlmError> {
    let api_key = api_key(config)?;
    let settings = Settings {
        info: ProviderInfo {
            name: config.name.clone(),
            model: config.model.clone(),
            context_window: window,
            tool_protocol: config.tool_protocol,
        },
        base_url: config.base_url.clone(),
        api_key,
        api_key_env: config.api_key_env.clone(),
        headers: config.headers.clone(),
        retry: config.retry.clone(),
        stream_idle_timeout: config.stream_idle_timeout,
        thinking_budget: config.thinking_budget,
        max_output_tokens: default_max_tokens(config, window),
    };
    Ok(match config.kind {
        ProviderKind::OpenAi => Arc::new(OpenAiProvider::new(settings)?),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(settings)?),
    })
}
