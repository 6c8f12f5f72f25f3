//! `web_fetch` against loopback servers made here: pages, redirects, huge
//! and silent servers, and the address checks (literal and resolved).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use axon_protocol::ToolOutput;
use axon_tools::{ToolContext, ToolRegistry, Workspace};
use axon_webtools::{AddressPolicy, FetchLimits, WebFetchConfig};
use serde_json::json;

use crate::pdf_fixture::pdf;
use crate::server::{Reply, Server};

/// Loopback opened by name, as the user's `private_hosts` would.
fn loopback_open() -> AddressPolicy {
    AddressPolicy { allow_private: false, private_hosts: vec!["127.0.0.1".into()] }
}

fn registry(policy: AddressPolicy, timeout: Duration) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    let config = WebFetchConfig {
        policy,
        limits: FetchLimits { timeout, ..FetchLimits::default() },
        ..WebFetchConfig::default()
    };
    axon_webtools::register(&mut registry, config, None);
    registry
}

async fn fetch(registry: &ToolRegistry, args: serde_json::Value) -> ToolOutput {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Workspace::new(dir.path()).unwrap());
    registry.call(&ctx, "web_fetch", args).await
}

const ARTICLE: &str = "<!doctype html><html><head><title>The Borrow Checker</title>\
    <script>trackEverything()</script></head><body>\
    <nav><a href='/'>Home</a> | <a href='/blog'>Blog</a> | <a href='/login'>Log in</a></nav>\
    <main><article><h1>The Borrow Checker</h1>\
    <p>The borrow checker makes sure that references never outlive the data they point to, \
    and that no data is changed while something else reads it. It works at compile time.</p>\
    <p>Every value has one owner; when the owner goes out of scope the value is dropped. \
    Borrowing lends a value without giving up ownership, either shared or exclusive.</p>\
    <h2>Lifetimes</h2><p>Lifetimes name how long a reference is valid. Read \
    <a href='/book/lifetimes.html'>the lifetimes chapter</a> for the details of elision.</p>\
    </article></main><footer>© 2026 Example footer, all rights reserved</footer></body></html>";

#[tokio::test]
async fn an_html_page_becomes_its_main_content_as_markdown() {
    let server = Server::start(|_| Reply::ok("text/html; charset=utf-8", ARTICLE)).await;
    let registry = registry(loopback_open(), Duration::from_secs(30));
    let output = fetch(&registry, json!({"url": server.url("/post")})).await;
    let text = output.text_content();
    assert!(!output.is_error, "{text}");
    assert!(text.starts_with("# The Borrow Checker\n"), "{text}");
    assert!(text.contains(&format!("URL: {}", server.url("/post"))), "{text}");
    assert!(text.contains("main content of an HTML page, as Markdown"), "{text}");
    assert!(text.contains("## Lifetimes"), "{text}");
    assert!(text.contains("references never outlive"), "{text}");
    let absolute = format!("({})", server.url("/book/lifetimes.html"));
    assert!(text.contains(&absolute), "links are absolute: {text}");
    assert!(!text.contains("trackEverything"), "{text}");
    assert!(!text.contains("all rights reserved"), "{text}");
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].header("user-agent").unwrap_or_default().starts_with("axon/"));
}

