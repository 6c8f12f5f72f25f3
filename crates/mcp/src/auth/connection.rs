//! The authorized HTTP client of one session: rmcp's `AuthClient` over
//! axon's own, holding the server's stored tokens.
//!
//! Guarantees: every request carries the stored access token; one about to
//! expire is refreshed (and the new tokens stored) before it is sent; a
//! token the server refuses is refreshed once and the request retried; with
//! no stored token requests go out without one, so the server's 401 marks
//! the server as needing login.

use rmcp::transport::auth::{AuthClient, AuthorizationManager, OAuthClientConfig};

use super::store::{FileStore, token_path};
use crate::config::OAuthSettings;
use crate::http_client::OrderedClient;

/// `http` with the tokens of server `name` at `url`, if any are stored.
pub(crate) async fn authorized_client(
    name: &str,
    url: &str,
    oauth: &OAuthSettings,
    http: OrderedClient,
) -> Result<AuthClient<OrderedClient>, String> {
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| format!("cannot set up OAuth for {url}: {e}"))?;
    let store = oauth.token_dir.as_ref().map(|dir| FileStore { path: token_path(dir, name, url) });
    let stored = match &store {
        Some(store) => store.read().map_err(|e| e.to_string())?,
        None => None,
    };
    if let (Some(store), Some(stored)) = (store, stored)
        && stored.token_response.is_some()
    {
        let client_id = stored.client_id.clone();
        manager.set_credential_store(store);
        // Discovers the authorization server again: a changed issuer drops
        // the tokens (the server then asks for a new login).
        let usable = manager.initialize_from_store().await.map_err(|e| {
            format!("MCP server {name}: the authorization server could not be reached: {e}")
        })?;
        if usable
            && oauth.client_id.as_deref() == Some(client_id.as_str())
            && let Some(secret) = super::client_secret(oauth)?
        {
            // A confidential client refreshes with its secret.
            let config = OAuthClientConfig::new(client_id, "http://127.0.0.1/callback")
                .with_client_secret(secret)
                .with_scopes(oauth.scopes.clone());
            manager.configure_client(config).map_err(|e| e.to_string())?;
        }
    }
    Ok(AuthClient::new(http, manager))
}
