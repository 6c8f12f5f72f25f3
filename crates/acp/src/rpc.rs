//! JSON-RPC 2.0 over newline-delimited JSON, both ways.
//!
//! Every line written goes through one [`Outgoing`] channel to one writer
//! task, so a response is never interleaved with a notification and what a
//! session sends stays in the order it was sent (the updates of a turn
//! before the answer to its `session/prompt`). [`Peer`] sends requests to
//! the client and matches the answers to them by id. Nothing here panics on
//! input: a line that is not JSON-RPC becomes an error value.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// ACP's "authentication required".
pub const AUTH_REQUIRED: i64 = -32000;

/// An error answer.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError { code, message: message.into() }
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        RpcError::new(INVALID_PARAMS, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        RpcError::new(INTERNAL_ERROR, message)
    }

    fn to_json(&self) -> Value {
        json!({"code": self.code, "message": self.message})
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

/// `params` as `T`; a mismatch names the field (`-32602`).
pub fn params<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    // Absent params are an empty object for requests whose fields are all
    // optional.
    let params = if params.is_null() { json!({}) } else { params };
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            RpcError::invalid_params(format!("invalid params: {inner}"))
        } else {
            RpcError::invalid_params(format!("invalid params: field `{path}`: {inner}"))
        }
    })
}

/// One line read from the client.
#[derive(Debug)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    Response {
        id: Value,
        result: Result<Value, RpcError>,
    },
    /// Not a JSON-RPC message; answered with this error (and the id, when
    /// one could be read).
    Invalid {
        id: Value,
        error: RpcError,
    },
}

/// Reads one line (bytes: one that is not UTF-8 is a parse error).
pub fn parse(line: &[u8]) -> Incoming {
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => {
            return Incoming::Invalid {
                id: Value::Null,
                error: RpcError::new(PARSE_ERROR, format!("not JSON: {e}")),
            };
        }
    };
    let Value::Object(mut object) = value else {
        let what = if value.is_array() { "batches are not supported" } else { "not an object" };
        return Incoming::Invalid {
            id: Value::Null,
            error: RpcError::new(INVALID_REQUEST, format!("invalid request: {what}")),
        };
    };
    let id = object.remove("id");
    let params = object.remove("params").unwrap_or(Value::Null);
    match (object.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) if valid_id(&id) => {
            Incoming::Request { id, method, params }
        }
        (Some(Value::String(method)), None) => Incoming::Notification { method, params },
        (Some(_), id) => Incoming::Invalid {
            id: id.filter(valid_id).unwrap_or(Value::Null),
            error: RpcError::new(INVALID_REQUEST, "invalid request: `method` must be a string"),
        },
        (None, Some(id)) => {
            let result = match (object.remove("result"), object.remove("error")) {
                (_, Some(error)) => Err(RpcError::new(
                    error.get("code").and_then(Value::as_i64).unwrap_or(INTERNAL_ERROR),
                    error.get("message").and_then(Value::as_str).unwrap_or("error").to_string(),
                )),
                (Some(result), None) => Ok(result),
                (None, None) => Ok(Value::Null),
            };
            Incoming::Response { id, result }
        }
        (None, None) => Incoming::Invalid {
            id: Value::Null,
            error: RpcError::new(INVALID_REQUEST, "invalid request: no `method`"),
        },
    }
}

fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_number()
}

/// The longest line read: a prompt may carry images as base64.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

pub enum Line {
    Read,
    /// Longer than [`MAX_LINE`]; skipped up to its end.
    TooLong,
    End,
}

/// Reads one line (without its newline) into `line`, bytes as they are:
/// a line that is not UTF-8 is the parser's to refuse, not the end.
pub async fn read_line<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
    line: &mut Vec<u8>,
) -> std::io::Result<Line> {
    use tokio::io::AsyncReadExt;
    let limit = u64::try_from(MAX_LINE).unwrap_or(u64::MAX) + 1;
    let read = (&mut *input).take(limit).read_until(b'\n', line).await?;
    if read == 0 {
        return Ok(Line::End);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        return Ok(Line::Read);
    }
    if line.len() <= MAX_LINE {
        // The input ended without a newline.
        return Ok(Line::Read);
    }
    let mut rest = Vec::new();
    loop {
        rest.clear();
        let n = (&mut *input).take(1024 * 1024).read_until(b'\n', &mut rest).await?;
        if n == 0 || rest.last() == Some(&b'\n') {
            return Ok(Line::TooLong);
        }
    }
}

/// Sends lines to the client, in order. Cheap to clone.
#[derive(Clone)]
pub struct Outgoing {
    tx: mpsc::UnboundedSender<String>,
}

