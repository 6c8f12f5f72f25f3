//! The page's requests besides the event stream: operations for the
//! session, and this workspace's saved sessions and files.
//!
//! An operation is the runtime's own `Op`, passed through unchanged: the
//! page holds no policy (a prompt reaches every page as the runtime's
//! `prompt` event when its turn starts). Sessions are listed, exported
//! and deleted only when they belong to this workspace, and the one open
//! now cannot be deleted from under the session.

use std::sync::Arc;

use axon_protocol::Op;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::auth::refuse;
use crate::server::PanelState;

/// The largest operation accepted: a prompt with a few images.
pub const MAX_OP: usize = 8 * 1024 * 1024;
/// The longest prompt text accepted (about 60,000 tokens): more is a file
/// to attach or mention, not a message every page and the session file
/// would hold a copy of.
pub const MAX_PROMPT: usize = 256 * 1024;

/// `POST /api/op`: one `Op` as JSON, at most [`MAX_OP`] bytes, a prompt's
/// text at most [`MAX_PROMPT`].
pub async fn op(
    State(shared): State<Arc<PanelState>>,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "the operation is larger than {} MB; send fewer or smaller images",
                    MAX_OP / (1024 * 1024)
                ),
            );
        }
        Err(e) => return refuse(e.status(), &format!("cannot read the operation: {e}")),
    };
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("application/json"));
    if !json {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the operation as application/json",
        );
    }
    let op: Op = match serde_json::from_slice(&body) {
        Ok(op) => op,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, &format!("not an operation: {e}")),
    };
    if let Op::UserTurn { text, .. } = &op
        && text.len() > MAX_PROMPT
    {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "the prompt is {} KB, over the {} KB limit; put the text in a file in the \
                 workspace and mention it with @path",
                text.len() / 1024,
                MAX_PROMPT / 1024
            ),
        );
    }
    if op == Op::Shutdown {
        return refuse(
            StatusCode::BAD_REQUEST,
            "the page cannot end the session; stop axon web where it runs (Ctrl-C)",
        );
    }
    shared.session.submit(op);
    (StatusCode::ACCEPTED, axum::Json(json!({}))).into_response()
}

/// `GET /api/sessions`: this workspace's sessions, newest first.
pub async fn sessions(State(shared): State<Arc<PanelState>>) -> Response {
    let listed = blocking(move || {
        let sessions = shared.store.list(Some(&shared.root)).map_err(|e| e.to_string())?;
        Ok(sessions
            .into_iter()
            .map(|s| {
                json!({
                    "id": s.id, "title": s.title, "model": s.model,
                    "created_at": s.created_at, "updated_at": s.updated_at,
                    "messages": s.messages, "tokens": s.tokens,
                })
            })
            .collect::<Vec<_>>())
    })
    .await;
    match listed {
        Ok(list) => axum::Json(list).into_response(),
        Err(e) => refuse(StatusCode::INTERNAL_SERVER_ERROR, &format!("cannot list sessions: {e}")),
    }
}

/// `DELETE /api/sessions/{id}`.
pub async fn delete(State(shared): State<Arc<PanelState>>, Path(id): Path<String>) -> Response {
    if shared.current().as_deref() == Some(id.as_str()) {
        return refuse(
            StatusCode::CONFLICT,
            "this session is open; start a new session or resume another before deleting it",
        );
    }
    let removed = blocking(move || {
        owned(&shared, &id)?;
        // Its checkpoints go with it; a prune that fails leaves them behind
        // (a later `git gc` of the shadow repository is all they cost).
        axon_runtime::rewind::remove_session(&shared.store, &id)
            .map(|(removed, _)| removed)
            .map_err(|e| e.to_string())
    })
    .await;
    match removed {
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => refuse(StatusCode::NOT_FOUND, &e),
    }
}

/// `GET /api/sessions/{id}/export`: the session as Markdown, to download.
pub async fn export(State(shared): State<Arc<PanelState>>, Path(id): Path<String>) -> Response {
    let file = id.clone();
    let markdown = blocking(move || {
        owned(&shared, &id)?;
        let session = shared.store.open(&id).map_err(|e| e.to_string())?;
        Ok(axon_runtime::to_markdown(&session))
    })
    .await;
    match markdown {
        Ok(markdown) => {
            let mut response = markdown.into_response();
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/markdown; charset=utf-8"),
            );
            // `owned` took only ids of digits, letters and dashes.
            if let Ok(value) =
                HeaderValue::from_str(&format!("attachment; filename=\"axon-{file}.md\""))
            {
                headers.insert(header::CONTENT_DISPOSITION, value);
            }
            response
        }
        Err(e) => refuse(StatusCode::NOT_FOUND, &e),
    }
}

/// `GET /api/files`: the workspace's files for `@` completion.
pub async fn files(State(shared): State<Arc<PanelState>>) -> Response {
    let listed = blocking(move || Ok(axon_runtime::mentions::index(&shared.root))).await;
    match listed {
        Ok(files) => axum::Json(files).into_response(),
        Err(e) => refuse(StatusCode::INTERNAL_SERVER_ERROR, &e),
    }
}

/// The session `id` is exactly one of this workspace's: its file is
/// `ID.jsonl` (what the store opens and removes by that id) and says it
/// belongs here. A copied or renamed file whose header names another id is
/// not taken for it.
fn owned(shared: &PanelState, id: &str) -> Result<(), String> {
    let plain = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    let listed = shared.store.list(Some(&shared.root)).map_err(|e| e.to_string())?;
    let named = |s: &axon_runtime::SessionSummary| {
        s.id == id && s.path.file_stem().is_some_and(|stem| stem == id)
    };
    if plain && listed.iter().any(named) {
        Ok(())
    } else {
        Err(format!("no session {id} in this workspace"))
    }
}

/// File work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work).await.map_err(|e| format!("the work failed: {e}"))?
}

#[cfg(test)]
mod tests {
    /// The page refuses an image before sending it by the same limit.
    #[test]
    fn the_page_knows_the_operation_limit() {
        let page = include_str!("../assets/images.js");
        let expected =
            format!("export const MAX_OP = {} * 1024 * 1024;", super::MAX_OP / (1024 * 1024));
        assert!(page.contains(&expected), "assets/images.js must say `{expected}`");
        assert_eq!(super::MAX_OP % (1024 * 1024), 0);
    }
}
