//! The page's `/rewind`: the open session's turns, and what rewinding to
//! before one of them would do, both read from the saved session by the
//! runtime's own functions (`Session::turns`, `axon_runtime::rewind::preview`,
//! `parse_turn_and_scope`).
//!
//! Guarantees: nothing here changes anything: the rewind itself is the
//! runtime's `Op::Rewind`, which the page sends through `POST /api/op` only
//! after the user confirmed the preview. Only the session open now is read
//! (the page names a turn, never a session). A bad turn number or scope is
//! refused with what was wrong and what is accepted, like the terminal
//! UI's `/rewind`.

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::api::blocking;
use crate::auth::refuse;
use crate::server::PanelState;

/// The most turns listed, newest first (as the terminal UI lists them).
const LISTED: usize = 20;

const NOTHING: &str = "Nothing to rewind: the session has no turns yet.";

/// `GET /api/rewind`: the open session's turns, newest first, at most
/// [`LISTED`]: `{"turns": [{"turn", "changed_files", "prompt"}], "total"}`.
pub async fn turns(State(shared): State<Arc<PanelState>>) -> Response {
    let Some(id) = shared.current() else {
        return axum::Json(json!({ "turns": [], "total": 0 })).into_response();
    };
    let listed = blocking(move || {
        let session =
            shared.store.open(&id).map_err(|e| format!("cannot read the session {id}: {e}"))?;
        let turns = session.turns();
        let total = turns.len();
        let shown: Vec<_> = turns
            .iter()
            .rev()
            .take(LISTED)
            .map(|t| {
                let prompt = t.prompt.lines().next().unwrap_or_default();
                json!({ "turn": t.turn, "changed_files": t.changed_files, "prompt": prompt })
            })
            .collect();
        Ok(json!({ "turns": shown, "total": total }))
    })
    .await;
    match listed {
        Ok(list) => axum::Json(list).into_response(),
        Err(e) => refuse(StatusCode::INTERNAL_SERVER_ERROR, &e),
    }
}

/// `GET /api/rewind/{turn}?scope=both|files|conversation`: what rewinding
/// the open session to before `turn` would do, as lines to show before
/// asking: `{"turn", "scope", "lines"}`. Nothing is changed.
pub async fn preview(
    State(shared): State<Arc<PanelState>>,
    Path(turn): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    // The page sends only `scope=WORD`, a plain word (no escapes to undo).
    let scope = query.as_deref().and_then(|q| q.split('&').find_map(|p| p.strip_prefix("scope=")));
    let (turn, scope) = match axon_runtime::rewind::parse_turn_and_scope(&turn, scope) {
        Ok(parsed) => parsed,
        Err(message) => return refuse(StatusCode::BAD_REQUEST, &message),
    };
    let Some(id) = shared.current() else {
        return refuse(StatusCode::CONFLICT, NOTHING);
    };
    let previewed = blocking(move || {
        let session =
            shared.store.open(&id).map_err(|e| format!("cannot read the session {id}: {e}"))?;
        if session.turns().is_empty() {
            return Err(NOTHING.to_string());
        }
        axon_runtime::rewind::preview(shared.store.data_dir(), &session, turn, scope)
            .map_err(|e| format!("Cannot rewind: {e:#}"))
    })
    .await;
    match previewed {
        Ok(lines) => {
            axum::Json(json!({ "turn": turn, "scope": scope, "lines": lines })).into_response()
        }
        Err(e) => refuse(StatusCode::CONFLICT, &e),
    }
}
