//! Asking a server how large its model's context window is, for models the
//! built-in table does not know (local and self-hosted ones, mostly).
//!
//! Guessing 128k for a llama.cpp model loaded with 4096 tokens means the
//! 80 % trim never starts before the server refuses. So [`connect`] asks,
//! in order, until one answers:
//!
//! 1. `GET …/v1/models`: the model's entry, `meta.n_ctx` (llama.cpp),
//!    `max_model_len` (vLLM), `context_length` (OpenRouter);
//! 2. `GET /props`: `default_generation_settings.n_ctx` (llama-server, the
//!    window of one slot, which is what a request gets);
//! 3. `GET /api/v0/models`: `loaded_context_length`, else
//!    `max_context_length` (LM Studio);
//! 4. `GET /api/ps` (the loaded model's `context_length`), then
//!    `POST /api/show` (`num_ctx` in `parameters`, else
//!    `model_info.*.context_length`): Ollama.
//!
//! Steps 2 to 4 are taken only when the model list looks like that server's
//! (or there is none), so a hosted API is asked one question, not four.
//!
//! Each answer is cached per base URL and model for the life of the process,
//! "no answer" included, so a model switch or a rebuilt provider does not
//! ask again. A server that says nothing leaves the table's default.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};

use crate::http::{client, join_url};
use crate::presets::{DEFAULT_CONTEXT_WINDOW, api_key, build_with_window};
use crate::providers::known_context_window;
use crate::{LlmError, Provider, ProviderConfig, ProviderKind};

/// How long all the questions together may take: a silent server must not
/// hold up the start for long.
const PROBE_DEADLINE: Duration = Duration::from_secs(8);

/// The largest answer read.
const MAX_ANSWER: usize = 8 << 20;

/// Windows outside this range are not taken as an answer.
const PLAUSIBLE: std::ops::RangeInclusive<u64> = 256..=100_000_000;

type Cache = Mutex<HashMap<(String, String), Option<u64>>>;

static CACHE: LazyLock<Cache> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Builds the configured provider like [`build_provider`](crate::build_provider),
/// but with the window its server reports when neither the config nor the
/// table knows the model.
pub async fn connect(config: &ProviderConfig) -> Result<Arc<dyn Provider>, LlmError> {
    // A missing key is reported before anything is sent.
    api_key(config)?;
    let known = config.context_window.or_else(|| known_context_window(&config.model));
    let window = match known {
        Some(window) => window,
        None => discover_context_window(config).await.unwrap_or(DEFAULT_CONTEXT_WINDOW),
    };
    build_with_window(config, window)
}

/// The window the provider's server reports for its model, if it says.
pub async fn discover_context_window(config: &ProviderConfig) -> Option<u64> {
    let key = (config.base_url.trim_end_matches('/').to_string(), config.model.clone());
    if let Some(cached) = CACHE.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
        return *cached;
    }
    let found = tokio::time::timeout(PROBE_DEADLINE, ask(config)).await.ok().flatten();
    CACHE.lock().unwrap_or_else(PoisonError::into_inner).insert(key, found);
    found
}

/// The models `config`'s server lists (`GET …/models`: the `id` of each
/// entry, sorted); `None` when it does not answer with a list (the local
/// provider has none to ask).
pub async fn list_models(config: &ProviderConfig) -> Option<Vec<String>> {
    let asker = Asker::new(config)?;
    let base = config.base_url.trim_end_matches('/');
    let url = match config.kind {
        ProviderKind::OpenAi => join_url(base, "/models"),
        ProviderKind::Anthropic => join_url(base, "/v1/models"),
        ProviderKind::Local => return None,
    };
    let listed = asker.get(&url).await?;
    let entries = listed.get("data").and_then(Value::as_array)?;
    let mut ids: Vec<String> = entries
        .iter()
        .filter_map(|e| e.get("id").and_then(Value::as_str).map(str::to_string))
        .collect();
    ids.sort();
    ids.dedup();
    (!ids.is_empty()).then_some(ids)
}

