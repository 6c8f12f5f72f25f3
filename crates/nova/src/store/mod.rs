//! Where `nova-sync api` keeps executions and steps: one [`Store`] trait and
//! two implementations, SQLite (the default, one file) and PostgreSQL (shared
//! by several API processes). Both create their schema on start and record
//! its version, so a newer binary upgrades an older database in place; both
//! write times as the API's RFC 3339 text, so answers read the same whichever
//! store is behind them.

mod postgres;
mod sqlite;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::model::{Execution, ExecutionPatch, Step, StepPatch, StepStatus};

pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;

/// A store failure (the database is unreachable, refused a statement, …);
/// the API answers it with 500 `INTERNAL` and this message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// A step to add, its id already chosen by the API.
#[derive(Debug, Clone)]
pub struct NewStep {
    pub step_id: String,
    pub step_name: String,
    pub message: Option<String>,
    pub status: StepStatus,
}

/// What the API needs from a database. Writes that touch two rows (a step
/// and the execution it creates) are atomic; reads that touch two tables
/// see one snapshot.
pub trait Store: Send + Sync {
    /// Which kind of store this is, for logs: `sqlite` or `postgres`.
    fn kind(&self) -> &'static str;
    fn execution<'a>(&'a self, execution_id: &'a str) -> StoreFuture<'a, Option<Execution>>;
    /// Creates the execution when new, then sets the patch's fields that are present.
    fn patch_execution<'a>(
        &'a self,
        execution_id: &'a str,
        patch: ExecutionPatch,
    ) -> StoreFuture<'a, Execution>;
    /// The execution's steps, oldest first; `None` when the execution is unknown.
    fn steps<'a>(&'a self, execution_id: &'a str) -> StoreFuture<'a, Option<Vec<Step>>>;
    /// Adds the step, creating its execution when new.
    fn create_step<'a>(&'a self, execution_id: &'a str, step: NewStep) -> StoreFuture<'a, Step>;
    /// Sets the patch's fields that are present; `None` when no such step.
    fn patch_step<'a>(
        &'a self,
        execution_id: &'a str,
        step_id: &'a str,
        patch: StepPatch,
    ) -> StoreFuture<'a, Option<Step>>;
    /// The `limit` most recently updated executions, each with its steps.
    fn overview(&self, limit: u32) -> StoreFuture<'_, Vec<(Execution, Vec<Step>)>>;
}

/// The store behind the API, shared by its handlers.
#[derive(Clone)]
pub struct Db(pub Arc<dyn Store>);

impl Db {
    /// SQLite at `path` (created when missing); `:memory:` for a throwaway one.
    pub fn open(path: &std::path::Path) -> Result<Db, StoreError> {
        Ok(Db(Arc::new(SqliteStore::open(path)?)))
    }

    /// PostgreSQL at `url` (`postgres://user@host:port/db`), schema created when missing.
    pub async fn postgres(url: &str) -> Result<Db, StoreError> {
        Ok(Db(Arc::new(PostgresStore::connect(url).await?)))
    }

    /// PostgreSQL when `spec` is a `postgres://` or `postgresql://` URL,
    /// else the SQLite file at `spec`.
    pub async fn connect(spec: &str) -> Result<Db, StoreError> {
        if is_postgres_url(spec) {
            Db::postgres(spec).await
        } else {
            Db::open(std::path::Path::new(spec))
        }
    }

    pub fn store(&self) -> &dyn Store {
        self.0.as_ref()
    }
}

/// Whether `spec` names a PostgreSQL database rather than a SQLite file.
pub fn is_postgres_url(spec: &str) -> bool {
    spec.starts_with("postgres://") || spec.starts_with("postgresql://")
}

/// The columns every step query reads, in the order [`step_from_parts`] takes them.
const STEP_COLUMNS: &str =
    "step_id, execution_id, step_name, message, status, created_at, updated_at";

const EXECUTION_COLUMNS: &str = "execution_id, session_id, worktree_path, created_at, updated_at";

/// A status read back from the database; only the API writes it, so an
/// unknown one can only come from a hand edit and reads as running.
fn status_from(text: &str) -> StepStatus {
    StepStatus::parse(text).unwrap_or(StepStatus::Running)
}

/// `spec` with a PostgreSQL URL's password replaced by `***`, for messages.
pub fn redacted(spec: &str) -> String {
    if !is_postgres_url(spec) {
        return spec.to_string();
    }
    let Some((scheme, rest)) = spec.split_once("://") else { return spec.to_string() };
    // The last `@` ends the credentials: a password may hold one.
    let Some((credentials, host)) = rest.rsplit_once('@') else { return spec.to_string() };
    match credentials.split_once(':') {
        Some((user, _password)) => format!("{scheme}://{user}:***@{host}"),
        None => spec.to_string(),
    }
}