impl Outgoing {
    /// A channel and the task that writes it to `output`; the task ends
    /// when every `Outgoing` is dropped (or the output fails).
    pub fn start<W: AsyncWrite + Unpin + Send + 'static>(
        output: W,
    ) -> (Outgoing, tokio::task::JoinHandle<()>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Outgoing { tx }, tokio::spawn(write_lines(output, rx)))
    }

    fn send(&self, message: &Value) {
        // A client that went away is not an error: there is no one to tell.
        let _ = self.tx.send(message.to_string());
    }

    pub fn notify(&self, method: &str, params: impl Serialize) {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub fn respond(&self, id: Value, result: Result<Value, RpcError>) {
        let message = match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error.to_json()}),
        };
        self.send(&message);
    }

    fn request(&self, id: u64, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut output: W,
    mut rx: mpsc::UnboundedReceiver<String>,
) {
    let mut buffer = Vec::new();
    while let Some(line) = rx.recv().await {
        buffer.clear();
        buffer.extend_from_slice(line.as_bytes());
        buffer.push(b'\n');
        // Whatever else is queued goes out in the same write.
        while let Ok(line) = rx.try_recv() {
            buffer.extend_from_slice(line.as_bytes());
            buffer.push(b'\n');
        }
        if output.write_all(&buffer).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
}

/// Requests to the client, answered by id.
pub struct Peer {
    out: Outgoing,
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>,
    /// The client is gone: requests fail at once.
    closed: AtomicBool,
}

/// A request sent and not answered yet. Dropped unanswered (a timeout, a
/// turn that ended), it is forgotten: a late answer finds no one.
pub struct Answer {
    peer: Arc<Peer>,
    id: u64,
    rx: Option<oneshot::Receiver<Result<Value, RpcError>>>,
}

impl Answer {
    pub async fn wait(mut self) -> Result<Value, RpcError> {
        let Some(rx) = self.rx.take() else {
            return Err(RpcError::internal("the client went away"));
        };
        rx.await.unwrap_or_else(|_| Err(RpcError::internal("the client went away")))
    }
}

impl Drop for Answer {
    fn drop(&mut self) {
        self.peer.waiting.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.id);
    }
}

impl Peer {
    pub fn new(out: Outgoing) -> Self {
        Peer {
            out,
            next: AtomicU64::new(1),
            waiting: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
        }
    }

    /// Sends a request now (in the order of the caller's other lines); its
    /// answer is awaited with [`Answer::wait`].
    pub fn start(self: &Arc<Self>, method: &str, params: impl Serialize) -> Answer {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            // Checked under the lock `close` clears: no entry outlives it.
            let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
            if !self.closed.load(Ordering::Acquire) {
                waiting.insert(id, tx);
                let params = serde_json::to_value(params).unwrap_or(Value::Null);
                self.out.request(id, method, params);
            }
        }
        // When closed, `tx` is dropped here and the answer is an error.
        Answer { peer: Arc::clone(self), id, rx: Some(rx) }
    }

    /// Sends a request and waits for its answer. A client that goes away
    /// first answers with an error.
    pub async fn request(
        self: &Arc<Self>,
        method: &str,
        params: impl Serialize,
    ) -> Result<Value, RpcError> {
        self.start(method, params).wait().await
    }

    /// An answer from the client; one nobody waits for is dropped.
    pub fn settle(&self, id: &Value, result: Result<Value, RpcError>) {
        let Some(id) = id.as_u64() else { return };
        let waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
        if let Some(waiting) = waiting {
            let _ = waiting.send(result);
        }
    }

    /// The client is gone: every open request fails, and every later one.
    pub fn close(&self) {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        self.closed.store(true, Ordering::Release);
        waiting.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classified() {
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            Incoming::Request { method, .. } if method == "initialize"
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#),
            Incoming::Notification { .. }
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":3,"result":{"outcome":{"outcome":"cancelled"}}}"#),
            Incoming::Response { result: Ok(_), .. }
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"no"}}"#),
            Incoming::Response { result: Err(RpcError { code: -32603, .. }), .. }
        ));
        let Incoming::Invalid { error, .. } = parse(b"{not json") else { panic!() };
        assert_eq!(error.code, PARSE_ERROR);
        let Incoming::Invalid { error, .. } = parse(b"{\"id\":1,\"method\":\"\xff\"}") else {
            panic!()
        };
        assert_eq!(error.code, PARSE_ERROR);
        let Incoming::Invalid { error, .. } = parse(b"[1,2]") else { panic!() };
        assert_eq!(error.code, INVALID_REQUEST);
        let Incoming::Invalid { id, error } = parse(br#"{"id":7,"method":5}"#) else { panic!() };
        assert_eq!((id, error.code), (json!(7), INVALID_REQUEST));
    }

    #[test]
    fn bad_params_name_the_field() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct P {
            cwd: String,
        }
        let error = params::<P>(json!({"cwd": 5})).unwrap_err();
        assert_eq!(error.code, INVALID_PARAMS);
        assert!(error.message.contains("cwd"), "{}", error.message);
    }
}
