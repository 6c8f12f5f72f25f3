//! A scripted model server for tests: it answers each request with the next
//! reply of its script, in the OpenAI chat-completions format on
//! `/v1/chat/completions` and the Anthropic Messages format on
//! `/v1/messages`, streamed as server-sent events the way those APIs do,
//! faults included. It binds 127.0.0.1 on a free port and stops when
//! dropped. Every request body is kept for assertions. Asked about its
//! model's window (`/v1/models`, `/props`, `/api/ps`, `/api/show`), it
//! answers as [`ModelInfo`] says, without using the script.

pub mod oauth;
pub mod webdriver;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use futures_util::{StreamExt, stream};
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Plain text, streamed a few characters per event.
    Text(String),
    /// Reasoning (DeepSeek `reasoning_content` / Anthropic thinking), then text.
    Reasoning { reasoning: String, text: String },
    /// Optional text, then tool calls `(name, arguments as JSON text)`; each
    /// call's arguments are split across several events.
    ToolCalls { text: String, calls: Vec<(String, String)> },
    /// An HTTP error response.
    Error { status: u16, headers: Vec<(String, String)>, body: String },
    /// Everything at once: reasoning, text, then tool calls.
    Turn { reasoning: String, text: String, calls: Vec<(String, String)> },
    /// Text, then the stream ends without saying why the model stopped.
    Truncated(String),
    /// Text, then the connection stays open and silent.
    Stall(String),
    /// Text, then an event that is not valid JSON.
    Corrupt(String),
    /// No response at all: the connection is accepted and left hanging.
    Silent,
    /// Text, then the model declines: `content_filter` (OpenAI) or
    /// `refusal` (Anthropic) as the reason it stopped.
    Refusal(String),
    /// `pieces` text pieces `gap` apart (OpenAI format only), each
    /// `⟦MS⟧ ` with the wall-clock time it was written, in milliseconds
    /// since the epoch with microseconds: a page can tell how long a
    /// piece took to reach its screen.
    Clocked { pieces: usize, gap: std::time::Duration },
}

impl Reply {
    pub fn text(text: &str) -> Self {
        Reply::Text(text.to_string())
    }

    pub fn tool(name: &str, arguments: Value) -> Self {
        Reply::ToolCalls {
            text: String::new(),
            calls: vec![(name.to_string(), arguments.to_string())],
        }
    }

    pub fn tools(calls: &[(&str, Value)]) -> Self {
        Reply::ToolCalls {
            text: String::new(),
            calls: calls.iter().map(|(n, a)| (n.to_string(), a.to_string())).collect(),
        }
    }

    /// Plan mode's `submit_plan` with these step descriptions, each
    /// expecting "STEP is done".
    pub fn submit_plan(steps: &[&str]) -> Self {
        let steps: Vec<Value> = steps
            .iter()
            .map(|s| json!({"description": s, "expected_outcome": format!("{s} is done")}))
            .collect();
        Reply::tool("submit_plan", json!({"steps": steps}))
    }

    pub fn error(status: u16, body: &str) -> Self {
        Reply::Error { status, headers: Vec::new(), body: body.to_string() }
    }
}

/// What the server says when asked for its model's window.
#[derive(Debug, Clone, Default)]
pub enum ModelInfo {
    /// Every question gets 404, as from a server that does not say.
    #[default]
    Silent,
    /// llama-server: `/props` reports `n_ctx`, and so does `/v1/models`'s
    /// `meta` when `in_models` (some builds list only `n_ctx_train`).
    LlamaCpp { n_ctx: u64, in_models: bool },
    /// Ollama: `/api/show` with `num_ctx` among its parameters (when set)
    /// and `context_length` in `model_info`; `/api/ps` lists nothing.
    Ollama { num_ctx: Option<u64>, context_length: u64 },
    /// A hosted API: `/v1/models` lists models without their windows.
    Hosted,
}

#[derive(Default)]
struct ServerScript {
    model_info: Mutex<ModelInfo>,
    /// `METHOD path` of every question about the model, in order.
    probes: Mutex<Vec<String>>,
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Value>>,
    /// The path each request was sent to, in the order of `requests`.
    paths: Mutex<Vec<String>>,
    next_call: Mutex<u64>,
    /// When each request arrived and when its response's last byte went out.
    timeline: Mutex<Vec<(Instant, Option<Instant>)>>,
}

