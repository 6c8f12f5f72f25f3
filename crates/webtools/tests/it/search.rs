//! `web_search` against loopback servers speaking each backend's documented
//! JSON (Brave Search, Tavily, SearXNG), and their failures: a refused key,
//! a rate limit, garbage (for each backend), an answer too large.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use axon_protocol::ToolOutput;
use axon_tools::{ToolContext, ToolRegistry, Workspace};
use axon_webtools::{Backend, SearchConfig, WebFetchConfig};
use serde_json::json;

use crate::server::{Reply, Server};

const KEY: &str = "test-key-0123456789abcdef";

fn registry(backend: Backend, server: &Server, key: Option<&str>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    let search = SearchConfig {
        backend,
        endpoint: server.url(""),
        api_key: key.map(String::from),
        api_key_env: backend.default_key_env().map(String::from),
        timeout: Duration::from_secs(30),
    };
    axon_webtools::register(&mut registry, WebFetchConfig::default(), Some(search));
    registry
}

async fn search(registry: &ToolRegistry, args: serde_json::Value) -> ToolOutput {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Workspace::new(dir.path()).unwrap());
    registry.call(&ctx, "web_search", args).await
}

/// Brave's documented shape (`web.results[]`), trimmed to what is read
/// plus fields that are not.
const BRAVE: &str = r#"{"type": "search", "query": {"original": "rust ownership"},
  "web": {"type": "search", "results": [
    {"title": "What is <strong>Ownership</strong>? - The Rust Programming Language",
     "url": "https://doc.rust-lang.org/book/ch04-01-what-is-ownership.html",
     "description": "<strong>Ownership</strong> is a set of rules that govern how a Rust program manages memory &amp; more.",
     "age": "2 days ago", "language": "en"},
    {"title": "Rust by Example", "url": "https://doc.rust-lang.org/rust-by-example/scope/move.html",
     "description": "Because variables are in charge of freeing their own resources"}]}}"#;

/// Tavily's documented shape (`results[]` with `content` and `score`).
const TAVILY: &str = r#"{"query": "rust ownership", "answer": null, "images": [],
  "results": [{"title": "Understanding Ownership", "url": "https://doc.rust-lang.org/book/ch04-00-understanding-ownership.html",
    "content": "Ownership is Rust's most unique feature.", "score": 0.98, "raw_content": null}],
  "response_time": 1.2}"#;

/// SearXNG's `format=json` shape.
const SEARXNG: &str = r#"{"query": "rust ownership", "number_of_results": 0,
  "results": [{"url": "https://users.rust-lang.org/t/ownership/1", "title": "Ownership question",
    "content": "A thread about moves", "engine": "duckduckgo", "engines": ["duckduckgo"], "score": 1.0, "category": "general"}],
  "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}"#;

#[tokio::test]
async fn brave_results_come_back_as_title_url_and_snippet() {
    let server = Server::start(|_| Reply::ok("application/json", BRAVE)).await;
    let registry = registry(Backend::Brave, &server, Some(KEY));
    let output = search(&registry, json!({"query": "rust ownership", "max_results": 5})).await;
    let text = output.text_content();
    assert!(!output.is_error, "{text}");
    assert!(text.starts_with("Results for \"rust ownership\" (Brave Search):"), "{text}");
    assert!(
        text.contains(
            "1. What is Ownership? - The Rust Programming Language\n   \
         https://doc.rust-lang.org/book/ch04-01-what-is-ownership.html\n   \
         Ownership is a set of rules that govern how a Rust program manages memory & more."
        ),
        "{text}"
    );
    assert!(text.contains("2. Rust by Example"), "{text}");
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "GET");
    assert!(
        seen[0].target.starts_with("/res/v1/web/search?q=rust+ownership&count=5"),
        "{:?}",
        seen[0]
    );
    assert_eq!(seen[0].header("x-subscription-token").as_deref(), Some(KEY));
}

#[tokio::test]
async fn tavily_gets_a_json_body_and_a_bearer_key() {
    let server = Server::start(|_| Reply::ok("application/json", TAVILY)).await;
    let registry = registry(Backend::Tavily, &server, Some(KEY));
    let output = search(&registry, json!({"query": "rust ownership"})).await;
    let text = output.text_content();
    assert!(!output.is_error, "{text}");
    assert!(text.contains("1. Understanding Ownership\n   https://doc.rust-lang.org/book/ch04-00-understanding-ownership.html\n   Ownership is Rust's most unique feature."), "{text}");
    let seen = &server.seen()[0];
    assert_eq!((seen.method.as_str(), seen.target.as_str()), ("POST", "/search"));
    assert_eq!(seen.header("authorization"), Some(format!("Bearer {KEY}")));
    let body: serde_json::Value = serde_json::from_str(&seen.body).unwrap();
    assert_eq!(body, json!({"query": "rust ownership", "max_results": 8}));
}

#[tokio::test]
async fn searxng_needs_no_key() {
    let server = Server::start(|_| Reply::ok("application/json", SEARXNG)).await;
    let registry = registry(Backend::Searxng, &server, None);
    let output = search(&registry, json!({"query": "rust ownership"})).await;
    let text = output.text_content();
    assert!(!output.is_error, "{text}");
    assert!(text.contains("1. Ownership question\n   https://users.rust-lang.org/t/ownership/1\n   A thread about moves"), "{text}");
    let seen = &server.seen()[0];
    assert_eq!(seen.target, "/search?q=rust+ownership&format=json");
    assert!(seen.header("authorization").is_none());
}

