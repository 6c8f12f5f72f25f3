//! Starting one server in the background, and keeping its tool list live.
//!
//! Guarantees:
//! - An attempt is bounded by the server's `startup_timeout`. A failed
//!   attempt is retried once after [`RETRY_PAUSE`], unless it failed in a
//!   way another attempt cannot change (the command does not exist, its
//!   first line is not MCP, a setting is wrong); the error then reported
//!   carries the end of the server's stderr.
//! - Whatever an attempt started is killed before the next one, and when
//!   the task is aborted (shutdown) mid-attempt.
//! - Once ready, `notifications/tools/list_changed` lists the tools again;
//!   a burst of notifications costs one listing. Prompts and resources are
//!   never cached (each listing asks the server), so their notifications
//!   need nothing.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::client::{ListChanged, StartError, StderrTail, connect, tail_text};
use crate::server_state::{Connected, Server, ServerState};

/// The pause before a failed start is tried again.
pub(crate) const RETRY_PAUSE: Duration = Duration::from_secs(2);
/// Attempts at starting one server.
const ATTEMPTS: u32 = 2;

/// Starts `server`, then serves its notifications until it goes.
pub(crate) async fn run(
    server: Arc<Server>,
    workspace: &Path,
    http: Result<reqwest::Client, String>,
) {
    let began = Instant::now();
    let _stuck = StartGuard { server: &server, began };
    let mut attempt = 1;
    let notices = loop {
        match attempt_start(&server, workspace, &http, began).await {
            Ok(notices) => break notices,
            // A server that wants a login wants it the second time too.
            Err(failure) if failure.permanent || attempt == ATTEMPTS || server.login_refused() => {
                server.failed(failure.message, began.elapsed());
                return;
            }
            Err(_) => {
                attempt += 1;
                tokio::time::sleep(RETRY_PAUSE).await;
            }
        }
    };
    follow(&server, notices).await;
}

/// One attempt: connected and listed, or the failure with its stderr tail.
async fn attempt_start(
    server: &Server,
    workspace: &Path,
    http: &Result<reqwest::Client, String>,
    began: Instant,
) -> Result<mpsc::UnboundedReceiver<ListChanged>, StartError> {
    let config = &server.config;
    let stderr: StderrTail = Arc::new(Mutex::new(VecDeque::new()));
    let (notify, notices) = mpsc::unbounded_channel();
    let limit = config.startup_timeout;
    let started = tokio::time::timeout(limit, async {
        let connection = connect(
            config,
            workspace,
            http,
            Arc::clone(&stderr),
            &server.spawned,
            &server.client,
            notify,
        )
        .await?;
        let peer = connection.service.peer().clone();
        let offers_tools = peer.peer_info().is_none_or(|info| info.capabilities.tools.is_some());
        let tools = if offers_tools {
            peer.list_all_tools().await.map_err(|e| format!("listing its tools failed: {e}"))?
        } else {
            Vec::new()
        };
        Ok::<_, StartError>((connection, tools))
    })
    .await;
    let failure = match started {
        Ok(Ok((connection, tools))) => {
            let peer = connection.service.peer().clone();
            *server.service.lock().await = Some(connection.service);
            server.connected(Connected { peer, tools, startup: began.elapsed() });
            return Ok(notices);
        }
        Ok(Err(failure)) => failure,
        Err(_) => StartError::from(format!(
            "it did not finish starting within {:.1}s",
            limit.as_secs_f64()
        )),
    };
    // Whatever was started goes, and its last words are read to the end.
    let reader = server.spawned.lock().unwrap_or_else(PoisonError::into_inner).stderr_reader.take();
    server.kill();
    if let Some(reader) = reader {
        let _ = tokio::time::timeout(Duration::from_millis(300), reader).await;
    }
    let tail = tail_text(&stderr);
    let message = if tail.is_empty() {
        failure.message
    } else {
        format!("{}\nits stderr ended with:\n{tail}", failure.message)
    };
    Err(StartError { message, permanent: failure.permanent })
}

/// Acts on what a ready server announces, until its session ends.
async fn follow(server: &Server, mut notices: mpsc::UnboundedReceiver<ListChanged>) {
    while let Some(notice) = notices.recv().await {
        let mut tools_changed = notice == ListChanged::Tools;
        // A burst of notifications is one change.
        while let Ok(more) = notices.try_recv() {
            tools_changed |= more == ListChanged::Tools;
        }
        if tools_changed && server.state() == ServerState::Ready {
            // A server that cannot list them keeps the list it had; a
            // closed one is marked closed by the failed listing itself.
            let _ = server.relist_tools().await;
        }
    }
}

/// A start that panicked leaves its server failed, not `Connecting` for
/// good (whoever waits for it would wait forever). An aborted start (shut
/// down) is not a failure: shutdown says what became of it.
struct StartGuard<'a> {
    server: &'a Server,
    began: Instant,
}

impl Drop for StartGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() && self.server.state() == ServerState::Connecting {
            self.server.failed("its start failed unexpectedly".to_string(), self.began.elapsed());
        }
    }
}
