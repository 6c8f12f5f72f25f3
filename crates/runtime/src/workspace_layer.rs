//! What a workspace's `.axon/config.toml` may not decide: a repository is
//! not trusted like the user.
//!
//! Guarantees: a workspace layer cannot send the user's key elsewhere
//! (`base_url`, `api_key_env`, `headers`, `kind`), name any variable whose
//! value goes to a server (`bearer_token_env`, `oauth.client_secret_env`),
//! plant a key, loosen approvals, show commands more of the environment,
//! fetch skills, loosen the sandbox or permissions, open private addresses
//! to `web_fetch` or choose where searches go (`[web]`), nor raise a limit above
//! what the layers before it (or the default) set. Everything removed is
//! named in a warning, with where to set it instead.

use std::path::Path;

use crate::config::{ConfigFile, looks_like_a_path};

/// The iterations a turn may take when no config says.
pub const DEFAULT_MAX_ITERATIONS: u32 = 25;

impl ConfigFile {
    /// Removes what a workspace file may not decide. A repository is not
    /// trusted like the user: it must not send the user's API key elsewhere
    /// (`base_url`, `api_key_env`, `headers`, `kind`), plant a key, or loosen
    /// approvals. Returns what was removed, for a warning.
    pub(crate) fn restrict_to_workspace(&mut self, path: &Path) -> Vec<String> {
        let mut refused = Vec::new();
        let mut refuse = |what: String| {
            refused.push(format!(
                "{} may not set {what}; ignored (set it in your own config)",
                path.display()
            ));
        };
        if let Some(approval) = &self.approval
            && approval != "ask"
            && approval != "read-only"
        {
            refuse(format!("approval = \"{approval}\""));
            self.approval = None;
        }
        // Prices decide what the budget counts: a repository's would let it
        // spend the user's money unseen.
        for model in std::mem::take(&mut self.prices).into_keys() {
            refuse(format!("prices.\"{model}\""));
        }
        // A repository that could switch masking off could have its own
        // files' secrets, or the user's, read out to the model.
        if self.secrets == Some(crate::config::SecretsMode::Off) {
            refuse("secrets = \"off\"".to_string());
            self.secrets = None;
        }
        // Naming a variable is choosing which of the user's secrets goes to
        // a server: a bearer token, or an OAuth client secret sent with the
        // token request (`axon mcp login`).
        for (name, server) in &mut self.mcp_servers {
            if server.bearer_token_env.take().is_some() {
                refuse(format!("mcp_servers.{name}.bearer_token_env"));
            }
            if let Some(oauth) = &mut server.oauth
                && oauth.client_secret_env.take().is_some()
            {
                refuse(format!("mcp_servers.{name}.oauth.client_secret_env"));
            }
        }
        for (name, provider) in &mut self.providers {
            if provider.base_url.take().is_some() {
                refuse(format!("providers.{name}.base_url"));
            }
            if provider.api_key.take().is_some() {
                refuse(format!("providers.{name}.api_key"));
            }
            if provider.api_key_env.take().is_some() {
                refuse(format!("providers.{name}.api_key_env"));
            }
            if provider.headers.take().is_some() {
                refuse(format!("providers.{name}.headers"));
            }
            if provider.kind.take().is_some() {
                refuse(format!("providers.{name}.kind"));
            }
            // A model file is code-like input to a C++ parser: a repository
            // may pick a model the user pulled, never a file of its own.
            if provider.model.as_deref().is_some_and(looks_like_a_path) {
                refuse(format!("providers.{name}.model to a file path"));
                provider.model = None;
            }
        }
        if self.model.as_deref().is_some_and(looks_like_a_path) {
            refuse("model to a file path".to_string());
            self.model = None;
        }
        // A repository may hide more variables from commands, never show more.
        let policy = &mut self.shell_environment_policy;
        if policy.inherit.take().is_some() {
            refuse("shell_environment_policy.inherit".to_string());
        }
        if policy.ignore_default_excludes.take().is_some() {
            refuse("shell_environment_policy.ignore_default_excludes".to_string());
        }
        if !std::mem::take(&mut policy.include).is_empty() {
            refuse("shell_environment_policy.include".to_string());
        }
        if !std::mem::take(&mut policy.set).is_empty() {
            refuse("shell_environment_policy.set".to_string());
        }
        // A repository may switch skills off, not fetch new ones.
        for skill in &mut self.skills {
            if skill.repo.take().is_some() {
                refuse(format!("skills.{}.repo", skill.name));
            }
        }
        self.sandbox.restrict_to_workspace(&mut refuse);
        self.web.restrict_to_workspace(&mut refuse);
        self.telemetry.restrict_to_workspace(&mut refuse);
        self.permissions.restrict_to_workspace(&mut refuse);
        refused
    }
}

impl ConfigFile {
    /// Removes the limits this workspace layer raises above `before` (the
    /// layers already merged, else the defaults): a repository may make a
    /// session stop sooner, not run longer on the user's money.
    pub(crate) fn cap_limits(&mut self, before: &ConfigFile, path: &Path) -> Vec<String> {
        let mut refused = Vec::new();
        let allowed = before.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS);
        if let Some(asked) = self.max_iterations
            && asked > allowed
        {
            refused.push(format!(
                "{} may not raise max_iterations to {asked} (above {allowed}); ignored (set it in \
                 your own config)",
                path.display()
            ));
            self.max_iterations = None;
        }
        if let (Some(asked), Some(allowed)) = (self.max_budget_usd, before.max_budget_usd)
            && asked > allowed
        {
            refused.push(format!(
                "{} may not raise max_budget_usd to {asked} (above {allowed}); ignored (set it \
                 in your own config)",
                path.display()
            ));
            self.max_budget_usd = None;
        }
        refused
    }
}
