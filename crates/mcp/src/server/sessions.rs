//! The HTTP server's sessions, bounded in time and number.
//!
//! `rmcp`'s [`LocalSessionManager`] keeps every session until its worker
//! stops, and a host that initializes and walks away leaves one behind each
//! time. [`BoundedSessions`] wraps it and guarantees:
//!
//! - A session unused for [`SessionLimits::idle`] is closed: a request for it
//!   then gets 404, as the spec asks of an expired session, and the host
//!   initializes again. A session is not idle while one of its requests is
//!   still being answered (a long tool call keeps it alive).
//! - At most [`SessionLimits::max_sessions`] sessions live at once: a new one
//!   evicts the session idle the longest, and is refused when every session
//!   is busy answering a request.
//! - [`BoundedSessions::live`] counts the sessions held, so the bound can be
//!   observed.
//! - Memory freed by closed sessions goes back to the OS on the next sweep
//!   ([`release_freed_memory`]): glibc otherwise keeps a flood's peak.
//! - A request dropped part-way (the client hung up; hyper drops its future
//!   at any await) leaks nothing: a slot reserved for a session being created
//!   is given back by a [`Reservation`] guard, and a session whose close did
//!   not finish is closed by the next sweep.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};

/// How long a session may sit unused before it is closed.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(30 * 60);
/// How many sessions may live at once.
pub const DEFAULT_MAX_SESSIONS: usize = 256;

/// The bounds on one server's sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    pub idle: Duration,
    pub max_sessions: usize,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits { idle: DEFAULT_SESSION_IDLE, max_sessions: DEFAULT_MAX_SESSIONS }
    }
}

/// Why a session could not be made or used.
#[derive(Debug, thiserror::Error)]
pub enum SessionsError {
    #[error(
        "this server already holds {0} sessions, all answering requests; retry when one \
         finishes, or start the server with a higher --max-sessions"
    )]
    Full(usize),
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// When a session was last used, and how many of its requests are still
/// being answered.
#[derive(Debug)]
struct Activity {
    last_used: Instant,
    open: usize,
}

#[derive(Debug, Default)]
struct Table {
    sessions: HashMap<SessionId, Activity>,
    /// Sessions being created: counted against the cap before they exist.
    reserved: usize,
    /// Sessions taken out of `sessions` and not yet closed in rmcp.
    closing: Vec<SessionId>,
}

type Served = Arc<Mutex<Table>>;

fn lock(table: &Served) -> MutexGuard<'_, Table> {
    table.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A [`SessionManager`] that closes idle sessions and caps their number.
#[derive(Debug)]
pub struct BoundedSessions {
    inner: LocalSessionManager,
    limits: SessionLimits,
    table: Served,
    /// Sessions were closed since memory was last handed back.
    closed_since_release: AtomicBool,
}

impl BoundedSessions {
    pub fn new(limits: SessionLimits) -> Self {
        let mut config = SessionConfig::default();
        // Idleness is judged here, where a request still being answered
        // counts as use; rmcp's own timer would end a long silent call.
        config.keep_alive = None;
        let mut inner = LocalSessionManager::default();
        inner.session_config = config;
        let limits = SessionLimits { max_sessions: limits.max_sessions.max(1), ..limits };
        BoundedSessions {
            inner,
            limits,
            table: Served::default(),
            closed_since_release: AtomicBool::new(false),
        }
    }

    pub fn limits(&self) -> SessionLimits {
        self.limits
    }

    /// Sessions held now (initializing ones included).
    pub fn live(&self) -> usize {
        lock(&self.table).sessions.len()
    }

    /// Whether `id` names a live session, without counting as its use.
    pub fn contains(&self, id: &str) -> bool {
        let now = Instant::now();
        let table = lock(&self.table);
        table.sessions.get(id).is_some_and(|activity| !self.expired(activity, now))
    }

