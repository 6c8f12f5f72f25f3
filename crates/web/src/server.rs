//! The server: one runtime session, the log of its events, and the routes
//! the page uses, all behind the guard.
//!
//! The session is opened before the server answers anything, so a missing
//! key or a bad config is an error at start, not a broken page. One task
//! moves the session's events into the log; pages read the log. When the
//! server stops, event streams end, the session shuts down (its MCP servers
//! and commands stopped) and its file is synced.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};
use axon_guard::Hosts;
use axon_protocol::AgentEvent;
use axon_runtime::{Events, Session, SessionConfig, SessionHandle, SessionStore};
use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::auth::{Gate, guard, refuse};
use crate::log::EventLog;
use crate::{Options, api, assets, rewind, stream};

/// What every request handler shares.
pub struct PanelState {
    pub log: EventLog,
    pub session: SessionHandle,
    pub store: SessionStore,
    /// The workspace's root, as sessions record it.
    pub root: PathBuf,
    /// The id of the session shown now, once it has one.
    current: Mutex<Option<String>>,
    stop: CancellationToken,
}

impl PanelState {
    pub fn current(&self) -> Option<String> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// A bound server with its session open, not yet serving.
pub struct WebServer {
    listener: TcpListener,
    addr: SocketAddr,
    gate: Arc<Gate>,
    shared: Arc<PanelState>,
    session: Session,
    pump: JoinHandle<()>,
}

impl WebServer {
    /// Binds `options.listen`, then opens the session `config` describes.
    pub async fn start(config: SessionConfig, options: Options) -> Result<WebServer> {
        axon_guard::check_exposure(options.listen, options.token.as_deref())?;
        if let Some(token) = &options.token
            && !token.chars().all(|c| c.is_ascii_alphanumeric() || "._~-".contains(c))
        {
            // It travels in a URL and a cookie, neither encoded.
            anyhow::bail!(
                "the token may hold only letters, digits and . _ ~ - (e.g. `openssl rand -hex 32`)"
            );
        }
        let token = match options.token {
            Some(token) => token,
            None => axon_guard::new_token().context("cannot make a token")?,
        };
        let listener = TcpListener::bind(options.listen)
            .await
            .with_context(|| format!("cannot listen on {}", options.listen))?;
        let addr = listener.local_addr().context("cannot read the bound address")?;
        // The prefix is as unguessable as a token: only the printed link
        // knows it, so the cookie bound to it reaches no other local server.
        let prefix = axon_guard::new_token().context("cannot make the page's prefix")?;
        let gate = Arc::new(Gate {
            token,
            hosts: Hosts::new(addr, &options.allowed_hosts),
            cookie: format!("axon_web_{}", addr.port()),
            base: format!("/s/{}", prefix.get(..24).unwrap_or(&prefix)),
        });
        let store = SessionStore::new(&config.dirs.data);
        let root = config.workspace.root().to_path_buf();
        let log = EventLog::new();
        log.push_event("header", event_json(&AgentEvent::header("axon web")), None);
        let (emitter, mut events) = axon_runtime::channel();
        let session = match axon_runtime::open(config, emitter).await {
            Ok(session) => session,
            Err(e) => {
                let mut message = format!("{e:#}");
                while let Ok(event) = events.try_recv() {
                    if let AgentEvent::Warning { message: warning } = event {
                        message.push_str(&format!("\n  warning: {warning}"));
                    }
                }
                anyhow::bail!(message);
            }
        };
        let shared = Arc::new(PanelState {
            log,
            session: session.handle(),
            store,
            root,
            current: Mutex::new(None),
            stop: CancellationToken::new(),
        });
        let pump = tokio::spawn(pump(events, Arc::clone(&shared)));
        Ok(WebServer { listener, addr, gate, shared, session, pump })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// This run's prefix (`/s/<random>`): the page is at `<prefix>/`.
    pub fn base(&self) -> &str {
        &self.gate.base
    }

    /// The address to open, token included (an unspecified bind address
    /// is reached as loopback).
    pub fn url(&self) -> String {
        let mut addr = self.addr;
        if addr.ip().is_unspecified() {
            addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        }
        format!("http://{addr}{}/?token={}", self.gate.base, self.gate.token)
    }

    /// Serves until `stop` is cancelled, then ends the session.
    pub async fn serve(self, stop: CancellationToken) -> Result<()> {
        let WebServer { listener, gate, shared, session, pump, .. } = self;
        let router = router(Arc::clone(&shared), gate);
        let shared_stop = shared.stop.clone();
        let served = axum::serve(axon_guard::nodelay(listener), router)
            .with_graceful_shutdown(async move {
                stop.cancelled().await;
                // Open event streams end, or shutting down would wait on them.
                shared_stop.cancel();
            })
            .await;
        // What runs now (a command, a model call, an approval no one will
        // answer) is stopped first: shutdown waits for queued work.
        session.submit(axon_protocol::Op::Cancel);
        session.shutdown().await;
        let _ = pump.await;
        served.context("the web server failed")
    }
}

fn router(shared: Arc<PanelState>, gate: Arc<Gate>) -> Router {
    // Every route under this run's prefix: the cookie goes nowhere else.
    let at = |path: &str| format!("{}{path}", gate.base);
    Router::new()
        .route(&at("/"), get(|| async { assets::serve("index.html") }))
        .route(&at("/assets/{*path}"), get(asset))
        .route(&at("/api/events"), get(events))
        .route(&at("/api/op"), post(api::op))
        .route(&at("/api/sessions"), get(api::sessions))
        .route(&at("/api/sessions/{id}"), delete(api::delete))
        .route(&at("/api/sessions/{id}/export"), get(api::export))
        .route(&at("/api/files"), get(api::files))
        .route(&at("/api/rewind"), get(rewind::turns))
        .route(&at("/api/rewind/{turn}"), get(rewind::preview))
        .fallback(|| async { refuse(StatusCode::NOT_FOUND, "nothing here") })
        .layer(DefaultBodyLimit::max(api::MAX_OP))
        .with_state(shared)
        // Outermost: nothing is looked at before the guard passed it.
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let gate = Arc::clone(&gate);
            async move { guard(gate, request, next).await }
        }))
}