async fn ask(config: &ProviderConfig) -> Option<u64> {
    let asker = Asker::new(config)?;
    let base = config.base_url.trim_end_matches('/');
    let models = match config.kind {
        ProviderKind::OpenAi => join_url(base, "/models"),
        ProviderKind::Anthropic => join_url(base, "/v1/models"),
        ProviderKind::Local => return None,
    };
    let listed = asker.get(&models).await;
    if let Some(window) = listed.as_ref().and_then(|v| from_models(v, &config.model)) {
        return Some(window);
    }
    let server = listed.as_ref().map_or(Server::Unknown, which_server);
    let root = server_root(base);
    if matches!(server, Server::Unknown | Server::LlamaCpp)
        && let Some(window) = asker.get(&format!("{root}/props")).await.and_then(|v| from_props(&v))
    {
        return Some(window);
    }
    if matches!(server, Server::Unknown | Server::LmStudio)
        && let Some(window) = asker
            .get(&format!("{root}/api/v0/models"))
            .await
            .and_then(|v| from_models(&v, &config.model))
    {
        return Some(window);
    }
    if !matches!(server, Server::Unknown | Server::Ollama) && config.name != "ollama" {
        return None;
    }
    let loaded = asker.get(&format!("{root}/api/ps")).await;
    if let Some(window) = loaded.and_then(|v| from_ollama_ps(&v, &config.model)) {
        return Some(window);
    }
    let shown = asker.post(&format!("{root}/api/show"), &json!({"model": config.model})).await;
    shown.and_then(|v| from_ollama_show(&v))
}

/// Which server a model list comes from, by what only that one writes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Server {
    Unknown,
    LlamaCpp,
    LmStudio,
    Ollama,
    /// Any other: it has said all it will.
    Other,
}

fn which_server(list: &Value) -> Server {
    let entries = list.get("data").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let owned_by = |owner: &str| {
        entries.iter().any(|e| e.get("owned_by").and_then(Value::as_str) == Some(owner))
    };
    if owned_by("llamacpp") || entries.iter().any(|e| e.get("meta").is_some()) {
        Server::LlamaCpp
    } else if owned_by("library") || owned_by("ollama") {
        Server::Ollama
    } else if owned_by("organization_owner") {
        Server::LmStudio
    } else if entries.is_empty() {
        Server::Unknown
    } else {
        Server::Other
    }
}

/// The server's root: the base URL without its API version (`/v1`).
fn server_root(base: &str) -> &str {
    base.strip_suffix("/v1").unwrap_or(base)
}

/// Sends the questions with the provider's own credentials and headers.
struct Asker {
    client: reqwest::Client,
    key: Option<String>,
    kind: ProviderKind,
    headers: Vec<(String, String)>,
}

impl Asker {
    fn new(config: &ProviderConfig) -> Option<Self> {
        Some(Asker {
            client: client(Duration::from_secs(4)).ok()?,
            key: config.api_key.clone().filter(|k| !k.trim().is_empty()),
            kind: config.kind,
            headers: config.headers.clone(),
        })
    }

    async fn get(&self, url: &str) -> Option<Value> {
        self.send(self.client.get(url)).await
    }

    async fn post(&self, url: &str, body: &Value) -> Option<Value> {
        let request = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        self.send(request).await
    }

    async fn send(&self, mut request: reqwest::RequestBuilder) -> Option<Value> {
        if let Some(key) = &self.key {
            request = match self.kind {
                ProviderKind::OpenAi => request.bearer_auth(key),
                ProviderKind::Anthropic => request.header("x-api-key", key),
                ProviderKind::Local => request,
            };
        }
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let mut response = request.timeout(Duration::from_secs(4)).send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        // Model lists can be long (OpenRouter's), but a body past a few MB
        // is not one worth reading.
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.ok()? {
            bytes.extend_from_slice(&chunk);
            if bytes.len() > MAX_ANSWER {
                return None;
            }
        }
        serde_json::from_slice(&bytes).ok()
    }
}

fn plausible(value: Option<&Value>) -> Option<u64> {
    value.and_then(Value::as_u64).filter(|n| PLAUSIBLE.contains(n))
}

/// The model's entry of a `/v1/models` list (the only one when a server
/// serves one model under another name, as llama-server does).
fn from_models(list: &Value, model: &str) -> Option<u64> {
    let entries = list.get("data")?.as_array()?;
    let entry = entries
        .iter()
        .find(|e| e.get("id").and_then(Value::as_str) == Some(model))
        .or(if entries.len() == 1 { entries.first() } else { None })?;
    let windows = [
        "/meta/n_ctx",
        "/max_model_len",
        "/loaded_context_length",
        "/max_context_length",
        "/context_length",
    ];
    windows.iter().find_map(|pointer| plausible(entry.pointer(pointer)))
}

