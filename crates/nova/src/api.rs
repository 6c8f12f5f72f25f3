//! `nova-sync api`: the Task Manager API of `docs/openapi.yaml`, on SQLite,
//! with a small self-refreshing page at `/` listing executions and steps.
//!
//! Every error is `{error, error_code}` with a 4xx status: a malformed body
//! or an invalid field is 400 `INVALID_REQUEST` (a NUL byte in any id or
//! text field is one, named in the message), a body over [`BODY_LIMIT`]
//! bytes is 413 `PAYLOAD_TOO_LARGE`, an unknown execution or step is 404
//! `NOT_FOUND`; only a database failure is 500 `INTERNAL`.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Json;
use axum::Router;
use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

use crate::model::{
    ErrorBody, Execution, ExecutionPatch, Step, StepCreate, StepPatch, StepStatus, now,
};

/// The largest request body accepted, in bytes.
pub const BODY_LIMIT: usize = 1024 * 1024;

/// The API's own description, served at `/api/openapi.yaml`.
pub const OPENAPI: &str = include_str!("../docs/openapi.yaml");

/// The database behind the API.
#[derive(Clone)]
pub struct Db(Arc<Mutex<Connection>>);

impl Db {
    /// Opens (or creates) the database at `path`; `:memory:` for a throwaway one.
    pub fn open(path: &Path) -> rusqlite::Result<Db> {
        let conn = if path.as_os_str() == ":memory:" {
            Connection::open_in_memory()?
        } else {
            Connection::open(path)?
        };
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE IF NOT EXISTS executions (
               execution_id TEXT PRIMARY KEY, session_id TEXT, worktree_path TEXT,
               created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS steps (
               seq INTEGER PRIMARY KEY AUTOINCREMENT, step_id TEXT UNIQUE NOT NULL,
               execution_id TEXT NOT NULL, step_name TEXT NOT NULL, message TEXT,
               status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
             CREATE INDEX IF NOT EXISTS steps_by_execution ON steps (execution_id, seq);",
        )?;
        Ok(Db(Arc::new(Mutex::new(conn))))
    }

    fn with<T>(
        &self,
        work: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, ApiError> {
        let conn = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        work(&conn).map_err(|e| ApiError::internal(e.to_string()))
    }
}

pub struct ApiError(StatusCode, ErrorBody);

impl ApiError {
    fn new(status: StatusCode, code: &str, error: impl Into<String>) -> Self {
        ApiError(status, ErrorBody { error: error.into(), error_code: code.to_string() })
    }
    fn invalid(error: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_REQUEST", error)
    }
    fn not_found(error: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "NOT_FOUND", error)
    }
    fn internal(error: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", error)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(self.1)).into_response()
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return Self::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "PAYLOAD_TOO_LARGE",
                format!("the request body is larger than {BODY_LIMIT} bytes"),
            );
        }
        ApiError::invalid(rejection.body_text())
    }
}

/// Refuses a NUL byte in `value`: SQLite and most readers would cut the
/// text there, so what was stored would not be what is read back.
fn no_nul(field: &str, value: Option<&str>) -> Result<(), ApiError> {
    match value {
        Some(text) if text.contains('\0') => {
            Err(ApiError::invalid(format!("{field} must not contain a NUL byte")))
        }
        _ => Ok(()),
    }
}

/// A request body that must be a JSON object of `T`'s fields (serde would
/// also read a struct from an array, which the API does not accept).
fn object_body<T: serde::de::DeserializeOwned>(
    body: Result<Json<serde_json::Value>, JsonRejection>,
) -> Result<T, ApiError> {
    let Json(value) = body?;
    if !value.is_object() {
        return Err(ApiError::invalid("the request body must be a JSON object"));
    }
    serde_json::from_value(value)
        .map_err(|e| ApiError::invalid(format!("invalid request body: {e}")))
}