async fn asset(axum::extract::Path(path): axum::extract::Path<String>) -> Response {
    if path == "index.html" {
        return refuse(StatusCode::NOT_FOUND, "the page is at the link axon web printed");
    }
    assets::serve(&path)
}

async fn events(State(shared): State<Arc<PanelState>>, headers: HeaderMap) -> Response {
    stream::events(shared.log.clone(), &headers, shared.stop.clone()).into_response()
}

/// Moves the session's events into the log, noting which session is shown.
async fn pump(mut events: Events, shared: Arc<PanelState>) {
    while let Some(mut event) = events.recv().await {
        let shown = match &event {
            AgentEvent::SessionStarted { session } => Some(session.session_id.clone()),
            AgentEvent::SessionSaved { session_id } => Some(Some(session_id.clone())),
            _ => None,
        };
        if let Some(shown) = shown {
            *shared.current.lock().unwrap_or_else(PoisonError::into_inner) = shown;
        }
        crate::fit::fit(&mut event);
        let (kind, text) = match &event {
            AgentEvent::Token { text } => ("token", Some(text.as_str())),
            AgentEvent::Thought { text } => ("thought", Some(text.as_str())),
            AgentEvent::SessionStarted { .. } => ("session_started", None),
            AgentEvent::History { .. } => ("history", None),
            _ => ("other", None),
        };
        shared.log.push_event(kind, event_json(&event), text);
    }
}

fn event_json(event: &AgentEvent) -> String {
    // The protocol's types always serialise; a failure would be a bug in
    // them, and the page would show the error.
    serde_json::to_string(event).unwrap_or_else(|e| {
        serde_json::json!({"type": "error", "message": format!("an event could not be sent: {e}")})
            .to_string()
    })
}
