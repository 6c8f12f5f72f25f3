//! The HTTP client of MCP's streamable HTTP transport: axon's reqwest client,
//! with the session's standalone stream opened before its first request.
//!
//! `rmcp` opens the standalone SSE stream (a GET with the session id) in a
//! task of its own once the session is initialized, and sends requests
//! without waiting for it. When that GET reaches the server after a request,
//! a server may deliver messages meant for a resumed stream on it instead,
//! and the client then never resumes the request's own stream (never sends
//! `Last-Event-ID`). Guarantees:
//!
//! - Once a session has an id, its first request waits until the server has
//!   answered the standalone GET (with a stream or with an error, such as 405
//!   from a server that offers none), at most [`STANDALONE_WAIT`]; later
//!   requests never wait. Notifications and responses never wait.
//! - A refusal for want of authorization (401, or 403 for want of scope)
//!   is noted on the session's
//!   [`LoginWatch`](crate::auth::LoginWatch), and any accepted request clears
//!   it, so a failure can be told apart as "needs login".
//! - Everything else is reqwest's client as `rmcp` uses it: responses
//!   bounded in size, `Last-Event-ID` sent on every reconnection, and the
//!   server's `retry:` honoured before it (`rmcp`'s reconnecting stream).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use tokio::sync::watch;

/// The longest a session's first request waits for its standalone stream.
pub(crate) const STANDALONE_WAIT: Duration = Duration::from_secs(10);

type PostResult = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;
type GetResult = Result<BoxedSseResponse, StreamableHttpError<reqwest::Error>>;

/// axon's reqwest client, ordering a session's standalone stream first.
#[derive(Clone)]
pub(crate) struct OrderedClient {
    http: reqwest::Client,
    /// The last session whose standalone GET the server has answered.
    answered: Arc<watch::Sender<Option<Arc<str>>>>,
    login: Option<crate::auth::LoginWatch>,
}

impl OrderedClient {
    pub(crate) fn new(http: reqwest::Client) -> Self {
        OrderedClient { http, answered: Arc::new(watch::channel(None).0), login: None }
    }

    /// Notes the server's authorization verdicts on `login`.
    pub(crate) fn watched(mut self, login: crate::auth::LoginWatch) -> Self {
        self.login = Some(login);
        self
    }

    fn note<T>(&self, result: &Result<T, StreamableHttpError<reqwest::Error>>) {
        let Some(login) = &self.login else { return };
        match result {
            Ok(_) => login.set(false),
            Err(StreamableHttpError::AuthRequired(_)) => login.set(true),
            Err(StreamableHttpError::InsufficientScope(refusal)) => {
                login.wants_scope(&refusal.www_authenticate_header);
            }
            Err(_) => {}
        }
    }

    /// Waits, for a session's first request, until its standalone GET is
    /// answered.
    async fn before_post(&self, session: Option<&Arc<str>>, message: &ClientJsonRpcMessage) {
        let Some(session) = session else { return };
        let ClientJsonRpcMessage::Request(request) = message else { return };
        if matches!(request.request, ClientRequest::InitializeRequest(_)) {
            return;
        }
        let is_this = |answered: &Option<Arc<str>>| answered.as_deref() == Some(&**session);
        let mut answered = self.answered.subscribe();
        if is_this(&answered.borrow()) {
            return;
        }
        let waited = tokio::time::timeout(STANDALONE_WAIT, answered.wait_for(is_this)).await;
        if waited.is_err() {
            // A server slow to answer the GET costs one wait, not one a request.
            self.answered.send_replace(Some(Arc::clone(session)));
        }
    }

    /// Notes the server's answer to a session's standalone GET (one without
    /// `Last-Event-ID`; a resumption is not the standalone stream).
    fn after_get(&self, session: Option<&Arc<str>>, resuming: bool) {
        if let (Some(session), false) = (session, resuming) {
            self.answered.send_replace(Some(Arc::clone(session)));
        }
    }
}

impl StreamableHttpClient for OrderedClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> PostResult {
        self.before_post(session_id.as_ref(), &message).await;
        let result =
            self.http.post_message(uri, message, session_id, auth_header, custom_headers).await;
        self.note(&result);
        result
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> PostResult {
        self.before_post(session_id.as_ref(), &message).await;
        let result = self
            .http
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.note(&result);
        result
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> PostResult {
        self.before_post(session_id.as_ref(), &message).await;
        let result = self
            .http
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.note(&result);
        result
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        let result = self.http.delete_session(uri, session_id, auth_header, custom_headers).await;
        self.note(&result);
        result
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> GetResult {
        let session = session_id.clone();
        let resuming = last_event_id.is_some();
        let result =
            self.http.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await;
        self.after_get(session.as_ref(), resuming);
        self.note(&result);
        result
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> GetResult {
        let session = session_id.clone();
        let resuming = last_event_id.is_some();
        let result = self
            .http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.after_get(session.as_ref(), resuming);
        self.note(&result);
        result
    }
}