/// The API's routes over `db`.
pub fn router(db: Db) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/api/health", get(|| async { Json(json!({"status": "ok"})) }))
        .route(
            "/api/openapi.yaml",
            get(|| async { ([("content-type", "application/yaml")], OPENAPI) }),
        )
        .route("/api/executions/{execution_id}", get(get_execution).patch(patch_execution))
        .route("/api/executions/{execution_id}/steps", get(list_steps).post(create_step))
        .route("/api/executions/{execution_id}/steps/{step_id}", axum::routing::patch(patch_step))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(db)
}

fn read_execution(conn: &Connection, id: &str) -> rusqlite::Result<Option<Execution>> {
    conn.query_row(
        "SELECT execution_id, session_id, worktree_path, created_at, updated_at FROM executions WHERE execution_id = ?1",
        params![id],
        |r| Ok(Execution { execution_id: r.get(0)?, session_id: r.get(1)?, worktree_path: r.get(2)?, created_at: r.get(3)?, updated_at: r.get(4)? }),
    )
    .optional()
}

fn step_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Step> {
    let status: String = r.get(4)?;
    Ok(Step {
        step_id: r.get(0)?,
        execution_id: r.get(1)?,
        step_name: r.get(2)?,
        message: r.get(3)?,
        status: StepStatus::parse(&status).unwrap_or(StepStatus::Running),
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
    })
}

const STEP_COLUMNS: &str =
    "step_id, execution_id, step_name, message, status, created_at, updated_at";

fn ensure_execution(conn: &Connection, id: &str) -> rusqlite::Result<()> {
    let time = now();
    conn.execute(
        "INSERT OR IGNORE INTO executions (execution_id, created_at, updated_at) VALUES (?1, ?2, ?2)",
        params![id, time],
    )?;
    Ok(())
}

fn check_id(id: &str, what: &str) -> Result<(), ApiError> {
    no_nul(what, Some(id))?;
    if id.trim().is_empty() {
        return Err(ApiError::invalid(format!("{what} is empty")));
    }
    Ok(())
}

async fn get_execution(
    State(db): State<Db>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Execution>, ApiError> {
    no_nul("execution_id", Some(&id))?;
    db.with(|c| read_execution(c, &id))?
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("Execution {id} not found")))
}

async fn patch_execution(
    State(db): State<Db>,
    UrlPath(id): UrlPath<String>,
    body: Result<Json<serde_json::Value>, JsonRejection>,
) -> Result<Json<Execution>, ApiError> {
    check_id(&id, "execution_id")?;
    let patch: ExecutionPatch = object_body(body)?;
    no_nul("session_id", patch.session_id.as_deref())?;
    no_nul("worktree_path", patch.worktree_path.as_deref())?;
    let execution = db.with(|c| {
        ensure_execution(c, &id)?;
        c.execute(
            "UPDATE executions SET session_id = COALESCE(?2, session_id), worktree_path = COALESCE(?3, worktree_path), updated_at = ?4 WHERE execution_id = ?1",
            params![id, patch.session_id, patch.worktree_path, now()],
        )?;
        read_execution(c, &id)
    })?;
    execution.map(Json).ok_or_else(|| ApiError::internal("the execution vanished"))
}

async fn list_steps(
    State(db): State<Db>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Vec<Step>>, ApiError> {
    no_nul("execution_id", Some(&id))?;
    db.with(|c| {
        if read_execution(c, &id)?.is_none() {
            return Ok(None);
        }
        let mut query = c.prepare(&format!(
            "SELECT {STEP_COLUMNS} FROM steps WHERE execution_id = ?1 ORDER BY seq"
        ))?;
        let steps =
            query.query_map(params![id], step_from)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Some(steps))
    })?
    .map(Json)
    .ok_or_else(|| ApiError::not_found(format!("Execution {id} not found")))
}