#[tokio::test]
async fn text_json_and_markdown_pass_through() {
    let server = Server::start(|seen| match seen.target.as_str() {
        "/a.json" => Reply::ok("application/json", r#"{"name": "axon", "tools": ["web_fetch"]}"#),
        "/a.md" => Reply::ok("text/markdown", "# Notes\n\n- one\n- two\n"),
        _ => Reply::ok("text/plain", "plain <b>words</b> stay as sent"),
    })
    .await;
    let registry = registry(loopback_open(), Duration::from_secs(30));
    for (path, want, kind) in [
        ("/a.json", r#"{"name": "axon", "tools": ["web_fetch"]}"#, "application/json, as sent"),
        ("/a.md", "# Notes\n\n- one\n- two\n", "text/markdown, as sent"),
        ("/a.txt", "plain <b>words</b> stay as sent", "text/plain, as sent"),
    ] {
        let output = fetch(&registry, json!({"url": server.url(path)})).await;
        let text = output.text_content();
        assert!(!output.is_error, "{text}");
        assert!(text.contains(kind), "{path}: {text}");
        assert!(text.ends_with(want), "{path}: {text}");
    }
}

#[tokio::test]
async fn a_pdf_is_read_by_page_and_a_range_is_asked_for() {
    let paper = pdf(&["Abstract of the paper", "Methods used here", "Results were good"]);
    let server = Server::start(move |seen| match seen.target.as_str() {
        // No useful type: the bytes say PDF.
        "/paper" => Reply::ok("application/octet-stream", paper.clone()),
        _ => Reply::ok("application/pdf", paper.clone()),
    })
    .await;
    let registry = registry(loopback_open(), Duration::from_secs(30));
    let output = fetch(&registry, json!({"url": server.url("/paper")})).await;
    let text = output.text_content();
    assert!(!output.is_error, "{text}");
    assert!(text.contains("Content: a PDF's text, by page"), "{text}");
    assert!(text.contains("3 pages; pages 1-3:"), "{text}");
    assert!(text.contains("--- page 2 ---\nMethods used here"), "{text}");
    let output = fetch(&registry, json!({"url": server.url("/paper"), "pages": "3"})).await;
    let text = output.text_content();
    assert!(!output.is_error, "{text}");
    assert!(text.contains("(from the 15-minute cache)"), "{text}");
    assert!(text.contains("--- page 3 ---\nResults were good"), "{text}");
    assert!(!text.contains("Abstract"), "{text}");
    assert_eq!(server.seen().len(), 1, "the second range came from the cache");
    let output = fetch(&registry, json!({"url": server.url("/typed.pdf"), "pages": "7"})).await;
    assert!(output.is_error);
    assert!(output.text_content().contains("page"), "{}", output.text_content());
}

#[tokio::test]
async fn a_damaged_pdf_a_pdf_past_the_cap_and_binaries_are_clear_errors() {
    let big = pdf(&["x"; 40]);
    let cap = big.len() / 2;
    let server = Server::start(move |seen| match seen.target.as_str() {
        "/damaged" => Reply::ok("application/pdf", b"%PDF-1.7\n%binary...".to_vec()),
        "/big" => Reply::ok("application/pdf", big.clone()),
        _ => Reply::ok("image/png", b"\x89PNG\r\n\x1a\n\0\0\0".to_vec()),
    })
    .await;
    let registry = registry(loopback_open(), Duration::from_secs(30));
    let output = fetch(&registry, json!({"url": server.url("/damaged")})).await;
    assert!(output.is_error);
    assert!(
        output.text_content().contains("not a PDF that can be parsed"),
        "{}",
        output.text_content()
    );
    let output = fetch(&registry, json!({"url": server.url("/logo.png")})).await;
    assert!(output.is_error);
    assert!(output.text_content().contains("is not text (image/png)"), "{}", output.text_content());
    let mut small = ToolRegistry::new();
    let config = WebFetchConfig {
        policy: loopback_open(),
        limits: FetchLimits { max_body_bytes: cap, ..FetchLimits::default() },
        ..WebFetchConfig::default()
    };
    axon_webtools::register(&mut small, config, None);
    let output = fetch(&small, json!({"url": server.url("/big")})).await;
    assert!(output.is_error);
    let text = output.text_content();
    assert!(text.contains("is a PDF larger than web_fetch downloads"), "{text}");
    assert!(text.contains("read_file"), "{text}");
}

#[tokio::test]
async fn same_host_redirects_are_followed_and_the_final_url_shown() {
    let server = Server::start(|seen| match seen.target.as_str() {
        "/old" => Reply::redirect("/middle"),
        "/middle" => Reply::status(301, &[("Location", "/new")], ""),
        _ => Reply::ok("text/plain", "arrived"),
    })
    .await;
    let registry = registry(loopback_open(), Duration::from_secs(30));
    let output = fetch(&registry, json!({"url": server.url("/old")})).await;
    let text = output.text_content();
    assert!(!output.is_error, "{text}");
    assert!(text.contains(&format!("URL: {}", server.url("/new"))), "{text}");
    assert!(text.contains(&format!("(redirected from {})", server.url("/old"))), "{text}");
    assert!(text.ends_with("arrived"), "{text}");
}

#[tokio::test]
async fn a_redirect_loop_and_an_endless_chain_are_errors() {
    let server = Server::start(|seen| match seen.target.as_str() {
        "/a" => Reply::redirect("/b"),
        "/b" => Reply::redirect("/a"),
        other => {
            // /chain/N → /chain/N+1, forever.
            let n: u32 = other.trim_start_matches("/chain/").parse().unwrap_or(0);
            Reply::redirect(&format!("/chain/{}", n + 1))
        }
    })
    .await;
    let registry = registry(loopback_open(), Duration::from_secs(30));
    let output = fetch(&registry, json!({"url": server.url("/a")})).await;
    assert!(output.is_error);
    assert!(output.text_content().contains("Redirect loop"), "{}", output.text_content());
    let output = fetch(&registry, json!({"url": server.url("/chain/0")})).await;
    assert!(output.is_error);
    assert!(output.text_content().contains("Too many redirects"), "{}", output.text_content());
    // The first request and ten hops, then it stopped.
    let chain = server.seen().iter().filter(|s| s.target.starts_with("/chain/")).count();
    assert_eq!(chain, 1 + axon_webtools::MAX_REDIRECTS);
}

#[tokio::test]
async fn a_redirect_to_another_host_is_reported_not_followed() {
    let other = Server::start(|_| Reply::ok("text/plain", "secret")).await;
    let to = format!("http://localhost:{}/inside", other.port);
    let target = to.clone();
    let server = Server::start(move |_| Reply::redirect(&target)).await;
    let policy = AddressPolicy {
        allow_private: false,
        private_hosts: vec!["127.0.0.1".into(), "localhost".into()],
    };
    let registry = registry(policy, Duration::from_secs(30));
    let output = fetch(&registry, json!({"url": server.url("/go")})).await;
    let text = output.text_content();
    assert!(!output.is_error, "{text}");
    assert!(text.contains(&format!("to another host: {to}")), "{text}");
    assert!(text.contains("call web_fetch with that URL"), "{text}");
    assert!(other.seen().is_empty(), "the other host was not asked");
}

#[tokio::test]
async fn a_50_mb_page_is_read_only_up_to_the_cap() {
    let server = Server::start(|_| Reply::Endless {
        content_type: "text/plain".into(),
        total: 50 * 1024 * 1024,
        fill: b'a',
    })
    .await;
    let registry = registry(loopback_open(), Duration::from_secs(120));
    let output = fetch(&registry, json!({"url": server.url("/huge.txt")})).await;
    let text = output.text_content();
    assert!(!output.is_error, "{}", &text[..text.len().min(500)]);
    assert!(text.contains("only its beginning was read"), "{}", &text[..500]);
    assert!(text.contains("more bytes of the page cut"), "the output budget holds");
    assert!(text.len() < 256 * 1024, "{}", text.len());
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let server = Server::start(|_| Reply::Silent).await;
    let registry = registry(loopback_open(), Duration::from_millis(500));
    let output = fetch(&registry, json!({"url": server.url("/slow")})).await;
    assert!(output.is_error);
    assert!(output.text_content().contains("timed out"), "{}", output.text_content());
}

// Several threads: the guard below must fire even if the call holds one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_trickles_its_page_times_out() {
    // A byte every 20 ms is never silent for the read timeout: the
    // request's total time bounds it.
    let server = Server::start(|_| Reply::Drip).await;
    let registry = registry(loopback_open(), Duration::from_millis(800));
    let call = fetch(&registry, json!({"url": server.url("/drip")}));
    let output = tokio::time::timeout(Duration::from_secs(60), call)
        .await
        .expect("the fetch of a trickling page never ended");
    let text = output.text_content();
    assert!(output.is_error, "{text}");
    assert!(text.contains("timed out"), "{text}");
    assert!(text.len() < 1000, "bounded: {text}");
}

#[tokio::test]
async fn a_private_literal_address_is_refused_without_the_config() {
    let server = Server::start(|_| Reply::ok("text/plain", "admin panel")).await;
    let registry = registry(AddressPolicy::default(), Duration::from_secs(30));
    for url in [
        server.url("/"),
        format!("http://[::ffff:127.0.0.1]:{}/", server.port),
        format!("http://2130706433:{}/", server.port),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "http://[::1]/".to_string(),
        "http://10.0.0.1/".to_string(),
    ] {
        let output = fetch(&registry, json!({"url": url})).await;
        let text = output.text_content();
        assert!(output.is_error, "{url}: {text}");
        assert!(text.starts_with("Refused:"), "{url}: {text}");
        assert!(text.contains("private_hosts"), "says how to allow it: {text}");
    }
    assert!(server.seen().is_empty(), "nothing reached the server");
    // With the user's config, the same page is fetched.
    let open = registry_open();
    let output = fetch(&open, json!({"url": server.url("/")})).await;
    assert!(!output.is_error, "{}", output.text_content());
    assert!(output.text_content().ends_with("admin panel"));
}

fn registry_open() -> ToolRegistry {
    registry(
        AddressPolicy { allow_private: true, private_hosts: Vec::new() },
        Duration::from_secs(30),
    )
}

#[tokio::test]
async fn a_name_that_resolves_to_loopback_is_refused_at_connection() {
    let server = Server::start(|_| Reply::ok("text/plain", "admin panel")).await;
    // 127.0.0.1 opened, but not the name: the check is on the name that
    // resolved, at the connection.
    let registry = registry(loopback_open(), Duration::from_secs(30));
    let output =
        fetch(&registry, json!({"url": format!("http://localhost:{}/", server.port)})).await;
    let text = output.text_content();
    assert!(output.is_error, "{text}");
    assert!(text.starts_with("Refused: localhost is at"), "{text}");
    assert!(text.contains("loopback"), "{text}");
    assert!(server.seen().is_empty(), "nothing reached the server");
}

#[tokio::test]
async fn a_page_asked_again_comes_from_the_cache() {
    let server = Server::start(|_| Reply::ok("text/plain", "cached words")).await;
    let registry = registry(loopback_open(), Duration::from_secs(30));
    let first = fetch(&registry, json!({"url": server.url("/c")})).await;
    assert!(!first.text_content().contains("from the 15-minute cache"));
    let second = fetch(&registry, json!({"url": server.url("/c")})).await;
    assert!(
        second.text_content().contains("from the 15-minute cache"),
        "{}",
        second.text_content()
    );
    assert!(second.text_content().ends_with("cached words"));
    assert_eq!(server.seen().len(), 1, "asked once");
}

#[tokio::test]
async fn bad_urls_and_statuses_are_clear_errors() {
    let server = Server::start(|_| Reply::status(404, &[], "nope")).await;
    let registry = registry(loopback_open(), Duration::from_secs(30));
    let output = fetch(&registry, json!({"url": server.url("/missing")})).await;
    assert!(output.is_error);
    assert!(output.text_content().contains("answered HTTP 404"), "{}", output.text_content());
    for (args, why) in [
        (json!({"url": "file:///etc/passwd"}), "only http:// and https://"),
        (json!({"url": "gopher://example.com/"}), "only http:// and https://"),
        (json!({"url": "https://"}), "Invalid URL"),
        (json!({"url": 7}), "Invalid parameters for web_fetch"),
        (json!({}), "Invalid parameters for web_fetch"),
    ] {
        let output = fetch(&registry, args.clone()).await;
        assert!(output.is_error, "{args}");
        assert!(output.text_content().contains(why), "{args}: {}", output.text_content());
    }
}

#[tokio::test]
async fn the_preview_refuses_what_the_call_would() {
    let registry = std::sync::Arc::new(registry(AddressPolicy::default(), Duration::from_secs(30)));
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Workspace::new(dir.path()).unwrap());
    let preview = registry.preview_async(&ctx, "web_fetch", &json!({"url": "ftp://x/"})).await;
    assert!(matches!(preview, axon_protocol::Preview::Invalid { .. }), "{preview:?}");
    let preview =
        registry.preview_async(&ctx, "web_fetch", &json!({"url": "https://docs.rs/"})).await;
    assert!(matches!(preview, axon_protocol::Preview::Arguments { .. }), "{preview:?}");
    let spec = registry.spec("web_fetch").unwrap();
    assert!(!spec.annotations.read_only, "it sends data off the machine");
}
