//! `nova-sync api`: the Task Manager API of `docs/openapi.yaml`, on SQLite
//! or PostgreSQL ([`crate::store`]), with a small self-refreshing page at
//! `/` listing executions and steps.
//!
//! Every error is `{error, error_code}` with a 4xx status: a malformed body
//! or an invalid field is 400 `INVALID_REQUEST` (a NUL byte in any id or
//! text field is one, named in the message), a body over [`BODY_LIMIT`]
//! bytes is 413 `PAYLOAD_TOO_LARGE`, an unknown execution or step is 404
//! `NOT_FOUND`; only a database failure is 500 `INTERNAL`.

use axum::Json;
use axum::Router;
use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::model::{ErrorBody, Execution, ExecutionPatch, Step, StepCreate, StepPatch, StepStatus};
pub use crate::store::Db;
use crate::store::{NewStep, StoreError};

/// The largest request body accepted, in bytes.
pub const BODY_LIMIT: usize = 1024 * 1024;

/// The API's own description, served at `/api/openapi.yaml`.
pub const OPENAPI: &str = include_str!("../docs/openapi.yaml");

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

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        ApiError::internal(e.0)
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
/// text there, so what was stored would not be what is read back, and
/// PostgreSQL refuses it outright.
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
    db.store()
        .execution(&id)
        .await?
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
    Ok(Json(db.store().patch_execution(&id, patch).await?))
}

async fn list_steps(
    State(db): State<Db>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Vec<Step>>, ApiError> {
    no_nul("execution_id", Some(&id))?;
    db.store()
        .steps(&id)
        .await?
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
    let step = NewStep {
        step_id: format!("step-{:012x}", fastrand::u64(..) & 0xffff_ffff_ffff),
        step_name: create.step_name,
        message: create.message,
        status: create.status.unwrap_or(StepStatus::Running),
    };
    let step = db.store().create_step(&id, step).await?;
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
    db.store()
        .patch_step(&id, &step_id, patch)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("Step {step_id} not found")))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Executions, newest first, each with its steps coloured by status.
async fn page(State(db): State<Db>) -> Result<Html<String>, ApiError> {
    let rows = db.store().overview(50).await?;
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
