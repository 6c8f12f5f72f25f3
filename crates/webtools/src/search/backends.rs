//! The search APIs `web_search` speaks, each in its documented format:
//! Brave Search (`GET /res/v1/web/search`, key in `X-Subscription-Token`,
//! results in `web.results[].{title,url,description}`), Tavily (`POST
//! /search` with a JSON body, key as a bearer token, results in
//! `results[].{title,url,content}`) and SearXNG (`GET /search?format=json`,
//! no key, results in `results[].{title,url,content}`).
//!
//! Guarantees: a status other than success never has its body shown beyond
//! a short clipped line (it could echo the request); the key is never part
//! of an error.

use serde::Deserialize;
use url::Url;

use super::{Hit, MAX_ANSWER_BYTES, SearchConfig};

/// A search API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Brave,
    Tavily,
    Searxng,
}

impl Backend {
    /// The name written in the config (`[web.search] backend`).
    pub fn parse(name: &str) -> Option<Backend> {
        match name.trim().to_ascii_lowercase().as_str() {
            "brave" => Some(Backend::Brave),
            "tavily" => Some(Backend::Tavily),
            "searxng" => Some(Backend::Searxng),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Backend::Brave => "Brave Search",
            Backend::Tavily => "Tavily",
            Backend::Searxng => "SearXNG",
        }
    }

    /// The API's own address; `None` for SearXNG, which is the user's.
    pub fn default_endpoint(self) -> Option<&'static str> {
        match self {
            Backend::Brave => Some("https://api.search.brave.com"),
            Backend::Tavily => Some("https://api.tavily.com"),
            Backend::Searxng => None,
        }
    }

    /// The variable the key is read from by default; `None` when no key
    /// is needed.
    pub fn default_key_env(self) -> Option<&'static str> {
        match self {
            Backend::Brave => Some("BRAVE_API_KEY"),
            Backend::Tavily => Some("TAVILY_API_KEY"),
            Backend::Searxng => None,
        }
    }
}

/// Asks `config`'s backend for `count` results.
pub(super) async fn search(
    client: &reqwest::Client,
    config: &SearchConfig,
    query: &str,
    count: u8,
) -> Result<Vec<Hit>, String> {
    let name = config.backend.name();
    let base = Url::parse(config.endpoint.trim_end_matches('/'))
        .map_err(|e| format!("the {name} address `{}` is not a URL: {e}", config.endpoint))?;
    let key = || {
        config.api_key.as_deref().filter(|k| !k.is_empty()).ok_or_else(|| {
            format!(
                "{name} needs an API key and none is set: set {} in the environment",
                config.api_key_env.as_deref().unwrap_or("its key variable")
            )
        })
    };
    let request = match config.backend {
        Backend::Brave => {
            let mut url = join(&base, "res/v1/web/search");
            url.query_pairs_mut().append_pair("q", query).append_pair("count", &count.to_string());
            client.get(url).header("X-Subscription-Token", key()?)
        }
        Backend::Tavily => {
            let body = serde_json::json!({ "query": query, "max_results": count });
            client
                .post(join(&base, "search"))
                .bearer_auth(key()?)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string())
        }
        Backend::Searxng => {
            let mut url = join(&base, "search");
            url.query_pairs_mut().append_pair("q", query).append_pair("format", "json");
            client.get(url)
        }
    };
    let response = request
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("{name} could not be reached: {}", crate::client::describe(&e)))?;
    let status = response.status();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.chars().take(40).collect::<String>());
    let body = read_bounded(response).await.map_err(|e| format!("{name}: {e}"))?;
    if !status.is_success() {
        return Err(status_error(config, status.as_u16(), retry_after.as_deref(), &body));
    }
    parse(config.backend, &body).map_err(|e| {
        format!(
            "{name} answered with something that is not its search results ({e}); check that \
             the configured address is a {name} API{}",
            if config.backend == Backend::Searxng {
                " with the JSON format enabled (`search.formats: [html, json]` in its settings.yml)"
            } else {
                ""
            }
        )
    })
}

/// `base` with `path` added below its own path.
fn join(base: &Url, path: &str) -> Url {
    let mut url = base.clone();
    let joined = format!("{}/{path}", url.path().trim_end_matches('/'));
    url.set_path(&joined);
    url
}

async fn read_bounded(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("the answer broke off: {}", crate::client::describe(&e)))?
    {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(format!(
                "the answer is larger than {} MB; not read",
                MAX_ANSWER_BYTES / (1024 * 1024)
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn status_error(
    config: &SearchConfig,
    status: u16,
    retry_after: Option<&str>,
    body: &[u8],
) -> String {
    let name = config.backend.name();
    let var = config.api_key_env.as_deref().unwrap_or("the key variable");
    let mut said: String = String::from_utf8_lossy(&body[..body.len().min(200)])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if let Some(key) = config.api_key.as_deref().filter(|k| !k.is_empty()) {
        said = said.replace(key, "[key]");
    }
    let said = if said.is_empty() { String::new() } else { format!(" It said: {said}") };
    match status {
        401 | 403 if config.backend != Backend::Searxng => format!(
            "{name} refused the API key (HTTP {status}): check {var}, or ask the user to.{said}"
        ),
        403 => format!(
            "SearXNG refused the request (HTTP 403): the instance must allow the JSON format \
             (`search.formats: [html, json]` in its settings.yml).{said}"
        ),
        429 => format!(
            "{name} is rate-limiting searches (HTTP 429){}: search less often, or later.{said}",
            retry_after.map(|r| format!(", retry after {r}")).unwrap_or_default()
        ),
        _ => format!("{name} answered HTTP {status}; no results.{said}"),
    }
}

#[derive(Deserialize)]
struct BraveAnswer {
    #[serde(default)]
    web: Option<BraveWeb>,
}

#[derive(Deserialize)]
struct BraveWeb {
    #[serde(default)]
    results: Vec<BraveResult>,
}

#[derive(Deserialize)]
struct BraveResult {
    title: String,
    url: String,
    #[serde(default)]
    description: Option<String>,
}

/// Tavily and SearXNG both answer `{"results": [{title, url, content}]}`.
#[derive(Deserialize)]
struct ResultsAnswer {
    results: Vec<ContentResult>,
}

#[derive(Deserialize)]
struct ContentResult {
    #[serde(default)]
    title: Option<String>,
    url: String,
    #[serde(default)]
    content: Option<String>,
}

fn parse(backend: Backend, body: &[u8]) -> Result<Vec<Hit>, String> {
    let clip = |e: serde_json::Error| e.to_string().chars().take(160).collect::<String>();
    match backend {
        Backend::Brave => {
            let answer: BraveAnswer = serde_json::from_slice(body).map_err(clip)?;
            Ok(answer
                .web
                .map(|web| web.results)
                .unwrap_or_default()
                .into_iter()
                .map(|r| Hit {
                    title: r.title,
                    url: r.url,
                    snippet: r.description.unwrap_or_default(),
                })
                .collect())
        }
        Backend::Tavily | Backend::Searxng => {
            let answer: ResultsAnswer = serde_json::from_slice(body).map_err(clip)?;
            Ok(answer
                .results
                .into_iter()
                .map(|r| Hit {
                    title: r.title.unwrap_or_else(|| r.url.clone()),
                    url: r.url,
                    snippet: r.content.unwrap_or_default(),
                })
                .collect())
        }
    }
}