    /// Closes every session idle past the limit, and those whose close was
    /// cut short. Also done on every request; calling it on a timer frees
    /// sessions when no request comes.
    pub async fn sweep(&self) {
        let now = Instant::now();
        {
            let mut table = lock(&self.table);
            let expired: Vec<SessionId> = table
                .sessions
                .iter()
                .filter(|(_, activity)| self.expired(activity, now))
                .map(|(id, _)| id.clone())
                .collect();
            for id in expired {
                table.sessions.remove(&id);
                table.closing.push(id);
            }
        }
        self.close_pending().await;
    }

    /// Closes the sessions waiting on `closing`, each by one caller only.
    async fn close_pending(&self) {
        loop {
            // Taken in its own statement: the lock must not be held across
            // the await below.
            let next = lock(&self.table).closing.pop();
            let Some(id) = next else { break };
            // A worker that already stopped has nothing left to free.
            let _ = self.close_inner(id).await;
        }
    }

    fn expired(&self, activity: &Activity, now: Instant) -> bool {
        activity.open == 0 && now.saturating_duration_since(activity.last_used) > self.limits.idle
    }

    /// Marks a request of `id` as being answered until the guard drops.
    fn open(&self, id: &SessionId) -> Option<OpenGuard> {
        let mut table = lock(&self.table);
        let activity = table.sessions.get_mut(id)?;
        activity.open += 1;
        activity.last_used = Instant::now();
        Some(OpenGuard { table: Arc::clone(&self.table), id: id.clone() })
    }

    fn touch(&self, id: &SessionId) {
        if let Some(activity) = lock(&self.table).sessions.get_mut(id) {
            activity.last_used = Instant::now();
        }
    }

    /// Makes room for one more session: evicts the one idle the longest when
    /// full (to `closing`), and reserves the slot until the returned guard
    /// commits or drops.
    fn reserve(&self) -> Result<Reservation, SessionsError> {
        let mut table = lock(&self.table);
        if table.sessions.len() + table.reserved >= self.limits.max_sessions {
            let oldest_idle = table
                .sessions
                .iter()
                .filter(|(_, activity)| activity.open == 0)
                .min_by_key(|(_, activity)| activity.last_used)
                .map(|(id, _)| id.clone());
            let Some(id) = oldest_idle else {
                return Err(SessionsError::Full(self.limits.max_sessions));
            };
            table.sessions.remove(&id);
            table.closing.push(id);
        }
        table.reserved += 1;
        Ok(Reservation { table: Arc::clone(&self.table), held: true })
    }

    /// Closes `id` in rmcp. Should the caller be dropped before that ends,
    /// `id` goes back on `closing` for the next sweep.
    async fn close_inner(&self, id: SessionId) -> Result<(), LocalSessionManagerError> {
        self.closed_since_release.store(true, Ordering::Relaxed);
        let mut pending = PendingClose { table: Arc::clone(&self.table), id: Some(id.clone()) };
        let closed = self.inner.close_session(&id).await;
        pending.id = None;
        closed
    }

    /// Whether sessions were closed since the last call.
    pub fn take_closed(&self) -> bool {
        self.closed_since_release.swap(false, Ordering::Relaxed)
    }
}

/// A slot counted against the cap for a session being created: given back
/// when dropped, unless [`Reservation::commit`] turned it into the session.
#[derive(Debug)]
struct Reservation {
    table: Served,
    held: bool,
}

impl Reservation {
    /// Trades the slot for the session `id`, busy until its initialize is
    /// answered, so a flood of new sessions cannot evict one mid-handshake.
    fn commit(mut self, id: SessionId) {
        let mut table = lock(&self.table);
        table.reserved = table.reserved.saturating_sub(1);
        table.sessions.insert(id, Activity { last_used: Instant::now(), open: 1 });
        self.held = false;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.held {
            let mut table = lock(&self.table);
            table.reserved = table.reserved.saturating_sub(1);
        }
    }
}

/// A session being closed in rmcp: back on `closing` if dropped before the
/// close finished.
#[derive(Debug)]
struct PendingClose {
    table: Served,
    id: Option<SessionId>,
}

impl Drop for PendingClose {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            lock(&self.table).closing.push(id);
        }
    }
}

