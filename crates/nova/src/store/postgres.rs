//! The PostgreSQL store: a connection pool (deadpool) over tokio-postgres,
//! so several `nova-sync api` processes can serve one database. A write is
//! acknowledged only after PostgreSQL committed it; a step and the
//! execution it creates are one transaction; reads over two tables use one
//! repeatable-read snapshot. The schema version lives in `nova_schema`;
//! migrations run under an advisory lock, so processes starting together
//! apply each one exactly once.

use std::collections::HashMap;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::{IsolationLevel, NoTls, Row};

use super::{
    EXECUTION_COLUMNS, NewStep, STEP_COLUMNS, Store, StoreError, StoreFuture, status_from,
};
use crate::model::{Execution, ExecutionPatch, Step, StepPatch, StepStatus, now};

/// The schema, one entry per version.
const MIGRATIONS: &[&str] = &["CREATE TABLE executions (
       execution_id TEXT PRIMARY KEY, session_id TEXT, worktree_path TEXT,
       created_at TEXT NOT NULL, updated_at TEXT COLLATE \"C\" NOT NULL);
     CREATE TABLE steps (
       seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, step_id TEXT UNIQUE NOT NULL,
       execution_id TEXT NOT NULL, step_name TEXT NOT NULL, message TEXT,
       status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
     CREATE INDEX steps_by_execution ON steps (execution_id, seq);
     CREATE INDEX executions_by_update ON executions (updated_at);"];

/// Any number that is ours alone: the advisory lock migrations hold.
const MIGRATION_LOCK: i64 = 0x6e6f_7661_5f73_796e; // "nova_syn"

/// Connections per API process.
const POOL_SIZE: usize = 16;

/// How long a request waits for a connection (or to open one) before it
/// fails with the pool's message instead of hanging.
const WAIT: Duration = Duration::from_secs(10);

pub struct PostgresStore {
    pool: Pool,
}

fn failed(e: tokio_postgres::Error) -> StoreError {
    match e.as_db_error() {
        Some(db) => StoreError(format!("PostgreSQL: {}", db.message())),
        None => StoreError(format!("PostgreSQL: {e}")),
    }
}

fn pool_failed(e: deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => failed(e),
        other => StoreError(format!("PostgreSQL connection pool: {other}")),
    }
}

impl PostgresStore {
    /// Connects to `url` and brings its schema up to date.
    pub async fn connect(url: &str) -> Result<PostgresStore, StoreError> {
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e| StoreError(format!("invalid PostgreSQL URL: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(WAIT);
        }
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(WAIT))
            .create_timeout(Some(WAIT))
            .build()
            .map_err(|e| StoreError(format!("PostgreSQL connection pool: {e}")))?;
        let store = PostgresStore { pool };
        store.migrate().await?;
        Ok(store)
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        let mut client = self.pool.get().await.map_err(pool_failed)?;
        let tx = client.transaction().await.map_err(failed)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await.map_err(failed)?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS nova_schema (version INTEGER NOT NULL)")
            .await
            .map_err(failed)?;
        let version: i32 =
            match tx.query_opt("SELECT version FROM nova_schema", &[]).await.map_err(failed)? {
                Some(row) => row.try_get(0).map_err(failed)?,
                None => {
                    tx.execute("INSERT INTO nova_schema (version) VALUES (0)", &[])
                        .await
                        .map_err(failed)?;
                    0
                }
            };
        let known = i32::try_from(MIGRATIONS.len()).unwrap_or(i32::MAX);
        if version > known {
            return Err(StoreError(format!(
                "the database's schema is version {version}, newer than this nova-sync knows ({known}): upgrade nova-sync"
            )));
        }
        for (index, sql) in
            MIGRATIONS.iter().enumerate().skip(usize::try_from(version).unwrap_or(0))
        {
            tx.batch_execute(sql).await.map_err(failed)?;
            let next = i32::try_from(index + 1).unwrap_or(i32::MAX);
            tx.execute("UPDATE nova_schema SET version = $1", &[&next]).await.map_err(failed)?;
        }
        tx.commit().await.map_err(failed)
    }
}

fn execution_from(row: &Row) -> Result<Execution, StoreError> {
    Ok(Execution {
        execution_id: row.try_get(0).map_err(failed)?,
        session_id: row.try_get(1).map_err(failed)?,
        worktree_path: row.try_get(2).map_err(failed)?,
        created_at: row.try_get(3).map_err(failed)?,
        updated_at: row.try_get(4).map_err(failed)?,
    })
}

fn step_from(row: &Row) -> Result<Step, StoreError> {
    let status: String = row.try_get(4).map_err(failed)?;
    Ok(Step {
        step_id: row.try_get(0).map_err(failed)?,
        execution_id: row.try_get(1).map_err(failed)?,
        step_name: row.try_get(2).map_err(failed)?,
        message: row.try_get(3).map_err(failed)?,
        status: status_from(&status),
        created_at: row.try_get(5).map_err(failed)?,
        updated_at: row.try_get(6).map_err(failed)?,
    })
}

impl Store for PostgresStore {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    fn execution<'a>(&'a self, execution_id: &'a str) -> StoreFuture<'a, Option<Execution>> {
        Box::pin(async move {
            let client = self.pool.get().await.map_err(pool_failed)?;
            let query = client
                .prepare_cached(&format!(
                    "SELECT {EXECUTION_COLUMNS} FROM executions WHERE execution_id = $1"
                ))
                .await
                .map_err(failed)?;
            let row = client.query_opt(&query, &[&execution_id]).await.map_err(failed)?;
            row.as_ref().map(execution_from).transpose()
        })
    }

    fn patch_execution<'a>(
        &'a self,
        execution_id: &'a str,
        patch: ExecutionPatch,
    ) -> StoreFuture<'a, Execution> {
        Box::pin(async move {
            let client = self.pool.get().await.map_err(pool_failed)?;
            // One statement: creating and updating cannot disagree.
            let query = client
                .prepare_cached(&format!(
                    "INSERT INTO executions (execution_id, session_id, worktree_path, created_at, updated_at)
                     VALUES ($1, $2, $3, $4, $4)
                     ON CONFLICT (execution_id) DO UPDATE SET
                       session_id = COALESCE(EXCLUDED.session_id, executions.session_id),
                       worktree_path = COALESCE(EXCLUDED.worktree_path, executions.worktree_path),
                       updated_at = EXCLUDED.updated_at
                     RETURNING {EXECUTION_COLUMNS}"
                ))
                .await
                .map_err(failed)?;
            let row = client
                .query_one(
                    &query,
                    &[&execution_id, &patch.session_id, &patch.worktree_path, &now()],
                )
                .await
                .map_err(failed)?;
            execution_from(&row)
        })
    }

    fn steps<'a>(&'a self, execution_id: &'a str) -> StoreFuture<'a, Option<Vec<Step>>> {
        Box::pin(async move {
            let mut client = self.pool.get().await.map_err(pool_failed)?;
            let tx = client
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await
                .map_err(failed)?;
            let exists = tx
                .query_opt("SELECT 1 FROM executions WHERE execution_id = $1", &[&execution_id])
                .await
                .map_err(failed)?;
            if exists.is_none() {
                return Ok(None);
            }
            let query = tx
                .prepare_cached(&format!(
                    "SELECT {STEP_COLUMNS} FROM steps WHERE execution_id = $1 ORDER BY seq"
                ))
                .await
                .map_err(failed)?;
            let rows = tx.query(&query, &[&execution_id]).await.map_err(failed)?;
            let steps = rows.iter().map(step_from).collect::<Result<Vec<_>, _>>()?;
            tx.commit().await.map_err(failed)?;
            Ok(Some(steps))
        })
    }

    fn create_step<'a>(&'a self, execution_id: &'a str, step: NewStep) -> StoreFuture<'a, Step> {
        Box::pin(async move {
            let mut client = self.pool.get().await.map_err(pool_failed)?;
            let tx = client.transaction().await.map_err(failed)?;
            let time = now();
            let ensure = tx
                .prepare_cached(
                    "INSERT INTO executions (execution_id, created_at, updated_at) VALUES ($1, $2, $2)
                     ON CONFLICT (execution_id) DO NOTHING",
                )
                .await
                .map_err(failed)?;
            tx.execute(&ensure, &[&execution_id, &time]).await.map_err(failed)?;
            let insert = tx
                .prepare_cached(&format!(
                    "INSERT INTO steps (step_id, execution_id, step_name, message, status, created_at, updated_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING {STEP_COLUMNS}"
                ))
                .await
                .map_err(failed)?;
            let row = tx
                .query_one(
                    &insert,
                    &[
                        &step.step_id,
                        &execution_id,
                        &step.step_name,
                        &step.message,
                        &step.status.as_str(),
                        &time,
                    ],
                )
                .await
                .map_err(failed)?;
            let created = step_from(&row)?;
            tx.commit().await.map_err(failed)?;
            Ok(created)
        })
    }

    fn patch_step<'a>(
        &'a self,
        execution_id: &'a str,
        step_id: &'a str,
        patch: StepPatch,
    ) -> StoreFuture<'a, Option<Step>> {
        Box::pin(async move {
            let client = self.pool.get().await.map_err(pool_failed)?;
            let query = client
                .prepare_cached(&format!(
                    "UPDATE steps SET status = COALESCE($3, status), message = COALESCE($4, message), updated_at = $5
                     WHERE execution_id = $1 AND step_id = $2 RETURNING {STEP_COLUMNS}"
                ))
                .await
                .map_err(failed)?;
            let status = patch.status.map(StepStatus::as_str);
            let row = client
                .query_opt(&query, &[&execution_id, &step_id, &status, &patch.message, &now()])
                .await
                .map_err(failed)?;
            row.as_ref().map(step_from).transpose()
        })
    }

    fn overview(&self, limit: u32) -> StoreFuture<'_, Vec<(Execution, Vec<Step>)>> {
        Box::pin(async move {
            let mut client = self.pool.get().await.map_err(pool_failed)?;
            let tx = client
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await
                .map_err(failed)?;
            let rows = tx
                .query(
                    &format!(
                        "SELECT {EXECUTION_COLUMNS} FROM executions ORDER BY updated_at DESC LIMIT $1"
                    ),
                    &[&i64::from(limit)],
                )
                .await
                .map_err(failed)?;
            let executions = rows.iter().map(execution_from).collect::<Result<Vec<_>, _>>()?;
            let ids: Vec<&str> = executions.iter().map(|e| e.execution_id.as_str()).collect();
            let rows = tx
                .query(
                    &format!(
                        "SELECT {STEP_COLUMNS} FROM steps WHERE execution_id = ANY($1) ORDER BY seq"
                    ),
                    &[&ids],
                )
                .await
                .map_err(failed)?;
            tx.commit().await.map_err(failed)?;
            let mut by_execution: HashMap<String, Vec<Step>> = HashMap::new();
            for row in &rows {
                let step = step_from(row)?;
                by_execution.entry(step.execution_id.clone()).or_default().push(step);
            }
            Ok(executions
                .into_iter()
                .map(|e| {
                    let steps = by_execution.remove(&e.execution_id).unwrap_or_default();
                    (e, steps)
                })
                .collect())
        })
    }
}