async fn create_step(
    State(db): State<Db>,
    UrlPath(id): UrlPath<String>,
    body: Result<Json<serde_json::Value>, JsonRejection>,
) -> Result<(StatusCode, Json<Step>), ApiError> {
    check_id(&id, "execution_id")?;
    let create: StepCreate = object_body(body)?;
    no_nul("step_name", Some(&create.step_name))?;
    no_nul("message", create.message.as_deref())?;
    if create.step_name.trim().is_empty() {
        return Err(ApiError::invalid("step_name is empty"));
    }
    let step_id = format!("step-{:012x}", fastrand::u64(..) & 0xffff_ffff_ffff);
    let status = create.status.unwrap_or(StepStatus::Running);
    let step = db.with(|c| {
        ensure_execution(c, &id)?;
        let time = now();
        c.execute(
            "INSERT INTO steps (step_id, execution_id, step_name, message, status, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
            params![step_id, id, create.step_name, create.message, status.as_str(), time],
        )?;
        c.query_row(&format!("SELECT {STEP_COLUMNS} FROM steps WHERE step_id = ?1"), params![step_id], step_from)
    })?;
    Ok((StatusCode::CREATED, Json(step)))
}

async fn patch_step(
    State(db): State<Db>,
    UrlPath((id, step_id)): UrlPath<(String, String)>,
    body: Result<Json<serde_json::Value>, JsonRejection>,
) -> Result<Json<Step>, ApiError> {
    no_nul("execution_id", Some(&id))?;
    no_nul("step_id", Some(&step_id))?;
    let patch: StepPatch = object_body(body)?;
    no_nul("message", patch.message.as_deref())?;
    let step = db.with(|c| {
        let changed = c.execute(
            "UPDATE steps SET status = COALESCE(?3, status), message = COALESCE(?4, message), updated_at = ?5 WHERE execution_id = ?1 AND step_id = ?2",
            params![id, step_id, patch.status.map(StepStatus::as_str), patch.message, now()],
        )?;
        if changed == 0 {
            return Ok(None);
        }
        c.query_row(&format!("SELECT {STEP_COLUMNS} FROM steps WHERE step_id = ?1"), params![step_id], step_from).map(Some)
    })?;
    step.map(Json).ok_or_else(|| ApiError::not_found(format!("Step {step_id} not found")))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Executions, newest first, each with its steps coloured by status.
async fn page(State(db): State<Db>) -> Result<Html<String>, ApiError> {
    let rows = db.with(|c| {
        let mut executions = c.prepare("SELECT execution_id, session_id, worktree_path, created_at, updated_at FROM executions ORDER BY updated_at DESC LIMIT 50")?;
        let executions = executions
            .query_map([], |r| Ok(Execution { execution_id: r.get(0)?, session_id: r.get(1)?, worktree_path: r.get(2)?, created_at: r.get(3)?, updated_at: r.get(4)? }))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut out = Vec::new();
        let mut steps = c.prepare(&format!("SELECT {STEP_COLUMNS} FROM steps WHERE execution_id = ?1 ORDER BY seq"))?;
        for execution in executions {
            let list = steps.query_map(params![execution.execution_id], step_from)?.collect::<rusqlite::Result<Vec<_>>>()?;
            out.push((execution, list));
        }
        Ok(out)
    })?;
    let mut html = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"3\">\
         <title>nova task manager</title><style>body{font-family:system-ui,sans-serif;margin:2em}\
         .running{color:#b36b00}.completed{color:#1a7f37}.failed{color:#cf222e}.skipped{color:#6e7781}\
         li{margin:.2em 0}</style></head><body><h1>Executions</h1>",
    );
    if rows.is_empty() {
        html.push_str("<p>No executions yet.</p>");
    }
    for (execution, steps) in rows {
        html.push_str(&format!(
            "<h2>{}</h2><p>session {} · updated {}</p><ul>",
            escape(&execution.execution_id),
            escape(execution.session_id.as_deref().unwrap_or("—")),
            escape(&execution.updated_at)
        ));
        for step in steps {
            let status = step.status.as_str();
            html.push_str(&format!(
                "<li class=\"{status}\"><b>{}</b> [{status}] {}</li>",
                escape(&step.step_name),
                escape(step.message.as_deref().unwrap_or(""))
            ));
        }
        html.push_str("</ul>");
    }
    html.push_str("</body></html>");
    Ok(Html(html))
}
