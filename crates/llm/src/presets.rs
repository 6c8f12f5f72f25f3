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
    })
}

/// The context window of well-known models, in tokens; 128k otherwise.
pub fn context_window_for(model: &str) -> u64 {
    let model = model.to_lowercase();
    let model = model.rsplit('/').next().unwrap_or(&model);
    match model {
        m if m.starts_with("claude") => 200_000,
        m if m.starts_with("gpt-4.1") => 1_047_576,
        m if m.starts_with("gpt-5") => 400_000,
        m if m.starts_with("o3") || m.starts_with("o4") => 200_000,
        m if m.starts_with("gemini") => 1_048_576,
        _ => 128_000,
    }
}

/// Builds the configured provider, or says what is missing.
pub fn build_provider(config: &ProviderConfig) -> Result<Arc<dyn Provider>, LlmError> {
    let api_key = config.api_key.clone().filter(|k| !k.trim().is_empty());
    if config.requires_key && api_key.is_none() {
        return Err(LlmError::Config(format!(
            "no API key for provider '{}': set {} (or `api_key` under [providers.{}] in the config)",
            config.name, config.api_key_env, config.name
        )));
    }
    let settings = Settings {
        info: ProviderInfo {
            name: config.name.clone(),
            model: config.model.clone(),
            context_window: config
                .context_window
                .unwrap_or_else(|| context_window_for(&config.model)),
            tool_protocol: config.tool_protocol,
        },
        base_url: config.base_url.clone(),
        api_key,
        api_key_env: config.api_key_env.clone(),
        headers: config.headers.clone(),
        retry: config.retry.clone(),
        stream_idle_timeout: config.stream_idle_timeout,
        thinking_budget: config.thinking_budget,
    };
    Ok(match config.kind {
        ProviderKind::OpenAi => Arc::new(OpenAiProvider::new(settings)?),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(settings)?),
    })
}
