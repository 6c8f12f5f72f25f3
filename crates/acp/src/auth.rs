//! `authMethods` and `authenticate`: a provider's key is an environment
//! variable; authenticating answers whether it is set, and which to set.

use agent_client_protocol_schema::v1::{AuthMethod, AuthMethodAgent, AuthenticateRequest};
use serde_json::{Value, json};

use crate::rpc::{self, AUTH_REQUIRED, RpcError};

/// One method per provider that needs a key: its environment variable.
pub(crate) fn auth_methods() -> Vec<AuthMethod> {
    axon_runtime::PROVIDERS
        .iter()
        .filter(|p| p.requires_key)
        .map(|p| {
            AuthMethod::Agent(
                AuthMethodAgent::new(p.name, format!("{} API key", p.name)).description(format!(
                    "Set {} in the environment the editor starts axon with (the agent server's `env`)",
                    p.key_var
                )),
            )
        })
        .collect()
}

/// Whether the key `methodId` names is there; if not, which variable to set.
pub(crate) fn authenticate(params: Value) -> Result<Value, RpcError> {
    let request: AuthenticateRequest = rpc::params(params)?;
    let method = request.method_id.0.to_string();
    let Some(provider) = axon_runtime::known_provider(&method) else {
        return Err(RpcError::invalid_params(format!(
            "unknown auth method `{method}`: use one of {}",
            axon_runtime::provider_names()
        )));
    };
    let present = [provider.key_var, "AXON_API_KEY"]
        .iter()
        .any(|var| std::env::var(var).is_ok_and(|v| !v.trim().is_empty()));
    if present || !provider.requires_key {
        Ok(json!({}))
    } else {
        Err(RpcError::new(
            AUTH_REQUIRED,
            format!(
                "{} is not set: add it to the `env` of axon's agent server entry in the editor, then restart the agent",
                provider.key_var
            ),
        ))
    }
}
