//! One `tools/call` whose progress notifications reach the caller, and
//! which the server is told about (`notifications/cancelled`) when the
//! caller stops waiting: a cancelled turn or a timeout drops the future.
//!
//! The SDK puts a progress token on every request it sends but keeps it to
//! itself in `call_tool`; this sends the request itself to learn the token
//! and route the server's notifications for it.

use std::sync::Arc;

use axon_tools::ProgressSink;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, RequestId, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleClient, ServiceError};

use crate::host::ClientShared;

/// What the server is told when the call is abandoned.
const ABANDONED: &str = "the client stopped waiting (cancelled or timed out)";

pub(crate) async fn call_tool(
    peer: &Peer<RoleClient>,
    shared: &Arc<ClientShared>,
    server: &str,
    params: CallToolRequestParams,
    progress: Option<ProgressSink>,
) -> Result<CallToolResult, ServiceError> {
    let Some(sink) = progress else {
        // The SDK's own call also cancels on drop.
        return peer.call_tool(params).await;
    };
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer.send_request_with_option(request, PeerRequestOptions::no_options()).await?;
    let _route = shared.route(server, handle.progress_token.clone(), sink);
    let mut guard = CancelOnDrop { peer: peer.clone(), id: Some(handle.id.clone()) };
    let result = handle.await_response().await;
    guard.id = None;
    match result? {
        ServerResult::CallToolResult(result) => Ok(result),
        // A reply without `content` decodes as an empty result.
        ServerResult::EmptyResult(_) => Ok(CallToolResult::success(Vec::new())),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// Tells the server its request was abandoned, unless disarmed first.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let param = CancelledNotificationParam::new(Some(id), Some(ABANDONED.to_string()));
            // A server already gone needs no telling.
            let _ = peer.notify_cancelled(param).await;
        });
    }
}