fn from_props(props: &Value) -> Option<u64> {
    plausible(props.pointer("/default_generation_settings/n_ctx"))
        .or_else(|| plausible(props.get("n_ctx")))
}

/// Ollama names models `name:tag`; `llama3.1` is `llama3.1:latest`.
fn same_ollama_model(name: &str, model: &str) -> bool {
    name == model || (!model.contains(':') && name == format!("{model}:latest"))
}

fn from_ollama_ps(ps: &Value, model: &str) -> Option<u64> {
    ps.get("models")?
        .as_array()?
        .iter()
        .find(|m| {
            ["name", "model"].iter().any(|field| {
                m.get(*field).and_then(Value::as_str).is_some_and(|n| same_ollama_model(n, model))
            })
        })
        .and_then(|m| plausible(m.get("context_length")))
}

fn from_ollama_show(show: &Value) -> Option<u64> {
    let configured = show.get("parameters").and_then(Value::as_str).and_then(|parameters| {
        parameters.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            match (words.next(), words.next()) {
                (Some("num_ctx"), Some(n)) => n.parse().ok().filter(|n| PLAUSIBLE.contains(n)),
                _ => None,
            }
        })
    });
    configured.or_else(|| {
        show.get("model_info")?
            .as_object()?
            .iter()
            .find(|(key, _)| key.ends_with(".context_length"))
            .and_then(|(_, value)| plausible(Some(value)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_servers_answer_is_read() {
        let llama = json!({"object": "list", "data": [{"id": "qwen.gguf", "owned_by": "llamacpp",
            "meta": {"n_ctx": 4096, "n_ctx_train": 131072}}]});
        assert_eq!(from_models(&llama, "anything"), Some(4096));
        let train_only = json!({"data": [{"id": "m", "meta": {"n_ctx_train": 131072}}]});
        assert_eq!(from_models(&train_only, "m"), None, "the training window is not the window");
        let vllm = json!({"data": [{"id": "a", "max_model_len": 8192}, {"id": "b", "max_model_len": 16384}]});
        assert_eq!(from_models(&vllm, "b"), Some(16384));
        assert_eq!(from_models(&vllm, "c"), None, "several models and none of them");
        let lm_studio = json!({"object": "list", "data": [{"id": "qwen2.5-7b", "state": "loaded",
            "max_context_length": 32768, "loaded_context_length": 4096}]});
        assert_eq!(from_models(&lm_studio, "qwen2.5-7b"), Some(4096));
        let props = json!({"default_generation_settings": {"n_ctx": 2048}, "total_slots": 2});
        assert_eq!(from_props(&props), Some(2048));
        let ps = json!({"models": [{"name": "llama3.1:latest", "context_length": 8192}]});
        assert_eq!(from_ollama_ps(&ps, "llama3.1"), Some(8192));
        assert_eq!(from_ollama_ps(&ps, "qwen3"), None);
        let show = json!({"parameters": "stop \"<|eot|>\"\nnum_ctx                        16384",
            "model_info": {"llama.context_length": 131072}});
        assert_eq!(from_ollama_show(&show), Some(16384));
        let show =
            json!({"model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}});
        assert_eq!(from_ollama_show(&show), Some(32768));
    }

    #[test]
    fn the_model_list_says_which_server_to_ask_further() {
        let list = |entry: Value| json!({"object": "list", "data": [entry]});
        assert_eq!(
            which_server(&list(json!({"id": "m", "owned_by": "llamacpp"}))),
            Server::LlamaCpp
        );
        assert_eq!(which_server(&list(json!({"id": "m", "owned_by": "library"}))), Server::Ollama);
        let lm = list(json!({"id": "m", "owned_by": "organization_owner"}));
        assert_eq!(which_server(&lm), Server::LmStudio);
        assert_eq!(
            which_server(&list(json!({"id": "gpt-x", "owned_by": "openai"}))),
            Server::Other
        );
        assert_eq!(which_server(&json!({"data": []})), Server::Unknown);
    }

    #[test]
    fn the_root_drops_the_version() {
        assert_eq!(server_root("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080");
        assert_eq!(server_root("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
    }
}
