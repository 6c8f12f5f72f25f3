//! Provider failures, by what the user or the agent can do about them.

use std::time::Duration;

/// Every error that answers an HTTP request names the URL it went to, so a
/// wrong `base_url` shows in the message itself.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error(
        "{provider} rejected the API key ({message}; {url}). Set a valid key in {env_var} or `api_key` in the config."
    )]
    Auth { provider: String, env_var: String, message: String, url: String },
    #[error("{provider} is rate limiting requests to {url} ({message}); gave up after retrying")]
    RateLimited { provider: String, message: String, retry_after: Option<Duration>, url: String },
    #[error(
        "{provider} is overloaded ({message}; {url}); gave up after retrying. Try again later."
    )]
    Overloaded { provider: String, message: String, url: String },
    #[error("the conversation is too long for the model's context window ({message}; {url})")]
    ContextLength { message: String, url: String },
    #[error("{provider} refused the request to {url} (HTTP {status}): {message}{}", hint(*.status))]
    BadRequest { provider: String, status: u16, message: String, url: String },
    #[error("{provider} failed (HTTP {status} from {url}): {message}")]
    Server { provider: String, status: u16, message: String, url: String },
    #[error("cannot reach {provider} at {url}: {message}. Check the network and `base_url`.")]
    Network { provider: String, url: String, message: String },
    #[error("the answer from {provider} broke off: {message}")]
    Stream { provider: String, message: String },
    #[error(
        "{provider} timed out after {} with nothing sent; if the model is slow to start (a long \
         prompt, a busy local server), raise `stream_idle_timeout_ms` under [providers.{provider}] \
         in the config",
        seconds(*.idle)
    )]
    Idle { provider: String, idle: Duration },
    #[error("{0}")]
    Config(String),
    /// The provider needs a key and none is set.
    #[error(
        "no API key for provider '{provider}': set {variable} (or `api_key` under [providers.{provider}] in the config)"
    )]
    MissingKey { provider: String, variable: String },
}

/// `2s`, `1.5s`: a timeout as the user would write it.
fn seconds(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else {
        format!("{:.1}s", duration.as_secs_f64())
    }
}

/// What to check when the server says the address does not exist.
fn hint(status: u16) -> &'static str {
    if status == 404 {
        ". Check `base_url`: the API path (e.g. /chat/completions, /v1/messages) is added to it"
    } else {
        ""
    }
}

impl LlmError {
    /// What went wrong, without how it ended: the reason given while a
    /// retry is still to come (the error's own message says it gave up).
    pub fn condition(&self) -> String {
        match self {
            LlmError::RateLimited { provider, message, url, .. } => {
                format!("{provider} is rate limiting requests to {url} ({message})")
            }
            LlmError::Overloaded { provider, message, url } => {
                format!("{provider} is overloaded ({message}; {url})")
            }
            other => other.to_string(),
        }
    }

    /// Whether a fresh attempt at the same turn may succeed: the answer broke
    /// off mid-way, or the provider stalled. Connection failures are not:
    /// the request was already retried before any answer arrived.
    pub fn is_transient(&self) -> bool {
        matches!(self, LlmError::Stream { .. } | LlmError::Idle { .. })
    }

    /// Whether another provider may answer what this one could not: it is
    /// rate limiting, overloaded, failing (5xx), unreachable, or its answers
    /// break off. Not a refused key, a bad request or a context overflow,
    /// which are the user's to fix.
    pub fn is_outage(&self) -> bool {
        match self {
            LlmError::RateLimited { .. }
            | LlmError::Overloaded { .. }
            | LlmError::Network { .. }
            | LlmError::Stream { .. }
            | LlmError::Idle { .. } => true,
            LlmError::Server { status, .. } => *status >= 500,
            _ => false,
        }
    }
}
