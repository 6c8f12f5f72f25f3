//! Test helpers for the model store: a tiny valid GGUF written byte by
//! byte, a wheel (zip) carrying one, and a loopback file server that
//! speaks Range / If-Range / ETag, can cut a download after K bytes, can
//! ignore ranges, and logs every request. Also used by the CLI's tests
//! (`crates/cli/tests/it/models_cli.rs` includes this file).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use sha2::{Digest, Sha256};

/// How long any test may take, network included.
pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs `future` under [`PATIENCE`].
pub async fn bounded<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, future).await.expect("the test took too long")
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

// ---------------------------------------------------------------- GGUF --

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn put_kv_str(out: &mut Vec<u8>, key: &str, value: &str) {
    put_str(out, key);
    out.extend_from_slice(&8u32.to_le_bytes());
    put_str(out, value);
}

fn put_kv_u32(out: &mut Vec<u8>, key: &str, value: u32) {
    put_str(out, key);
    out.extend_from_slice(&4u32.to_le_bytes());
    out.extend_from_slice(&value.to_le_bytes());
}

pub const CHAT_TEMPLATE: &str =
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}<|assistant|>";

/// A small valid GGUF v3: metadata of every value type (strings, integers,
/// floats, a bool, arrays of strings and of integers, a nested array),
/// `general.alignment` 32, and one F32 tensor of 8×2 values. `extra` is
/// padding appended to make files of different content.
pub fn tiny_gguf(name: &str, extra: usize) -> Vec<u8> {
    tiny_gguf_with(name, extra, 0)
}

/// [`tiny_gguf`] whose tensor has ggml type `ggml_type` (0 = F32).
pub fn tiny_gguf_with(name: &str, extra: usize, ggml_type: u32) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"GGUF");
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&1u64.to_le_bytes()); // tensors
    out.extend_from_slice(&12u64.to_le_bytes()); // kv pairs
    put_kv_str(&mut out, "general.architecture", "llama");
    put_kv_str(&mut out, "general.name", name);
    put_kv_u32(&mut out, "llama.context_length", 2048);
    put_kv_u32(&mut out, "general.alignment", 32);
    put_kv_str(&mut out, "tokenizer.chat_template", CHAT_TEMPLATE);
    // u8, i16, f32, bool, u64, f64
    put_str(&mut out, "test.u8");
    out.extend_from_slice(&0u32.to_le_bytes());
    out.push(7);
    put_str(&mut out, "test.i16");
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&(-3i16).to_le_bytes());
    put_str(&mut out, "test.f32");
    out.extend_from_slice(&6u32.to_le_bytes());
    out.extend_from_slice(&1.5f32.to_le_bytes());
    put_str(&mut out, "test.bool");
    out.extend_from_slice(&7u32.to_le_bytes());
    out.push(1);
    put_str(&mut out, "test.u64");
    out.extend_from_slice(&10u32.to_le_bytes());
    out.extend_from_slice(&u64::MAX.to_le_bytes());
    // An array of strings (a vocabulary) and an array of i32.
    put_str(&mut out, "tokenizer.ggml.tokens");
    out.extend_from_slice(&9u32.to_le_bytes());
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&3u64.to_le_bytes());
    for token in ["<s>", "</s>", "hello"] {
        put_str(&mut out, token);
    }
    // An array of arrays of f64.
    put_str(&mut out, "test.nested");
    out.extend_from_slice(&9u32.to_le_bytes());
    out.extend_from_slice(&9u32.to_le_bytes());
    out.extend_from_slice(&2u64.to_le_bytes());
    for _ in 0..2 {
        out.extend_from_slice(&12u32.to_le_bytes());
        out.extend_from_slice(&2u64.to_le_bytes());
        out.extend_from_slice(&1.0f64.to_le_bytes());
        out.extend_from_slice(&2.0f64.to_le_bytes());
    }
    // Tensor info: "t", 2 dims (8, 2), type, offset 0.
    put_str(&mut out, "t");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&8u64.to_le_bytes());
    out.extend_from_slice(&2u64.to_le_bytes());
    out.extend_from_slice(&ggml_type.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    while out.len() % 32 != 0 {
        out.push(0);
    }
    for i in 0..16u32 {
        out.extend_from_slice(&(i as f32).to_le_bytes());
    }
    out.extend(std::iter::repeat_n(0xAB, extra));
    out
}

/// A wheel (a zip, deflated) holding `files` (path, content) plus the
/// dist-info a real one has.
pub fn wheel(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (path, content) in files {
        zip.start_file(*path, options).unwrap();
        zip.write_all(content).unwrap();
    }
    zip.start_file("llm_tiny-0.2.0.dist-info/METADATA", options).unwrap();
    zip.write_all(b"Metadata-Version: 2.1\nName: llm-tiny\nVersion: 0.2.0\n").unwrap();
    zip.finish().unwrap().into_inner()
}

// -------------------------------------------------------------- server --

