//! `[web]`: where `web_fetch` may connect and which search API
//! `web_search` asks.
//!
//! ```toml
//! [web]
//! allow_private = false              # loopback, LAN, link-local: refused
//! private_hosts = ["localhost"]      # …except these hosts
//!
//! [web.search]
//! backend = "brave"                  # brave | tavily | searxng
//! api_key_env = "BRAVE_API_KEY"      # the default for brave
//! url = "http://localhost:8888"      # searxng's instance (or another API address)
//! ```
//!
//! Guarantees: only the user's own config decides any of it (a workspace
//! layer's `[web]` is refused whole: opening private addresses, choosing
//! where queries and keys go are the user's calls); without a backend,
//! `web_search` is offered only when `BRAVE_API_KEY` or `TAVILY_API_KEY`
//! is set, else not at all, and `axon doctor` says how to add one; a
//! search configured but unusable (an unknown backend, a missing key or
//! URL) is a warning naming the fix, never a failed session. Keys are read
//! from the environment here and nowhere else; the session's redactor and
//! the commands' environment filter are given them ([`WebFile::key_var`]).

use std::time::Duration;

use axon_webtools::{AddressPolicy, Backend, SearchConfig, WebFetchConfig};
use serde::Deserialize;

/// A variable's value, when it is set and not blank (as the config reads
/// the providers' keys; kept here so this module imports nothing back).
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// `[web]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct WebFile {
    /// `web_fetch` may reach loopback, private and link-local addresses.
    pub allow_private: Option<bool>,
    /// Hosts (names as written in URLs, or IP literals) `web_fetch` may
    /// reach at such addresses.
    pub private_hosts: Option<Vec<String>>,
    /// `[web.search]`.
    #[serde(default)]
    pub search: SearchFile,
}

/// `[web.search]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SearchFile {
    /// `brave`, `tavily` or `searxng`.
    pub backend: Option<String>,
    /// The API's address: a SearXNG instance's, or another for Brave or
    /// Tavily (a proxy of the user's).
    pub url: Option<String>,
    /// The variable holding the key (default `BRAVE_API_KEY`,
    /// `TAVILY_API_KEY`).
    pub api_key_env: Option<String>,
}

/// How long a search may take.
const SEARCH_TIMEOUT: Duration = Duration::from_secs(20);

/// What to tell a user who has no search configured.
pub const SEARCH_HOWTO: &str = "set BRAVE_API_KEY (Brave Search) or TAVILY_API_KEY (Tavily) in \
    the environment, or point axon at a SearXNG instance with `[web.search] backend = \
    \"searxng\"` and `url = \"http://…\"` in your config";

impl WebFile {
    pub(crate) fn merge(&mut self, other: WebFile) {
        self.allow_private = other.allow_private.or(self.allow_private);
        self.private_hosts = other.private_hosts.or(self.private_hosts.take());
        self.search.backend = other.search.backend.or(self.search.backend.take());
        self.search.url = other.search.url.or(self.search.url.take());
        self.search.api_key_env = other.search.api_key_env.or(self.search.api_key_env.take());
    }

    /// A workspace layer's `[web]`, removed: each setting opens an address
    /// to the model or chooses where the user's queries and keys go.
    pub(crate) fn restrict_to_workspace(&mut self, refuse: &mut impl FnMut(String)) {
        let web = std::mem::take(self);
        let set = [
            ("web.allow_private", web.allow_private.is_some()),
            ("web.private_hosts", web.private_hosts.is_some()),
            ("web.search.backend", web.search.backend.is_some()),
            ("web.search.url", web.search.url.is_some()),
            ("web.search.api_key_env", web.search.api_key_env.is_some()),
        ];
        for (name, _) in set.iter().filter(|(_, set)| *set) {
            refuse(name.to_string());
        }
    }

    /// `web_fetch`'s settings.
    pub fn fetch_config(&self) -> WebFetchConfig {
        WebFetchConfig {
            policy: AddressPolicy {
                allow_private: self.allow_private.unwrap_or(false),
                private_hosts: self.private_hosts.clone().unwrap_or_default(),
            },
            ..WebFetchConfig::default()
        }
    }

    /// The backend in use and its key's variable, without reading the key.
    fn choice(&self) -> Result<Option<(Backend, Option<String>)>, String> {
        let Some(name) = &self.search.backend else {
            // No choice made: the first backend whose key is set.
            return Ok([Backend::Brave, Backend::Tavily].into_iter().find_map(|backend| {
                let var = backend.default_key_env()?;
                env(var).map(|_| (backend, Some(var.to_string())))
            }));
        };
        let backend = Backend::parse(name).ok_or_else(|| {
            format!(
                "web_search is off: `[web.search] backend = \"{name}\"` is not one axon knows \
                 (brave, tavily, searxng)"
            )
        })?;
        let var = self.search.api_key_env.clone().or(backend.default_key_env().map(String::from));
        Ok(Some((backend, var)))
    }

    /// The variable holding the search key, when one is in use: for the
    /// redactor and the commands' environment filter.
    pub fn key_var(&self) -> Option<String> {
        self.choice()
            .ok()
            .flatten()
            .and_then(|(backend, var)| backend.default_key_env().is_some().then_some(var).flatten())
    }