/// Counts one request of a session as being answered while it lives.
#[derive(Debug)]
struct OpenGuard {
    table: Served,
    id: SessionId,
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        if let Some(activity) = lock(&self.table).sessions.get_mut(&self.id) {
            activity.open = activity.open.saturating_sub(1);
            activity.last_used = Instant::now();
        }
    }
}

/// A response stream that keeps its session busy until it is dropped.
fn guarded<S>(stream: S, guard: Option<OpenGuard>) -> impl Stream<Item = S::Item> + Send + Sync
where
    S: Stream + Send + Sync,
{
    stream.map(move |item| {
        let _busy = &guard;
        item
    })
}

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.sweep().await;
        let reservation = self.reserve()?;
        // The evicted session, if any, is freed before a new one is made.
        self.close_pending().await;
        let (id, transport) = self.inner.create_session().await?;
        reservation.commit(id.clone());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        // Takes over the count `create_session` started with.
        let _handshake = OpenGuard { table: Arc::clone(&self.table), id: id.clone() };
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.sweep().await;
        let known = {
            let mut table = lock(&self.table);
            match table.sessions.get_mut(id) {
                Some(activity) => {
                    activity.last_used = Instant::now();
                    true
                }
                None => false,
            }
        };
        Ok(known && self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        lock(&self.table).sessions.remove(id);
        Ok(self.close_inner(id.clone()).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let guard = self.open(id);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(guarded(stream, guard))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // Not counted as busy: a host keeps this stream open for as long as
        // it likes, and that alone must not hold a session forever.
        self.touch(id);
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // `index/request` resumes a request's stream; a bare index resumes
        // the standalone stream, which is not a request being answered.
        let guard = if last_event_id.contains('/') {
            self.open(id)
        } else {
            self.touch(id);
            None
        };
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(guarded(stream, guard))
    }
}

/// Hands memory that closed sessions freed back to the OS. glibc returns
/// freed memory only from the top of its heaps; after a flood of sessions
/// that then close, the process would otherwise stay at its peak size.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn release_freed_memory() {
    // SAFETY: malloc_trim takes no pointers; it only walks glibc's own arenas
    // under their locks and releases free pages, from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other allocators return memory on their own.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_freed_memory() {}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;

    use super::*;

    fn one_session() -> BoundedSessions {
        BoundedSessions::new(SessionLimits { idle: Duration::from_secs(3600), max_sessions: 1 })
    }

    /// Runs `create_session` until it waits on rmcp's own table, then drops
    /// it there, as hyper drops the request of a client that hung up.
    async fn create_dropped_mid_way(sessions: &BoundedSessions) {
        // rmcp's create and close take this lock for writing: held here,
        // they stop at that await.
        let _rmcp_busy = sessions.inner.sessions.read().await;
        assert!(sessions.create_session().now_or_never().is_none(), "the create must wait");
    }

    #[tokio::test]
    async fn a_create_dropped_mid_way_gives_its_slot_back() {
        let sessions = one_session();
        create_dropped_mid_way(&sessions).await;
        assert_eq!(lock(&sessions.table).reserved, 0, "the slot was given back");
        let (id, _transport) = sessions.create_session().await.unwrap();
        assert!(sessions.contains(&id), "a session can still be made at the cap");
        assert_eq!(lock(&sessions.table).reserved, 0);
    }

    #[tokio::test]
    async fn an_eviction_dropped_mid_close_is_finished_by_the_next_sweep() {
        let sessions = one_session();
        let (old, _old_transport) = sessions.create_session().await.unwrap();
        // Its handshake answered: idle, so the next session evicts it.
        drop(OpenGuard { table: Arc::clone(&sessions.table), id: old.clone() });
        create_dropped_mid_way(&sessions).await;
        assert_eq!(lock(&sessions.table).reserved, 0, "the slot was given back");
        assert!(!sessions.contains(&old), "evicted");
        assert!(sessions.inner.sessions.read().await.contains_key(&old), "its close was cut short");
        sessions.sweep().await;
        assert!(!sessions.inner.sessions.read().await.contains_key(&old), "closed by the sweep");
        let (new, _transport) = sessions.create_session().await.unwrap();
        assert!(sessions.contains(&new) && sessions.live() == 1);
    }
}
