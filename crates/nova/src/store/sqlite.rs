//! The SQLite store: one file (or memory), one connection behind a mutex,
//! so every request sees the writes acknowledged before it. The schema
//! version is SQLite's `user_version`; each migration runs once, in order,
//! in one transaction with the version bump.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use rusqlite::{Connection, OptionalExtension, params};

use super::{
    EXECUTION_COLUMNS, NewStep, STEP_COLUMNS, Store, StoreError, StoreFuture, status_from,
};
use crate::model::{Execution, ExecutionPatch, Step, StepPatch, StepStatus, now};

/// The schema, one entry per version. Version 1 uses `IF NOT EXISTS` so a
/// database made before versioning (same tables, `user_version` 0) is
/// adopted as it is.
const MIGRATIONS: &[&str] = &["CREATE TABLE IF NOT EXISTS executions (
       execution_id TEXT PRIMARY KEY, session_id TEXT, worktree_path TEXT,
       created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
     CREATE TABLE IF NOT EXISTS steps (
       seq INTEGER PRIMARY KEY AUTOINCREMENT, step_id TEXT UNIQUE NOT NULL,
       execution_id TEXT NOT NULL, step_name TEXT NOT NULL, message TEXT,
       status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
     CREATE INDEX IF NOT EXISTS steps_by_execution ON steps (execution_id, seq);"];

pub struct SqliteStore(Mutex<Connection>);

fn failed(e: rusqlite::Error) -> StoreError {
    StoreError(format!("SQLite: {e}"))
}

impl SqliteStore {
    /// Opens (or creates) the database at `path`; `:memory:` for a throwaway one.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        let mut conn = if path.as_os_str() == ":memory:" {
            Connection::open_in_memory()
        } else {
            Connection::open(path)
        }
        .map_err(|e| StoreError(format!("cannot open {}: {e}", path.display())))?;
        conn.execute_batch("PRAGMA journal_mode = WAL;").map_err(failed)?;
        migrate(&mut conn).map_err(failed)?;
        Ok(SqliteStore(Mutex::new(conn)))
    }

    fn with<T>(
        &self,
        work: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let mut conn = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        work(&mut conn).map_err(failed)
    }
}

fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let version: usize = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", index + 1))?;
        tx.commit()?;
    }
    Ok(())
}

fn execution_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Execution> {
    Ok(Execution {
        execution_id: r.get(0)?,
        session_id: r.get(1)?,
        worktree_path: r.get(2)?,
        created_at: r.get(3)?,
        updated_at: r.get(4)?,
    })
}

fn step_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Step> {
    let status: String = r.get(4)?;
    Ok(Step {
        step_id: r.get(0)?,
        execution_id: r.get(1)?,
        step_name: r.get(2)?,
        message: r.get(3)?,
        status: status_from(&status),
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
    })
}

fn read_execution(conn: &Connection, id: &str) -> rusqlite::Result<Option<Execution>> {
    conn.query_row(
        &format!("SELECT {EXECUTION_COLUMNS} FROM executions WHERE execution_id = ?1"),
        params![id],
        execution_from,
    )
    .optional()
}

fn read_steps(conn: &Connection, id: &str) -> rusqlite::Result<Vec<Step>> {
    let mut query = conn.prepare_cached(&format!(
        "SELECT {STEP_COLUMNS} FROM steps WHERE execution_id = ?1 ORDER BY seq"
    ))?;
    query.query_map(params![id], step_from)?.collect()
}

fn read_step(conn: &Connection, step_id: &str) -> rusqlite::Result<Step> {
    conn.query_row(
        &format!("SELECT {STEP_COLUMNS} FROM steps WHERE step_id = ?1"),
        params![step_id],
        step_from,
    )
}

fn ensure_execution(conn: &Connection, id: &str, time: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR IGNORE INTO executions (execution_id, created_at, updated_at) VALUES (?1, ?2, ?2)",
        params![id, time],
    )?;
    Ok(())
}

/// The answer now, as a future: SQLite calls are short and the connection
/// is held only for their length.
fn ready<'a, T: Send + 'a>(result: Result<T, StoreError>) -> StoreFuture<'a, T> {
    Box::pin(std::future::ready(result))
}

impl Store for SqliteStore {
    fn kind(&self) -> &'static str {
        "sqlite"
    }

    fn execution<'a>(&'a self, execution_id: &'a str) -> StoreFuture<'a, Option<Execution>> {
        ready(self.with(|c| read_execution(c, execution_id)))
    }

    fn patch_execution<'a>(
        &'a self,
        execution_id: &'a str,
        patch: ExecutionPatch,
    ) -> StoreFuture<'a, Execution> {
        ready(self.with(|c| {
            let tx = c.transaction()?;
            let time = now();
            ensure_execution(&tx, execution_id, &time)?;
            tx.execute(
                "UPDATE executions SET session_id = COALESCE(?2, session_id), worktree_path = COALESCE(?3, worktree_path), updated_at = ?4 WHERE execution_id = ?1",
                params![execution_id, patch.session_id, patch.worktree_path, time],
            )?;
            let execution = read_execution(&tx, execution_id)?;
            tx.commit()?;
            execution.ok_or(rusqlite::Error::QueryReturnedNoRows)
        }))
    }

    fn steps<'a>(&'a self, execution_id: &'a str) -> StoreFuture<'a, Option<Vec<Step>>> {
        ready(self.with(|c| {
            if read_execution(c, execution_id)?.is_none() {
                return Ok(None);
            }
            read_steps(c, execution_id).map(Some)
        }))
    }

    fn create_step<'a>(&'a self, execution_id: &'a str, step: NewStep) -> StoreFuture<'a, Step> {
        ready(self.with(|c| {
            let tx = c.transaction()?;
            let time = now();
            ensure_execution(&tx, execution_id, &time)?;
            tx.execute(
                "INSERT INTO steps (step_id, execution_id, step_name, message, status, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                params![step.step_id, execution_id, step.step_name, step.message, step.status.as_str(), time],
            )?;
            let created = read_step(&tx, &step.step_id)?;
            tx.commit()?;
            Ok(created)
        }))
    }

    fn patch_step<'a>(
        &'a self,
        execution_id: &'a str,
        step_id: &'a str,
        patch: StepPatch,
    ) -> StoreFuture<'a, Option<Step>> {
        ready(self.with(|c| {
            let changed = c.execute(
                "UPDATE steps SET status = COALESCE(?3, status), message = COALESCE(?4, message), updated_at = ?5 WHERE execution_id = ?1 AND step_id = ?2",
                params![execution_id, step_id, patch.status.map(StepStatus::as_str), patch.message, now()],
            )?;
            if changed == 0 {
                return Ok(None);
            }
            read_step(c, step_id).map(Some)
        }))
    }

    fn overview(&self, limit: u32) -> StoreFuture<'_, Vec<(Execution, Vec<Step>)>> {
        ready(self.with(|c| {
            let mut query = c.prepare(&format!(
                "SELECT {EXECUTION_COLUMNS} FROM executions ORDER BY updated_at DESC LIMIT ?1"
            ))?;
            let executions =
                query.query_map(params![limit], execution_from)?.collect::<Result<Vec<_>, _>>()?;
            executions
                .into_iter()
                .map(|e| read_steps(c, &e.execution_id).map(|steps| (e, steps)))
                .collect()
        }))
    }
}