/// The running server.
pub struct ScriptedServer {
    /// `http://127.0.0.1:PORT`
    pub url: String,
    shared: Arc<ServerScript>,
    task: tokio::task::JoinHandle<()>,
}

impl ScriptedServer {
    /// Starts serving `script` on the current Tokio runtime.
    pub async fn start(script: Vec<Reply>) -> std::io::Result<Self> {
        let shared =
            Arc::new(ServerScript { script: Mutex::new(script.into()), ..ServerScript::default() });
        let app = Router::new()
            .route("/stats", axum::routing::get(stats))
            .fallback(answer)
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(ScriptedServer { url, shared, task })
    }

    /// The base URL for an OpenAI-format provider.
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.url)
    }

    /// Request bodies received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.shared.requests.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The path of each request in [`ScriptedServer::requests`].
    pub fn paths(&self) -> Vec<String> {
        self.shared.paths.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Replies not used yet.
    pub fn remaining(&self) -> usize {
        self.shared.script.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// For each request after the first: microseconds between the end of
    /// the previous response and this request's arrival, which is the time
    /// the client spent outside the model.
    pub fn client_gaps_us(&self) -> Vec<u64> {
        gaps(&self.shared)
    }

    /// How the server answers questions about its model's window.
    pub fn set_model_info(&self, info: ModelInfo) {
        *self.shared.model_info.lock().unwrap_or_else(PoisonError::into_inner) = info;
    }

    /// The questions about the model asked so far (`GET /props`, …).
    pub fn probes(&self) -> Vec<String> {
        self.shared.probes.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Adds replies to the end of the script.
    pub fn push(&self, replies: impl IntoIterator<Item = Reply>) {
        self.shared.script.lock().unwrap_or_else(PoisonError::into_inner).extend(replies);
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn gaps(shared: &ServerScript) -> Vec<u64> {
    let timeline = shared.timeline.lock().unwrap_or_else(PoisonError::into_inner);
    timeline
        .windows(2)
        .filter_map(|pair| {
            let finished = pair[0].1?;
            let gap = pair[1].0.checked_duration_since(finished)?;
            u64::try_from(gap.as_micros()).ok()
        })
        .collect()
}

async fn stats(State(shared): State<Arc<ServerScript>>) -> Response {
    let requests = shared.timeline.lock().unwrap_or_else(PoisonError::into_inner).len();
    plain(200, &json!({"requests": requests, "client_gaps_us": gaps(&shared)}).to_string())
}

/// The answer to a question about the model's window, or `None` when the
/// request is not one.
fn model_info(shared: &ServerScript, method: &Method, path: &str) -> Option<Response> {
    let get = method == Method::GET;
    let question = (get && (path.ends_with("/models") || path == "/props" || path == "/api/ps"))
        || (method == Method::POST && path == "/api/show");
    if !question {
        return None;
    }
    shared.probes.lock().unwrap_or_else(PoisonError::into_inner).push(format!("{method} {path}"));
    let info = shared.model_info.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let not_found = || plain(404, r#"{"error":{"message":"File Not Found"}}"#);
    let answer = match (info, path) {
        (ModelInfo::LlamaCpp { n_ctx, in_models }, p) if p.ends_with("/models") => {
            let meta = if in_models {
                json!({"n_ctx": n_ctx, "n_ctx_train": 131072})
            } else {
                json!({"n_ctx_train": 131072})
            };
            json!({"object": "list", "data": [{"id": "model.gguf", "object": "model",
                   "owned_by": "llamacpp", "meta": meta}]})
        }
        (ModelInfo::LlamaCpp { n_ctx, .. }, "/props") => {
            json!({"default_generation_settings": {"n_ctx": n_ctx}, "total_slots": 1})
        }
        (ModelInfo::Ollama { .. }, p) if p.ends_with("/models") => {
            json!({"object": "list", "data": [{"id": "scripted:latest", "owned_by": "library"}]})
        }
        (ModelInfo::Ollama { .. }, "/api/ps") => json!({"models": []}),
        (ModelInfo::Hosted, "/v1/models") => {
            json!({"object": "list", "data": [{"id": "some-model", "owned_by": "system"}]})
        }
        (ModelInfo::Ollama { num_ctx, context_length }, "/api/show") => {
            let parameters = num_ctx.map(|n| format!("num_ctx {n}")).unwrap_or_default();
            json!({"parameters": parameters,
                   "model_info": {"general.architecture": "llama", "llama.context_length": context_length}})
        }
        _ => return Some(not_found()),
    };
    Some(plain(200, &answer.to_string()))
}

async fn answer(
    State(shared): State<Arc<ServerScript>>,
    method: Method,
    uri: Uri,
    _headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(response) = model_info(&shared, &method, uri.path()) {
        return response;
    }
    let turn = {
        let mut timeline = shared.timeline.lock().unwrap_or_else(PoisonError::into_inner);
        timeline.push((Instant::now(), None));
        timeline.len() - 1
    };
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.requests.lock().unwrap_or_else(PoisonError::into_inner).push(request);
    shared.paths.lock().unwrap_or_else(PoisonError::into_inner).push(uri.path().to_string());
    let next = shared.script.lock().unwrap_or_else(PoisonError::into_inner).pop_front();
    let Some(reply) = next else {
        return plain(500, r#"{"error":{"message":"the test script has no more replies"}}"#);
    };
    let anthropic = uri.path().ends_with("/messages");
    let first_id = {
        let mut next = shared.next_call.lock().unwrap_or_else(PoisonError::into_inner);
        let id = *next;
        *next += 16;
        id
    };
    if let Reply::Silent = reply {
        std::future::pending::<()>().await;
    }
    if let Reply::Clocked { pieces, gap } = reply {
        return clocked(pieces, gap);
    }
    if let Reply::Error { status, headers, body } = &reply {
        let mut response = plain(*status, body);
        for (name, value) in headers {
            if let (Ok(name), Ok(value)) = (
                axum::http::HeaderName::from_bytes(name.as_bytes()),
                axum::http::HeaderValue::from_str(value),
            ) {
                response.headers_mut().insert(name, value);
            }
        }
        return response;
    }
    let (events, ending) = if anthropic {
        anthropic_events(&reply, first_id)
    } else {
        openai_events(&reply, first_id)
    };
    let done = Arc::clone(&shared);
    let mark_finished = stream::once(async move {
        let mut timeline = done.timeline.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = timeline.get_mut(turn) {
            entry.1 = Some(Instant::now());
        }
    })
    .filter_map(|()| async { None::<Result<Bytes, Infallible>> });
    let chunks = stream::iter(events.into_iter().map(|e| Ok::<_, Infallible>(Bytes::from(e))))
        .chain(mark_finished);
    let body = match ending {
        Ending::Close => Body::from_stream(chunks),
        Ending::Stall => Body::from_stream(chunks.chain(stream::pending())),
    };
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(body)
        .unwrap_or_else(|_| plain(500, "cannot build the response"))
}

/// A stream of `pieces` time-stamped pieces, written as they are made.
fn clocked(pieces: usize, gap: std::time::Duration) -> Response {
    let chunk = |delta: Value, finish: Value| {
        let v = json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": "scripted",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        Ok::<_, Infallible>(Bytes::from(format!("data: {v}\n\n")))
    };
    let start =
        stream::once(
            async move { chunk(json!({"role": "assistant", "content": ""}), Value::Null) },
        );
    let body = stream::unfold(0usize, move |sent| async move {
        if sent == pieces {
            return None;
        }
        if sent > 0 {
            tokio::time::sleep(gap).await;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as f64 / 1000.0)
            .unwrap_or_default();
        Some((chunk(json!({"content": format!("⟦{now:.3}⟧ ")}), Value::Null), sent + 1))
    });
    let end = stream::iter([chunk(json!({}), json!("stop")), Ok(Bytes::from("data: [DONE]\n\n"))]);
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(start.chain(body).chain(end)))
        .unwrap_or_else(|_| plain(500, "cannot build the response"))
}

fn plain(status: u16, body: &str) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response
        .headers_mut()
        .insert("content-type", axum::http::HeaderValue::from_static("application/json"));
    response
}

enum Ending {
    Close,
    Stall,
}

/// Splits text into pieces of a few characters, as models stream.
fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size.max(1)).map(|c| c.iter().collect()).collect()
}

fn openai_events(reply: &Reply, first_id: u64) -> (Vec<String>, Ending) {
    let data = |v: Value| format!("data: {v}\n\n");
    let chunk = |delta: Value, finish: Value| {
        data(json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": "scripted",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    let (text, reasoning, calls, fault) = parts(reply);
    for piece in pieces(reasoning, 5) {
        events.push(chunk(json!({"reasoning_content": piece}), Value::Null));
    }
    for piece in pieces(text, 4) {
        events.push(chunk(json!({"content": piece}), Value::Null));
    }
    for (i, (name, arguments)) in calls.iter().enumerate() {
        let id = format!("call_{}", first_id + i as u64);
        events.push(chunk(
            json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        ));
        for piece in pieces(arguments, 7) {
            events.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    match fault {
        Some(Fault::Truncate) => return (events, Ending::Close),
        Some(Fault::Stall) => return (events, Ending::Stall),
        Some(Fault::Corrupt) => {
            events.push("data: {\"choices\": [{\"delta\": {\"content\": \"x\"\n\n".to_string());
            return (events, Ending::Close);
        }
        Some(Fault::Refuse) | None => {}
    }
    let finish = match (&fault, calls.is_empty()) {
        (Some(Fault::Refuse), _) => "content_filter",
        (_, true) => "stop",
        (_, false) => "tool_calls",
    };
    events.push(chunk(json!({}), json!(finish)));
    events.push(data(json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "choices": [],
                            "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}})));
    events.push("data: [DONE]\n\n".to_string());
    (events, Ending::Close)
}

fn anthropic_events(reply: &Reply, first_id: u64) -> (Vec<String>, Ending) {
    let event = |name: &str, v: Value| format!("event: {name}\ndata: {v}\n\n");
    let mut events = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_test", "type": "message", "role": "assistant",
               "content": [], "model": "scripted", "usage": {"input_tokens": 12, "output_tokens": 1}}}),
    )];
    let (text, reasoning, calls, fault) = parts(reply);
    // One content block: its start, its deltas, then (for thinking) the
    // signature, and its stop.
    let mut block = |index: usize, start: Value, deltas: Vec<Value>| {
        events.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        events.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    };
    let mut index = 0;
    if !reasoning.is_empty() {
        let mut deltas: Vec<Value> = pieces(reasoning, 5)
            .into_iter()
            .map(|p| json!({"type": "thinking_delta", "thinking": p}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": "sig-test"}));
        block(index, json!({"type": "thinking", "thinking": ""}), deltas);
        index += 1;
    }
    if !text.is_empty() {
        let deltas =
            pieces(text, 4).into_iter().map(|p| json!({"type": "text_delta", "text": p})).collect();
        block(index, json!({"type": "text", "text": ""}), deltas);
        index += 1;
    }
    events.push(event("ping", json!({"type": "ping"})));
    for (i, (name, arguments)) in calls.iter().enumerate() {
        let id = format!("toolu_{}", first_id + i as u64);
        events.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        ));
        for piece in pieces(arguments, 7) {
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
        events.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    match fault {
        Some(Fault::Truncate) => return (events, Ending::Close),
        Some(Fault::Stall) => return (events, Ending::Stall),
        Some(Fault::Corrupt) => {
            events.push(
                "event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"ind\n\n"
                    .to_string(),
            );
            return (events, Ending::Close);
        }
        Some(Fault::Refuse) | None => {}
    }
    let stop = match (&fault, calls.is_empty()) {
        (Some(Fault::Refuse), _) => "refusal",
        (_, true) => "end_turn",
        (_, false) => "tool_use",
    };
    events.push(event(
        "message_delta",
        json!({"type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 7}}),
    ));
    events.push(event("message_stop", json!({"type": "message_stop"})));
    (events, Ending::Close)
}

enum Fault {
    Truncate,
    Stall,
    Corrupt,
    Refuse,
}

type Parts<'a> = (&'a str, &'a str, &'a [(String, String)], Option<Fault>);

fn parts(reply: &Reply) -> Parts<'_> {
    match reply {
        Reply::Text(text) => (text, "", &[], None),
        Reply::Reasoning { reasoning, text } => (text, reasoning, &[], None),
        Reply::ToolCalls { text, calls } => (text, "", calls, None),
        Reply::Turn { reasoning, text, calls } => (text, reasoning, calls, None),
        Reply::Truncated(text) => (text, "", &[], Some(Fault::Truncate)),
        Reply::Stall(text) => (text, "", &[], Some(Fault::Stall)),
        Reply::Corrupt(text) => (text, "", &[], Some(Fault::Corrupt)),
        Reply::Refusal(text) => (text, "", &[], Some(Fault::Refuse)),
        Reply::Error { .. } | Reply::Silent | Reply::Clocked { .. } => ("", "", &[], None),
    }
}
