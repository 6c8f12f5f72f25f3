//! `web_search`: a query sent to the search API the user configured, the
//! results given back as title, URL and snippet.
//!
//! Guarantees: the key goes only to the configured endpoint, in the header
//! its API documents, and never into a result or an error; an answer is
//! read up to [`MAX_ANSWER_BYTES`]; a refused key (401/403), a rate limit
//! (429), another failure status and an answer that is not the backend's
//! documented JSON each give a short error naming the backend and what to
//! do; snippets are plain text (tags removed, entities decoded) and
//! bounded.

mod backends;

use std::time::Duration;

use axon_protocol::{ToolAnnotations, ToolOutput};
use axon_tools::{ToolContext, ToolError, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;

pub use backends::Backend;

/// Bytes of a search API's answer read at most.
pub const MAX_ANSWER_BYTES: usize = 2 * 1024 * 1024;
/// Characters of one snippet shown.
const MAX_SNIPPET_CHARS: usize = 500;
const DEFAULT_RESULTS: u8 = 8;
const MAX_RESULTS: u8 = 20;

/// Which API `web_search` asks, where, and with which key.
#[derive(Clone)]
pub struct SearchConfig {
    pub backend: Backend,
    /// The API's address: the backend's own by default; a SearXNG
    /// instance's base URL (`http://localhost:8888`) for SearXNG.
    pub endpoint: String,
    /// The key, for the backends that need one.
    pub api_key: Option<String>,
    /// The variable the key came from, named in errors.
    pub api_key_env: Option<String>,
    pub timeout: Duration,
}

impl std::fmt::Debug for SearchConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchConfig")
            .field("backend", &self.backend)
            .field("endpoint", &self.endpoint)
            .field("api_key", &self.api_key.as_ref().map(|_| "[set]"))
            .field("api_key_env", &self.api_key_env)
            .finish()
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WebSearchArgs {
    /// What to search the web for.
    pub query: String,
    /// How many results to return, 1 to 20. Defaults to 8.
    #[serde(default)]
    pub max_results: Option<u8>,
}

/// One result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// The `web_search` tool.
pub struct WebSearch {
    config: SearchConfig,
    client: Result<reqwest::Client, String>,
}

impl WebSearch {
    pub fn new(config: SearchConfig) -> WebSearch {
        let client = crate::client::plain(config.timeout);
        WebSearch { config, client }
    }
}

impl TypedTool for WebSearch {
    type Args = WebSearchArgs;
    const NAME: &'static str = "web_search";

    fn description(&self) -> String {
        format!(
            "Search the web ({}) and get results as title, URL and snippet. Use web_fetch on a \
             result's URL to read the page.",
            self.config.backend.name()
        )
    }

    fn annotations(&self) -> ToolAnnotations {
        // The query leaves the machine: not read-only, asked in ask mode.
        ToolAnnotations { read_only: false, destructive: false, idempotent: true }
    }

    async fn run(&self, ctx: &ToolContext, args: WebSearchArgs) -> Result<ToolOutput, ToolError> {
        let query = args.query.trim();
        if query.is_empty() {
            return Err(ToolError::failed("The query is empty; say what to search for."));
        }
        let count = args.max_results.unwrap_or(DEFAULT_RESULTS).clamp(1, MAX_RESULTS);
        let client = self.client.as_ref().map_err(|e| ToolError::failed(e.clone()))?;
        ctx.report_progress(format!("searching {}", self.config.backend.name()));
        let hits = backends::search(client, &self.config, query, count)
            .await
            .map_err(ToolError::Failed)?;
        Ok(ToolOutput::text(render(query, self.config.backend, &hits, count)))
    }
}

fn render(query: &str, backend: Backend, hits: &[Hit], count: u8) -> String {
    if hits.is_empty() {
        return format!("No results for \"{query}\" ({}).", backend.name());
    }
    let mut out = format!("Results for \"{query}\" ({}):\n", backend.name());
    for (n, hit) in hits.iter().take(count as usize).enumerate() {
        out.push_str(&format!("\n{}. {}\n   {}\n", n + 1, one_line(&hit.title, 200), hit.url));
        let snippet = one_line(&hit.snippet, MAX_SNIPPET_CHARS);
        if !snippet.is_empty() {
            out.push_str(&format!("   {snippet}\n"));
        }
    }
    out
}

/// Text on one line, tags removed and entities decoded (APIs highlight
/// matches with `<strong>`), at most `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let plain = if text.contains(['<', '&']) {
        dom_query::Document::fragment(text).text().to_string()
    } else {
        text.to_string()
    };
    let joined = plain.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    let cut: String = joined.chars().take(max).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_plain_and_bounded() {
        assert_eq!(
            one_line("a <strong>bold</strong>\n move &amp; more", 100),
            "a bold move & more"
        );
        let long = "x".repeat(600);
        assert_eq!(one_line(&long, 500).chars().count(), 501);
    }

    #[test]
    fn results_are_numbered_with_title_url_and_snippet() {
        let hits = vec![Hit {
            title: "Rust".into(),
            url: "https://www.rust-lang.org/".into(),
            snippet: "A language".into(),
        }];
        let text = render("rust", Backend::Brave, &hits, 8);
        assert!(text.contains("1. Rust\n   https://www.rust-lang.org/\n   A language"), "{text}");
        assert!(render("x", Backend::Searxng, &[], 8).starts_with("No results"));
    }
}