    /// `web_search`'s settings: `Ok(None)` when no search is configured
    /// (the tool is not offered), `Err` when one is and cannot be used.
    pub fn search_config(&self) -> Result<Option<SearchConfig>, String> {
        let Some((backend, var)) = self.choice()? else {
            return Ok(None);
        };
        let endpoint = match (&self.search.url, backend.default_endpoint()) {
            (Some(url), _) => url.clone(),
            (None, Some(url)) => url.to_string(),
            (None, None) => {
                return Err(format!(
                    "web_search is off: {} needs its address: set `url = \"http://…\"` under \
                     [web.search]",
                    backend.name()
                ));
            }
        };
        let needs_key = backend.default_key_env().is_some();
        let api_key = var.as_deref().and_then(env);
        if needs_key && api_key.is_none() {
            return Err(format!(
                "web_search is off: {} needs an API key and {} is not set",
                backend.name(),
                var.as_deref().unwrap_or("its variable")
            ));
        }
        Ok(Some(SearchConfig {
            backend,
            endpoint,
            api_key: if needs_key { api_key } else { None },
            api_key_env: var,
            timeout: SEARCH_TIMEOUT,
        }))
    }
}

/// The tools `axon tool list` and `axon tool call` offer: `profile`'s
/// built-in tools, and the web tools as `web` sets them up (a search that
/// cannot be used is left out, as in a session after its warning).
pub fn hand_tools(
    profile: axon_tools::Profile,
    web: &WebFile,
    env: axon_process::EnvPolicy,
    sandbox: Option<std::sync::Arc<axon_tools::CommandSandbox>>,
) -> axon_tools::ToolRegistry {
    let mut registry = profile.registry_with(env, sandbox);
    axon_webtools::register(&mut registry, web.fetch_config(), web.search_config().ok().flatten());
    registry
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_layer_decides_nothing_of_the_web() {
        let mut web: WebFile = toml::from_str(
            "allow_private = true\nprivate_hosts = [\"x\"]\n[search]\nbackend = \"searxng\"\n\
             url = \"http://attacker\"\napi_key_env = \"AWS_SECRET_ACCESS_KEY\"",
        )
        .unwrap();
        let mut refused = Vec::new();
        web.restrict_to_workspace(&mut |what| refused.push(what));
        assert_eq!(web, WebFile::default());
        assert_eq!(refused.len(), 5, "{refused:?}");
    }

    #[test]
    fn searxng_needs_a_url_and_no_key() {
        let web: WebFile =
            toml::from_str("[search]\nbackend = \"SearXNG\"\nurl = \"http://127.0.0.1:8888\"")
                .unwrap();
        let config = web.search_config().unwrap().unwrap();
        assert_eq!(config.backend, Backend::Searxng);
        assert_eq!(config.endpoint, "http://127.0.0.1:8888");
        assert!(config.api_key.is_none());
        assert_eq!(web.key_var(), None);
        let web: WebFile = toml::from_str("[search]\nbackend = \"searxng\"").unwrap();
        assert!(web.search_config().unwrap_err().contains("set `url"));
        let web: WebFile = toml::from_str("[search]\nbackend = \"bing\"").unwrap();
        assert!(web.search_config().unwrap_err().contains("brave, tavily, searxng"));
    }

    #[test]
    fn a_key_variable_that_is_not_set_turns_search_off_with_the_reason() {
        let web: WebFile = toml::from_str(
            "[search]\nbackend = \"brave\"\napi_key_env = \"AXON_TEST_SURELY_UNSET_KEY_41\"",
        )
        .unwrap();
        let error = web.search_config().unwrap_err();
        assert!(error.contains("AXON_TEST_SURELY_UNSET_KEY_41 is not set"), "{error}");
        assert_eq!(web.key_var().as_deref(), Some("AXON_TEST_SURELY_UNSET_KEY_41"));
    }

    #[test]
    fn private_addresses_stay_closed_by_default() {
        let fetch = WebFile::default().fetch_config();
        assert!(!fetch.policy.allow_private && fetch.policy.private_hosts.is_empty());
        let web: WebFile = toml::from_str("private_hosts = [\"localhost\"]").unwrap();
        assert_eq!(web.fetch_config().policy.private_hosts, ["localhost"]);
    }

    #[test]
    fn doctor_says_which_search_is_used_or_how_to_add_one() {
        use crate::doctor::{Status, web};
        let searxng: WebFile =
            toml::from_str("[search]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:8888\"")
                .unwrap();
        let found = web(&searxng);
        assert_eq!(found[0].status, Status::Ok);
        assert!(found[0].text.contains("SearXNG at http://127.0.0.1:8888"), "{found:?}");
        let broken: WebFile = toml::from_str(
            "[search]\nbackend = \"tavily\"\napi_key_env = \"AXON_TEST_SURELY_UNSET_KEY_42\"",
        )
        .unwrap();
        let found = web(&broken);
        assert_eq!(found[0].status, Status::Warning);
        assert!(found[0].fix.as_deref().unwrap_or_default().contains("BRAVE_API_KEY"));
        if env("BRAVE_API_KEY").is_none() && env("TAVILY_API_KEY").is_none() {
            let found = web(&WebFile::default());
            assert_eq!(found[0].status, Status::Note);
            assert!(found[0].text.contains("web_search is not offered"), "{found:?}");
            assert!(found[0].fix.as_deref().unwrap_or_default().contains("searxng"));
        }
        let open: WebFile = toml::from_str("allow_private = true").unwrap();
        assert!(web(&open).iter().any(|f| f.text.contains("allow_private = true")));
    }
}