/// One file the server serves at a path.
#[derive(Clone, Default)]
pub struct Served {
    pub body: Vec<u8>,
    pub etag: Option<String>,
    /// Hugging Face's `X-Linked-Etag`.
    pub linked_etag: Option<String>,
    pub content_type: Option<String>,
    /// Answer `302` to this path instead (carrying the ETag headers, as
    /// Hugging Face's resolve URL does).
    pub redirect_to: Option<String>,
    /// For an index page: served as JSON when the client accepts it.
    pub json_alternative: Option<Vec<u8>>,
}

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub range: Option<String>,
    pub if_range: Option<String>,
    pub authorization: Option<String>,
    pub accept: Option<String>,
    pub status: u16,
}

#[derive(Default)]
struct State {
    files: Mutex<HashMap<String, Served>>,
    /// The next body sent is cut after this many bytes.
    cut_after: Mutex<Option<usize>>,
    ignore_range: AtomicBool,
    log: Mutex<Vec<Logged>>,
}

pub struct FileServer {
    /// `http://127.0.0.1:PORT`
    pub url: String,
    state: Arc<State>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl FileServer {
    pub async fn start() -> FileServer {
        let state = Arc::new(State::default());
        let app = axum::Router::new().fallback(answer).with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        FileServer { url, state, stop: Some(stop) }
    }

    pub fn serve(&self, path: &str, served: Served) {
        self.state.files.lock().unwrap().insert(path.to_string(), served);
    }

    /// The next response body is cut (the connection dropped) after `bytes`.
    pub fn cut_next_after(&self, bytes: usize) {
        *self.state.cut_after.lock().unwrap() = Some(bytes);
    }

    pub fn ignore_ranges(&self, ignore: bool) {
        self.state.ignore_range.store(ignore, Ordering::SeqCst);
    }

    pub fn log(&self) -> Vec<Logged> {
        self.state.log.lock().unwrap().clone()
    }

    pub fn clear_log(&self) {
        self.state.log.lock().unwrap().clear();
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn answer(
    axum::extract::State(state): axum::extract::State<Arc<State>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let path = uri.path().to_string();
    let served = state.files.lock().unwrap().get(&path).cloned();
    let response = respond(&state, &method, served, &headers);
    state.log.lock().unwrap().push(Logged {
        method: method.to_string(),
        path,
        range: header("range"),
        if_range: header("if-range"),
        authorization: header("authorization"),
        accept: header("accept"),
        status: response.status().as_u16(),
    });
    response
}

fn respond(
    state: &State,
    method: &Method,
    served: Option<Served>,
    headers: &HeaderMap,
) -> Response {
    let Some(served) = served else {
        return Response::builder().status(404).body(Body::from("not here")).unwrap();
    };
    let mut builder = Response::builder();
    if let Some(etag) = &served.etag {
        builder = builder.header("etag", etag);
    }
    if let Some(linked) = &served.linked_etag {
        builder = builder.header("x-linked-etag", linked);
    }
    if let Some(location) = &served.redirect_to {
        return builder.status(302).header("location", location).body(Body::empty()).unwrap();
    }
    let accept = headers.get("accept").and_then(|v| v.to_str().ok()).unwrap_or("");
    if let Some(json) = &served.json_alternative
        && accept.contains("application/vnd.pypi.simple.v1+json")
    {
        return builder
            .header("content-type", "application/vnd.pypi.simple.v1+json")
            .body(Body::from(json.clone()))
            .unwrap();
    }
    if let Some(content_type) = &served.content_type {
        builder = builder.header("content-type", content_type);
    }
    let total = served.body.len();
    let range_start = headers
        .get("range")
        .and_then(|v| v.to_str().ok())
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse::<usize>().ok());
    let if_range_ok = match headers.get("if-range").and_then(|v| v.to_str().ok()) {
        None => true,
        Some(validator) => served.etag.as_deref() == Some(validator),
    };
    let (status, start) = match range_start {
        Some(start) if !state.ignore_range.load(Ordering::SeqCst) && if_range_ok => {
            if start >= total {
                return builder
                    .status(416)
                    .header("content-range", format!("bytes */{total}"))
                    .body(Body::empty())
                    .unwrap();
            }
            builder =
                builder.header("content-range", format!("bytes {start}-{}/{total}", total - 1));
            (StatusCode::PARTIAL_CONTENT, start)
        }
        _ => (StatusCode::OK, 0),
    };
    let rest = served.body[start..].to_vec();
    builder = builder
        .status(status)
        .header("content-length", rest.len())
        .header("accept-ranges", "bytes");
    if method == Method::HEAD {
        return builder.body(Body::empty()).unwrap();
    }
    let cut = state.cut_after.lock().unwrap().take();
    match cut {
        Some(k) if k < rest.len() => {
            use futures_util::StreamExt;
            let first = Bytes::from(rest[..k].to_vec());
            // The body yields once (hyper flushes what it has when the body
            // is pending) and then fails, which drops the connection.
            let cut = futures_util::stream::once(async {
                tokio::task::yield_now().await;
                Err::<Bytes, _>(std::io::Error::other("cut by the test"))
            });
            let chunks = futures_util::stream::iter([Ok(first)]).chain(cut);
            builder.body(Body::from_stream(chunks)).unwrap()
        }
        _ => builder.body(Body::from(rest)).unwrap(),
    }
}

/// A Hugging Face style resolve path.
pub fn hf_path(owner: &str, repo: &str, file: &str) -> String {
    format!("/{owner}/{repo}/resolve/main/{file}")
}
