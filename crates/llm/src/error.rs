//! Provider failures, by what the user or the agent can do about them.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error(
        "{provider} rejected the API key ({message}). Set a valid key in {env_var} or `api_key` in the config."
    )]
    Auth { provider: String, env_var: String, message: String },
    #[error("{provider} is rate limiting requests ({message}); gave up after retrying")]
    RateLimited { provider: String, message: String, retry_after: Option<Duration> },
    #[error("{provider} is overloaded ({message}); gave up after retrying. Try again later.")]
    Overloaded { provider: String, message: String },
    #[error("the conversation is too long for the model's context window ({message})")]
    ContextLength { message: String },
    #[error("{provider} refused the request (HTTP {status}): {message}")]
    BadRequest { provider: String, status: u16, message: String },
    #[error("{provider} failed (HTTP {status}): {message}")]
    Server { provider: String, status: u16, message: String },
    #[error("cannot reach {provider} at {url}: {message}. Check the network and `base_url`.")]
    Network { provider: String, url: String, message: String },
    #[error("the answer from {provider} broke off: {message}")]
    Stream { provider: String, message: String },
    #[error("{provider} sent nothing for {}s; the stream was abandoned", .idle.as_secs())]
    Idle { provider: String, idle: Duration },
    #[error("{0}")]
    Config(String),
}

impl LlmError {
    /// Whether a fresh attempt at the same turn may succeed: the answer broke
    /// off mid-way, or the provider stalled. Connection failures are not:
    /// the request was already retried before any answer arrived.
    pub fn is_transient(&self) -> bool {
        matches!(self, LlmError::Stream { .. } | LlmError::Idle { .. })
    }
}
