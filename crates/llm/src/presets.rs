//! How a configured provider is built: [`preset`] turns an entry of the
//! provider table ([`PROVIDERS`](crate::PROVIDERS)) into a
//! [`ProviderConfig`] the user's settings then override, the context window
//! and output limit are chosen ([`context_window_for`],
//! [`default_max_tokens`]), and [`build_provider`] makes the client for its
//! wire format or says what is missing (a key, and where to set it).

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::anthropic::AnthropicProvider;
use crate::http::Settings;
use crate::openai::OpenAiProvider;
use crate::providers::{known_context_window, known_provider};
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
    /// A GGUF model run inside axon's own process (`axon_local`); built by
    /// the runtime, which links llama.cpp, never by this crate.
    Local,
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
    /// The variable `api_key` was actually read from when that is not
    /// `api_key_env` (`AXON_API_KEY`): the one a rejected key is fixed in.
    pub api_key_from: Option<String>,
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

/// The configuration of a provider in [`PROVIDERS`](crate::PROVIDERS)
/// (`openai`, `deepseek`, `anthropic`, `ollama`, `openrouter`) with its
/// defaults and no overrides; `None` for any other name.
pub fn preset(name: &str) -> Option<ProviderConfig> {
    let known = known_provider(name)?;
    Some(ProviderConfig {
        name: known.name.to_string(),
        kind: known.kind,
        base_url: known.base_url.to_string(),
        model: known.default_model.to_string(),
        api_key: None,
        api_key_env: known.key_var.to_string(),
        api_key_from: None,
        requires_key: known.requires_key,
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

/// The context window of well-known models (the table's, see
/// [`known_context_window`]), in tokens; [`DEFAULT_CONTEXT_WINDOW`] otherwise.
pub fn context_window_for(model: &str) -> u64 {
    known_context_window(model).unwrap_or(DEFAULT_CONTEXT_WINDOW)
}

/// The most a request asks for by default from a server that neither the
/// table of documented limits nor its host's own default covers (local and
/// self-hosted servers, Anthropic): DeepSeek-chat's and Anthropic's older
/// models' maximum, and plenty for a turn.
pub const MAX_TOKENS_CAP: u32 = 8192;

/// The output limit sent when the config sets none (`None`: none is sent).
///
/// - A model whose API documents a maximum above its own default gets that
///   maximum (`deepseek-chat`: default 4K, maximum 8K), at most a fifth of
///   the window.
/// - OpenAI's, DeepSeek's and OpenRouter's APIs get none: each picks a limit
///   sized for the model when the request sets none, and their reasoning
///   models count the chain of thought in it (`deepseek-reasoner`: 32K by
///   default, up to 64K; OpenAI's o-series refuse `max_tokens` outright).
///   A limit sent instead would cut long answers short, or, sent large,
///   count against the window: DeepSeek refuses a prompt plus `max_tokens`
///   beyond 128K, and a prompt may fill 80 % of it before the trim starts.
/// - Any other server (local and self-hosted ones, whose window is often
///   small, and Anthropic, which requires a limit) gets a fifth of the
///   window (the part the 80 % trim keeps free, so prompt and answer fit
///   together) up to [`MAX_TOKENS_CAP`]: a small model stuck repeating
///   itself then stops within seconds instead of filling its window.
pub fn default_max_tokens(config: &ProviderConfig, context_window: u64) -> Option<u32> {
    let fifth = u32::try_from(context_window / 5).unwrap_or(u32::MAX);
    match config.max_tokens {
        Some(0) if config.kind == ProviderKind::Anthropic => {}
        Some(0) => return None,
        Some(n) => return Some(n),
        None if config.kind == ProviderKind::OpenAi => {
            if let Some(documented) = documented_max_output(&config.model) {
                return Some(documented.min(fifth.max(256)));
            }
            if host_sizes_output_itself(&config.base_url) {
                return None;
            }
        }
        None => {}
    }
    Some(fifth.clamp(256, MAX_TOKENS_CAP))
}

/// The output maximum an API documents for a model whose default is
/// smaller, for the models where the difference matters.
fn documented_max_output(model: &str) -> Option<u32> {
    let model = model.to_lowercase();
    match model.rsplit('/').next().unwrap_or(&model) {
        // api-docs.deepseek.com, Models & Pricing: default 4K, maximum 8K.
        "deepseek-chat" => Some(8192),
        _ => None,
    }
}

/// Hosted APIs that size the output for the model when a request sets no
/// limit (see [`default_max_tokens`]).
fn host_sizes_output_itself(base_url: &str) -> bool {
    is_hosted_api(base_url)
}

/// Whether `url` is one of the hosted OpenAI-format APIs (OpenAI,
/// DeepSeek, OpenRouter), told by its host: a preset's name says nothing
/// when `base_url` points it at a llama-server or vLLM.
pub(crate) fn is_hosted_api(url: &str) -> bool {
    const HOSTS: [&str; 3] = ["api.openai.com", "api.deepseek.com", "openrouter.ai"];
    reqwest::Url::parse(url)
        .ok()
        .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|host| HOSTS.contains(&host.as_str()))
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
        return Err(LlmError::MissingKey {
            provider: config.name.clone(),
            variable: config.api_key_env.clone(),
        });
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
        api_key_env: config.api_key_from.clone().unwrap_or_else(|| config.api_key_env.clone()),
        headers: config.headers.clone(),
        retry: config.retry.clone(),
        stream_idle_timeout: config.stream_idle_timeout,
        thinking_budget: config.thinking_budget,
        max_output_tokens: default_max_tokens(config, window),
    };
    Ok(match config.kind {
        ProviderKind::OpenAi => Arc::new(OpenAiProvider::new(settings)?),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(settings)?),
        ProviderKind::Local => {
            return Err(LlmError::Config(
                "the local provider runs inside axon's runtime, not over an API; open it with axon_runtime::connect".into(),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_model(preset_name: &str, model: &str) -> ProviderConfig {
        let mut config = preset(preset_name).unwrap();
        config.model = model.to_string();
        config
    }

    #[test]
    fn deepseek_reasoner_gets_deepseeks_own_limit_not_8k() {
        // Its chain of thought counts in max_tokens: DeepSeek's default is
        // 32K, so none is sent.
        let reasoner = with_model("deepseek", "deepseek-reasoner");
        assert_eq!(default_max_tokens(&reasoner, context_window_for(&reasoner.model)), None);
        let mut beta = reasoner.clone();
        beta.base_url = "https://API.deepseek.com/beta".into();
        assert_eq!(default_max_tokens(&beta, 128_000), None);
    }

    #[test]
    fn deepseek_chat_gets_its_documented_maximum() {
        let chat = preset("deepseek").unwrap();
        assert_eq!(chat.model, "deepseek-chat");
        assert_eq!(default_max_tokens(&chat, context_window_for(&chat.model)), Some(8192));
        // The preset's default model on OpenRouter too.
        let routed = preset("openrouter").unwrap();
        assert_eq!(default_max_tokens(&routed, 163_840), Some(8192));
        // Still within a fifth of a window that is smaller.
        let mut local = chat.clone();
        local.base_url = "http://127.0.0.1:8000/v1".into();
        assert_eq!(default_max_tokens(&local, 16_384), Some(3276));
    }

    #[test]
    fn openrouter_reasoning_models_get_their_own_limit_not_8k() {
        for model in ["deepseek/deepseek-r1", "qwen/qwq-32b", "openai/o4-mini"] {
            let routed = with_model("openrouter", model);
            assert_eq!(default_max_tokens(&routed, 163_840), None, "{model}");
        }
    }

    #[test]
    fn openai_sends_none() {
        let openai = preset("openai").unwrap();
        assert_eq!(default_max_tokens(&openai, 1_047_576), None);
    }

    #[test]
    fn local_and_unknown_servers_keep_a_fifth_of_the_window_up_to_the_cap() {
        let ollama = preset("ollama").unwrap();
        assert_eq!(default_max_tokens(&ollama, 4096), Some(819));
        assert_eq!(default_max_tokens(&ollama, 1_000_000), Some(MAX_TOKENS_CAP));
        assert_eq!(default_max_tokens(&ollama, 512), Some(256), "never below 256");
        let mut vllm = with_model("ollama", "deepseek-reasoner");
        vllm.base_url = "http://10.0.0.5:8000/v1".into();
        assert_eq!(default_max_tokens(&vllm, 32_768), Some(6553));
        // A host that only looks like a known one is not it.
        let mut lookalike = with_model("deepseek", "deepseek-reasoner");
        lookalike.base_url = "https://api.deepseek.com.example.net/v1".into();
        assert_eq!(default_max_tokens(&lookalike, 128_000), Some(MAX_TOKENS_CAP));
    }

    #[test]
    fn anthropic_always_gets_a_limit() {
        let mut anthropic = preset("anthropic").unwrap();
        assert_eq!(default_max_tokens(&anthropic, 200_000), Some(8192));
        assert_eq!(default_max_tokens(&anthropic, 20_000), Some(4000));
        anthropic.max_tokens = Some(0);
        assert_eq!(default_max_tokens(&anthropic, 200_000), Some(8192), "required there");
    }

    #[test]
    fn the_config_decides_when_it_says() {
        let mut reasoner = with_model("deepseek", "deepseek-reasoner");
        reasoner.max_tokens = Some(65_536);
        assert_eq!(default_max_tokens(&reasoner, 128_000), Some(65_536));
        let mut ollama = preset("ollama").unwrap();
        ollama.max_tokens = Some(0);
        assert_eq!(default_max_tokens(&ollama, 4096), None, "0 sends none");
        ollama.max_tokens = Some(100_000);
        assert_eq!(default_max_tokens(&ollama, 4096), Some(100_000));
    }
}