#[tokio::test]
async fn a_refused_key_a_rate_limit_and_garbage_are_clear_bounded_errors() {
    let server = Server::start(|seen| match seen.header("x-subscription-token").as_deref() {
        Some("bad") => Reply::status(401, &[], r#"{"error": "invalid token bad"}"#),
        Some("busy") => Reply::status(429, &[("Retry-After", "30")], "slow down"),
        Some("junk") => Reply::ok("application/json", "<html>not json</html>"),
        Some("wrong-shape") => {
            Reply::ok("application/json", r#"{"web": {"results": [{"nope": 1}]}}"#)
        }
        Some("huge") => Reply::Endless {
            content_type: "application/json".into(),
            total: 3 * 1024 * 1024,
            fill: b' ',
        },
        _ => Reply::status(500, &[], "boom"),
    })
    .await;
    for (key, want) in [
        ("bad", "Brave Search refused the API key (HTTP 401): check BRAVE_API_KEY"),
        ("busy", "rate-limiting searches (HTTP 429), retry after 30"),
        ("junk", "answered with something that is not its search results"),
        ("wrong-shape", "answered with something that is not its search results"),
        ("huge", "larger than 2 MB"),
        ("other", "answered HTTP 500"),
    ] {
        let registry = registry(Backend::Brave, &server, Some(key));
        let output = search(&registry, json!({"query": "q"})).await;
        let text = output.text_content();
        assert!(output.is_error, "{key}: {text}");
        assert!(text.contains(want), "{key}: {text}");
        assert!(text.len() < 1000, "{key}: bounded: {}", text.len());
        if key == "bad" {
            assert!(!text.contains("token bad"), "the key is not echoed: {text}");
        }
    }
    let registry = registry(Backend::Brave, &server, None);
    let output = search(&registry, json!({"query": "q"})).await;
    assert!(output.is_error);
    assert!(output.text_content().contains("set BRAVE_API_KEY"), "{}", output.text_content());
}

#[tokio::test]
async fn tavily_and_searxng_failures_are_clear_bounded_errors_too() {
    // Each backend reads its own answer: a refusal, a rate limit and
    // garbage are judged for Tavily's and SearXNG's as for Brave's.
    for (backend, key, refused) in [
        (Backend::Tavily, Some(KEY), "Tavily refused the API key (HTTP 401): check TAVILY_API_KEY"),
        (Backend::Searxng, None, "HTTP 401"),
    ] {
        let status = std::sync::Arc::new(std::sync::atomic::AtomicU16::new(401));
        let answer = std::sync::Arc::clone(&status);
        let server =
            Server::start(move |_| match answer.load(std::sync::atomic::Ordering::SeqCst) {
                401 => Reply::status(401, &[], r#"{"detail": {"error": "Unauthorized"}}"#),
                429 => Reply::status(429, &[("Retry-After", "30")], "slow down"),
                _ => Reply::ok("application/json", r#"{"results": "not a list"}"#),
            })
            .await;
        let registry = registry(backend, &server, key);
        for (code, want) in [
            (401, refused),
            (429, "rate-limiting searches (HTTP 429), retry after 30"),
            (200, "answered with something that is not its search results"),
        ] {
            status.store(code, std::sync::atomic::Ordering::SeqCst);
            let output = search(&registry, json!({"query": "q"})).await;
            let text = output.text_content();
            assert!(output.is_error, "{}: {code}: {text}", backend.name());
            assert!(text.contains(want), "{}: {code}: {text}", backend.name());
            assert!(text.len() < 1000, "{}: bounded: {}", backend.name(), text.len());
        }
    }
}

#[tokio::test]
async fn a_redirect_never_carries_the_key_elsewhere() {
    let elsewhere = Server::start(|_| Reply::ok("application/json", BRAVE)).await;
    let to = elsewhere.url("/collect");
    let server = Server::start(move |_| Reply::redirect(&to)).await;
    let registry = registry(Backend::Brave, &server, Some(KEY));
    let output = search(&registry, json!({"query": "q"})).await;
    assert!(output.is_error);
    assert!(output.text_content().contains("answered HTTP 302"), "{}", output.text_content());
    assert!(elsewhere.seen().is_empty(), "the key went to another server");
}

#[tokio::test]
async fn searxng_without_json_says_how_to_enable_it() {
    let server = Server::start(|_| Reply::status(403, &[], "Forbidden")).await;
    let registry = registry(Backend::Searxng, &server, None);
    let output = search(&registry, json!({"query": "q"})).await;
    assert!(output.is_error);
    assert!(output.text_content().contains("search.formats"), "{}", output.text_content());
}

#[tokio::test]
async fn an_empty_query_is_refused_without_asking() {
    let server = Server::start(|_| Reply::ok("application/json", SEARXNG)).await;
    let registry = registry(Backend::Searxng, &server, None);
    let output = search(&registry, json!({"query": "   "})).await;
    assert!(output.is_error);
    assert!(server.seen().is_empty());
}

#[test]
fn without_a_backend_the_tool_is_not_offered() {
    let mut registry = ToolRegistry::new();
    axon_webtools::register(&mut registry, WebFetchConfig::default(), None);
    let names: Vec<&str> = registry.names().collect();
    assert_eq!(names, ["web_fetch"]);
}
