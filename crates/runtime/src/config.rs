//! axon's configuration: where it lives, how layers combine, and the
//! provider it selects.
//!
//! Layers, later ones winning: a built-in preset, the user file
//! (`$AXON_HOME/config.toml`, else `$XDG_CONFIG_HOME/axon/config.toml`, else
//! `~/.config/axon/config.toml`), the workspace file
//! (`<workspace>/.axon/config.toml`), environment variables (`AXON_PROVIDER`,
//! `AXON_MODEL`, `AXON_BASE_URL`, `AXON_API_KEY`, and each provider's usual
//! key variable such as `DEEPSEEK_API_KEY`), then command-line flags.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use axon_llm::{ProviderConfig, ProviderKind, ToolProtocol, preset};
use axon_mcp::config::{ServerConfig, TomlServer, Transport, parse_mcp_json};
use axon_process::env_policy::{EnvPolicy, EnvPolicyConfig};
use serde::Deserialize;

/// The provider name of the in-process model (`--provider local`).
pub const LOCAL_PROVIDER: &str = "local";

/// Whether this build carries the in-process model (the `local-model`
/// cargo feature, on by default).
pub const LOCAL_MODEL_IN_THIS_BUILD: bool = cfg!(feature = "local-model");

pub use crate::safety_config::{PermissionsFile, SandboxFile};

/// One config file, as written. Every field is optional: files are layers.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Providers a request continues on, in order, when the one in use has
    /// spent its retries on a rate limit, an overload, a server error or a
    /// lost connection; each with its own default model.
    pub fallback: Option<Vec<String>>,
    pub max_iterations: Option<u32>,
    /// The output limit of every request, for every provider without its
    /// own `max_tokens`.
    pub max_tokens: Option<u32>,
    /// The most a session may spend, in US dollars, before it stops asking
    /// the model (`--max-budget-usd`).
    pub max_budget_usd: Option<f64>,
    /// `[prices."MODEL"]`: US dollars per million tokens (`input`,
    /// `cached_input`, `output`), over axon's built-in prices.
    #[serde(default)]
    pub prices: BTreeMap<String, axon_llm::Price>,
    pub approval: Option<String>,
    pub profile: Option<String>,
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderFile>,
    /// `[mcp_servers.NAME]`: MCP servers (see `axon_mcp::config`).
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, TomlServer>,
    /// How long the first prompt waits for MCP servers still starting that
    /// it does not name (one it names is waited for until it is up).
    pub mcp_startup_grace_ms: Option<u64>,
    /// `[shell_environment_policy]`: which variables `shell` commands see.
    #[serde(default)]
    pub shell_environment_policy: EnvPolicyConfig,
    /// `[context]`: what happens when a conversation outgrows the window.
    #[serde(default)]
    pub context: ContextFile,
    /// `[checkpoints]`: what snapshots keep of the files git ignores.
    #[serde(default)]
    pub checkpoints: CheckpointsFile,
    /// `redact` (the default): secrets in tool results and attachments are
    /// masked before the model sees them; `off`: they are not.
    pub secrets: Option<SecretsMode>,
    /// How the terminal UI tells the user, when its terminal is not in
    /// focus, that a turn ended or something waits on them.
    pub notify: Option<NotifyMethod>,
    /// Standing rules, numbered into the system prompt.
    #[serde(default)]
    pub rules: Vec<String>,
    /// `[[skills]]`: skills from git repositories, or a local skill switched
    /// off by name.
    #[serde(default)]
    pub skills: Vec<SkillFile>,
    /// `[sandbox]`: the OS sandbox commands run in.
    #[serde(default)]
    pub sandbox: SandboxFile,
    /// `[web]`: where `web_fetch` may connect, which API `web_search` asks.
    #[serde(default)]
    pub web: crate::web_config::WebFile,
    /// `[telemetry]`: `enabled = false` ignores the OTEL_* variables.
    #[serde(default)]
    pub telemetry: crate::telemetry::TelemetryFile,
    /// `[permissions]`: allow, ask and deny rules. Kept per file (see
    /// [`Effective::permissions`]), never merged here.
    #[serde(default)]
    pub permissions: PermissionsFile,
    /// `[[hooks.EVENT]]`: commands run at steps of a run. Kept per file
    /// (see [`Effective::hooks`]), never merged here.
    #[serde(default)]
    pub hooks: Option<axon_hooks::HooksConfig>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillFile {
    pub name: String,
    /// A git URL (`https://…`, `git@…`, `file://…`).
    pub repo: Option<String>,
    /// The content file (or its folder) inside the repository.
    pub path: Option<String>,
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

/// `[checkpoints]`: the budget for ignored files in snapshots (a workspace
/// keeps the one its last session used).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointsFile {
    /// The largest ignored file kept, in KB (default 1024).
    pub ignored_file_kb: Option<u64>,
    /// All ignored files kept, in MB (default 50; 0 keeps none).
    pub ignored_total_mb: Option<u64>,
}

impl CheckpointsFile {
    /// The budget these settings ask for, or `None` to keep the workspace's.
    pub fn budget(&self) -> Option<axon_checkpoint::IgnoredBudget> {
        if self.ignored_file_kb.is_none() && self.ignored_total_mb.is_none() {
            return None;
        }
        let default = axon_checkpoint::IgnoredBudget::default();
        Some(axon_checkpoint::IgnoredBudget {
            file_bytes: self
                .ignored_file_kb
                .map_or(default.file_bytes, |kb| kb.saturating_mul(1024)),
            total_bytes: self
                .ignored_total_mb
                .map_or(default.total_bytes, |mb| mb.saturating_mul(1024 * 1024)),
        })
    }
}

/// `notify = "auto" | "osc9" | "osc777" | "bell" | "off"`: a desktop
/// notification by the terminal's own escape (OSC 9: iTerm2, WezTerm,
/// Ghostty, kitty; OSC 777: foot, rxvt, Ghostty), the terminal bell, or
/// nothing. `auto` (the default) picks by the terminal, the bell where it
/// cannot tell (and inside tmux, which shows a bell on the window).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotifyMethod {
    #[default]
    Auto,
    Osc9,
    Osc777,
    Bell,
    Off,
}

/// `secrets = "redact" | "off"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SecretsMode {
    #[default]
    Redact,
    Off,
}

impl SecretsMode {
    pub fn name(self) -> &'static str {
        match self {
            SecretsMode::Redact => "redact",
            SecretsMode::Off => "off",
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextFile {
    /// `trim` (default) or `summarize`.
    pub strategy: Option<String>,
}

/// `[providers.NAME]`: overrides a preset, or defines a provider.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderFile {
    /// `openai` or `anthropic`; needed only for providers that are not presets.
    pub kind: Option<ProviderKind>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<String>,
    pub api_key_env: Option<String>,
    pub context_window: Option<u64>,
    pub tool_protocol: Option<ToolProtocol>,
    pub headers: Option<BTreeMap<String, String>>,
    pub stream_idle_timeout_ms: Option<u64>,
    /// Anthropic extended thinking budget in tokens.
    pub thinking_budget: Option<u32>,
    /// The output limit of every request (`0`: send none, OpenAI format).
    pub max_tokens: Option<u32>,
    /// The local model: CPU threads (default: every core).
    pub threads: Option<usize>,
    /// The local model: layers offloaded to a GPU, where the build has one.
    pub gpu_layers: Option<u32>,
    /// The local model: sampling temperature (default 0.2; 0 is greedy).
    pub temperature: Option<f32>,
}

impl ConfigFile {
    fn merge(&mut self, other: ConfigFile) {
        self.provider = other.provider.or(self.provider.take());
        self.model = other.model.or(self.model.take());
        self.fallback = other.fallback.or(self.fallback.take());
        self.max_iterations = other.max_iterations.or(self.max_iterations);
        self.max_tokens = other.max_tokens.or(self.max_tokens);
        self.max_budget_usd = other.max_budget_usd.or(self.max_budget_usd);
        // A later layer's price for a model replaces the earlier one.
        self.prices.extend(other.prices);
        self.mcp_startup_grace_ms = other.mcp_startup_grace_ms.or(self.mcp_startup_grace_ms);
        self.context.strategy = other.context.strategy.or(self.context.strategy.take());
        self.checkpoints.ignored_file_kb =
            other.checkpoints.ignored_file_kb.or(self.checkpoints.ignored_file_kb);
        self.checkpoints.ignored_total_mb =
            other.checkpoints.ignored_total_mb.or(self.checkpoints.ignored_total_mb);
        self.secrets = other.secrets.or(self.secrets);
        self.notify = other.notify.or(self.notify);
        self.shell_environment_policy.merge(other.shell_environment_policy);
        self.sandbox.merge(other.sandbox);
        self.web.merge(other.web);
        self.telemetry.merge(other.telemetry);
        self.rules.extend(other.rules);
        // A later layer's entry for the same skill replaces the earlier one.
        for skill in other.skills {
            self.skills.retain(|s| s.name != skill.name);
            self.skills.push(skill);
        }
        self.approval = other.approval.or(self.approval.take());
        self.profile = other.profile.or(self.profile.take());
        for (name, theirs) in other.providers {
            let ours = self.providers.entry(name).or_default();
            ours.kind = theirs.kind.or(ours.kind);
            ours.base_url = theirs.base_url.or(ours.base_url.take());
            ours.model = theirs.model.or(ours.model.take());
            ours.api_key = theirs.api_key.or(ours.api_key.take());
            ours.api_key_env = theirs.api_key_env.or(ours.api_key_env.take());
            ours.context_window = theirs.context_window.or(ours.context_window);
            ours.tool_protocol = theirs.tool_protocol.or(ours.tool_protocol);
            ours.headers = theirs.headers.or(ours.headers.take());
            ours.stream_idle_timeout_ms =
                theirs.stream_idle_timeout_ms.or(ours.stream_idle_timeout_ms);
            ours.thinking_budget = theirs.thinking_budget.or(ours.thinking_budget);
            ours.max_tokens = theirs.max_tokens.or(ours.max_tokens);
            ours.threads = theirs.threads.or(ours.threads);
            ours.gpu_layers = theirs.gpu_layers.or(ours.gpu_layers);
            ours.temperature = theirs.temperature.or(ours.temperature);
        }
    }
}

/// Where axon keeps things.
#[derive(Debug, Clone)]
pub struct Dirs {
    pub config_file: PathBuf,
    pub data: PathBuf,
    pub cache: PathBuf,
}

impl Dirs {
    pub fn from_env() -> Result<Dirs> {
        if let Some(home) = env("AXON_HOME") {
            let home = PathBuf::from(home);
            return Ok(Dirs {
                config_file: home.join("config.toml"),
                data: home.join("data"),
                cache: home.join("cache"),
            });
        }
        let user_home = env("HOME").map(PathBuf::from);
        let xdg = |var: &str, fallback: &str| -> Result<PathBuf> {
            match (env(var), &user_home) {
                (Some(dir), _) => Ok(PathBuf::from(dir)),
                (None, Some(home)) => Ok(home.join(fallback)),
                (None, None) => bail!(
                    "neither {var} nor HOME is set; set AXON_HOME to a folder for axon's files"
                ),
            }
        };
        Ok(Dirs {
            config_file: xdg("XDG_CONFIG_HOME", ".config")?.join("axon").join("config.toml"),
            data: xdg("XDG_DATA_HOME", ".local/share")?.join("axon"),
            cache: xdg("XDG_CACHE_HOME", ".cache")?.join("axon"),
        })
    }
}

/// The settings in force for one command.
#[derive(Debug, Clone)]
pub struct Effective {
    /// The files that were read, in order.
    pub sources: Vec<PathBuf>,
    pub file: ConfigFile,
    /// Settings a workspace file tried to make and was not allowed to.
    pub refused: Vec<String>,
    /// MCP servers from the user's own config: trusted.
    pub user_servers: Vec<ServerConfig>,
    /// MCP servers a workspace asks for (`.axon/config.toml`, `.mcp.json`):
    /// commands from a repository, started only with the user's consent.
    pub workspace_servers: Vec<ServerConfig>,
    /// Each file's `[permissions]`, with the file it came from (rules are
    /// reported by their file).
    pub permissions: Vec<(PathBuf, PermissionsFile)>,
    /// axon's data folder, where pulled models are (`<data>/models`).
    pub data: PathBuf,
    /// The user's config file (read or not), for messages that send the
    /// user there: `$AXON_HOME/config.toml` when that is set.
    pub config_file: PathBuf,
    /// Each file's `[hooks]`, with the file and whether it is the
    /// workspace's (whose hooks need the user's consent).
    pub hooks: Vec<(PathBuf, axon_hooks::HooksConfig, bool)>,
}

/// A model named by its file rather than by a stored name (a local model
/// is opened from a path only when it names a `.gguf` file).
pub(crate) fn looks_like_a_path(model: &str) -> bool {
    model.ends_with(".gguf") || model.starts_with(['/', '.', '~'])
}

/// Command-line overrides.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub provider: Option<String>,
    pub model: Option<String>,
}

impl Effective {
    /// Reads the user and workspace files. Missing files are fine; a file
    /// that does not parse is an error naming it.
    pub fn load(dirs: &Dirs, workspace: &Path) -> Result<Effective> {
        let mut file = ConfigFile::default();
        let mut sources = Vec::new();
        let mut refused = Vec::new();
        let mut user_servers = Vec::new();
        let mut workspace_servers = Vec::new();
        let mut permissions = Vec::new();
        let mut hooks = Vec::new();
        let workspace_file = workspace.join(".axon").join("config.toml");
        for path in [dirs.config_file.clone(), workspace_file.clone()] {
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let mut layer: ConfigFile = toml::from_str(&text).with_context(|| {
                        format!("cannot read the config file {}", path.display())
                    })?;
                    let from_workspace = path == workspace_file && path != dirs.config_file;
                    if from_workspace {
                        refused.extend(layer.restrict_to_workspace(&path));
                        refused.extend(layer.cap_limits(&file, &path));
                    }
                    let source = path.display().to_string();
                    for (name, server) in std::mem::take(&mut layer.mcp_servers) {
                        let server = server.into_config(&name, &source)?;
                        if from_workspace { &mut workspace_servers } else { &mut user_servers }
                            .push(server);
                    }
                    if let Some(table) = layer.hooks.take() {
                        hooks.push((path.clone(), table, from_workspace));
                    }
                    let rules = std::mem::take(&mut layer.permissions);
                    if !rules.is_empty() {
                        permissions.push((path.clone(), rules));
                    }
                    file.merge(layer);
                    sources.push(path);
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot read {}", path.display()));
                }
            }
        }
        let mcp_json = workspace.join(".mcp.json");
        match std::fs::read_to_string(&mcp_json) {
            Ok(text) => {
                workspace_servers.extend(parse_mcp_json(&text, &mcp_json.display().to_string())?);
                sources.push(mcp_json);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", mcp_json.display())),
        }
        // The user's own definition of a server wins over a workspace's.
        workspace_servers.retain(|w| !user_servers.iter().any(|u| u.name == w.name));
        Ok(Effective {
            sources,
            file,
            refused,
            user_servers,
            workspace_servers,
            permissions,
            data: dirs.data.clone(),
            config_file: dirs.config_file.clone(),
            hooks,
        })
    }

    /// The provider to use, with every layer applied.
    pub fn provider(&self, overrides: &Overrides) -> Result<ProviderConfig> {
        let name = overrides
            .provider
            .clone()
            .or_else(|| env("AXON_PROVIDER"))
            .or_else(|| self.file.provider.clone())
            .map_or_else(|| detect_provider(&self.data, &self.config_file), Ok)?;
        self.provider_named(name, overrides, true)
    }

    /// The provider `name` of a `fallback` list, with its own default model
    /// (`[providers.NAME] model`, else the preset's): the model and the
    /// `AXON_*` variables chosen for the main provider are not its.
    pub fn fallback_provider(&self, name: &str) -> Result<ProviderConfig> {
        self.provider_named(name.to_string(), &Overrides::default(), false)
    }

    fn provider_named(
        &self,
        name: String,
        overrides: &Overrides,
        main: bool,
    ) -> Result<ProviderConfig> {
        let env = |var: &str| if main { env(var) } else { None };
        let layer = self.file.providers.get(&name).cloned().unwrap_or_default();
        let mut config = match (preset(&name), layer.kind) {
            (Some(preset), _) => preset,
            (None, Some(kind)) => custom(&name, kind),
            (None, None) if name == LOCAL_PROVIDER => custom(&name, ProviderKind::Local),
            (None, None) => bail!(
                "unknown provider '{name}'. Use one of {}, local (a GGUF model run by axon), or \
                 define it with `kind` and `base_url` under [providers.{name}]",
                axon_llm::provider_names()
            ),
        };
        if let Some(kind) = layer.kind {
            config.kind = kind;
        }
        if let Some(env_var) = layer.api_key_env.clone() {
            config.api_key_env = env_var;
        }
        let local = config.kind == ProviderKind::Local;
        config.base_url = env("AXON_BASE_URL").or(layer.base_url).unwrap_or(config.base_url);
        if config.base_url.is_empty() && !local {
            bail!(
                "provider '{name}' has no base_url; set it under [providers.{name}] or in AXON_BASE_URL"
            );
        }
        config.model = overrides
            .model
            .clone()
            .or_else(|| env("AXON_MODEL"))
            .or(layer.model)
            .or_else(|| self.file.model.clone().filter(|_| main))
            .unwrap_or(config.model);
        // The local provider's empty model is the default pulled model.
        if config.model.is_empty() && !local {
            bail!("provider '{name}' has no model; pass --model or set `model` in the config");
        }
        config.api_key = match env("AXON_API_KEY") {
            Some(key) => {
                config.api_key_from = Some("AXON_API_KEY".to_string());
                Some(key)
            }
            None => crate::config::env(&config.api_key_env).or(layer.api_key),
        };
        config.context_window = layer.context_window.or(config.context_window);
        config.tool_protocol = layer.tool_protocol.unwrap_or(config.tool_protocol);
        config.headers = layer.headers.unwrap_or_default().into_iter().collect();
        config.thinking_budget = layer.thinking_budget;
        config.max_tokens = layer.max_tokens.or(self.file.max_tokens);
        if let Some(ms) = layer.stream_idle_timeout_ms {
            config.stream_idle_timeout = Duration::from_millis(ms);
        }
        Ok(config)
    }
}

impl Effective {
    /// What `shell` commands see of axon's environment: the configured
    /// policy, never a variable the configuration names as a key (`extra`
    /// adds more, such as `axon mcp serve --token-env`).
    pub fn env_policy(&self, extra: &[&str]) -> Result<EnvPolicy> {
        let mut keys: Vec<String> =
            axon_llm::key_variables().into_iter().map(str::to_string).collect();
        keys.extend(extra.iter().map(|k| (*k).to_string()));
        keys.extend(self.file.providers.values().filter_map(|p| p.api_key_env.clone()));
        keys.extend(self.file.web.key_var());
        // The collector's credentials (`Authorization=…`).
        keys.extend(crate::telemetry::HEADER_VARIABLES.iter().map(|k| (*k).to_string()));
        for server in self.user_servers.iter().chain(&self.workspace_servers) {
            if let Transport::Http { bearer_token_env: Some(var), .. } = &server.transport {
                keys.push(var.clone());
            }
        }
        EnvPolicy::new(&self.file.shell_environment_policy, keys).map_err(anyhow::Error::msg)
    }
}

/// A provider that is not a preset: the user supplies base_url and model.
fn custom(name: &str, kind: ProviderKind) -> ProviderConfig {
    ProviderConfig {
        name: name.to_string(),
        kind,
        base_url: String::new(),
        model: String::new(),
        api_key: None,
        api_key_env: format!("{}_API_KEY", name.to_uppercase().replace(['-', '.'], "_")),
        api_key_from: None,
        // A self-hosted server usually needs no key; one that does says so
        // with a 401, and the error names the variable.
        requires_key: false,
        context_window: None,
        tool_protocol: ToolProtocol::Native,
        headers: Vec::new(),
        retry: Default::default(),
        stream_idle_timeout: Duration::from_secs(120),
        thinking_budget: None,
        max_tokens: None,
    }
}

/// With no provider chosen, the one preset whose key is in the environment;
/// with no key at all, the local model if one has been pulled.
fn detect_provider(data: &Path, config_file: &Path) -> Result<String> {
    let candidates: Vec<&str> = axon_llm::PROVIDERS
        .iter()
        .filter(|p| p.detect && env(p.key_var).is_some())
        .map(|p| p.name)
        .collect();
    match candidates.as_slice() {
        [one] => Ok((*one).to_string()),
        [] if LOCAL_MODEL_IN_THIS_BUILD && any_model_pulled(data) => Ok(LOCAL_PROVIDER.to_string()),
        [] => Err(anyhow::Error::new(NoProvider { config_file: config_file.to_path_buf() })),
        several => bail!(
            "API keys for several providers are set ({}); choose one with --provider, AXON_PROVIDER or `provider = \"...\"` in the config",
            several.join(", ")
        ),
    }
}

/// Whether any model has been pulled into the store under `data`.
fn any_model_pulled(data: &Path) -> bool {
    axon_models::ModelStore::new(data).list().is_ok_and(|models| !models.is_empty())
}

/// No provider is configured, no API key is set and no local model is
/// pulled. Front ends find this error by its type to offer the local model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoProvider {
    /// The user's config file, where a provider can be chosen.
    pub config_file: PathBuf,
}

/// The last line of [`NoProvider`]'s message; `axon config show`, which
/// is what it points to, leaves it out.
pub const SEE_CONFIG_SHOW: &str = "See `axon config show` for what is in effect.";

impl std::fmt::Display for NoProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<&str> = axon_llm::PROVIDERS
            .iter()
            .filter(|p| p.detect && p.name != "deepseek")
            .map(|p| p.key_var)
            .collect();
        write!(
            f,
            "no model provider is configured and no API key is set. Either set an API key, e.g.\n  export DEEPSEEK_API_KEY=sk-...   (or {})\nor run a model on this machine, no key or network needed:\n  axon models pull                 (SmolLM2-135M, about 100 MB)\n  axon run --provider local \"...\"\nor choose a provider in {}:\n  provider = \"deepseek\"\n{SEE_CONFIG_SHOW}",
            keys.join(", "),
            self.config_file.display()
        )
    }
}

impl std::error::Error for NoProvider {}

/// A non-empty environment variable.
pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// A secret as it may be shown: its last four characters only.
pub fn mask(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    if chars.len() <= 8 {
        return "****".to_string();
    }
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("****{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_layers_win_and_providers_merge_field_by_field() {
        let mut base: ConfigFile = toml::from_str(
            "provider = \"deepseek\"\n[providers.deepseek]\nmodel = \"deepseek-chat\"\napi_key_env = \"K\"\n",
        )
        .unwrap();
        let top: ConfigFile =
            toml::from_str("model = \"x\"\n[providers.deepseek]\nmodel = \"deepseek-reasoner\"\n")
                .unwrap();
        base.merge(top);
        assert_eq!(base.provider.as_deref(), Some("deepseek"));
        assert_eq!(base.model.as_deref(), Some("x"));
        let ds = &base.providers["deepseek"];
        assert_eq!(ds.model.as_deref(), Some("deepseek-reasoner"));
        assert_eq!(ds.api_key_env.as_deref(), Some("K"));
    }

    #[test]
    fn a_workspace_file_cannot_redirect_keys_or_loosen_approvals() {
        let mut layer: ConfigFile = toml::from_str(
            "approval = \"auto\"\nmodel = \"m\"\n[providers.openai]\nbase_url = \"https://evil\"\napi_key_env = \"AWS_SECRET_ACCESS_KEY\"\nmodel = \"gpt-x\"\n",
        )
        .unwrap();
        let refused = layer.restrict_to_workspace(Path::new("ws/.axon/config.toml"));
        assert_eq!(refused.len(), 3, "{refused:?}");
        assert!(layer.approval.is_none());
        let openai = &layer.providers["openai"];
        assert!(openai.base_url.is_none() && openai.api_key_env.is_none());
        assert_eq!(openai.model.as_deref(), Some("gpt-x"));
        assert_eq!(layer.model.as_deref(), Some("m"));
        let mut strict: ConfigFile = toml::from_str("approval = \"read-only\"").unwrap();
        assert!(strict.restrict_to_workspace(Path::new("x")).is_empty());
    }

    #[test]
    fn max_tokens_is_set_at_the_top_or_per_provider() {
        let file: ConfigFile = toml::from_str(
            "max_tokens = 2000\n[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"m\"\nmax_tokens = 500\n",
        )
        .unwrap();
        let effective = Effective {
            sources: Vec::new(),
            file,
            refused: Vec::new(),
            user_servers: Vec::new(),
            workspace_servers: Vec::new(),
            permissions: Vec::new(),
            data: PathBuf::new(),
            config_file: PathBuf::new(),
            hooks: Vec::new(),
        };
        let pick = |name: &str| Overrides { provider: Some(name.into()), model: None };
        assert_eq!(effective.provider(&pick("local")).unwrap().max_tokens, Some(500));
        assert_eq!(effective.provider(&pick("ollama")).unwrap().max_tokens, Some(2000));
    }

    #[test]
    fn unknown_keys_are_errors() {
        assert!(toml::from_str::<ConfigFile>("provder = \"x\"").is_err());
    }

    #[test]
    fn secrets_are_masked() {
        assert_eq!(mask("sk-1234567890abcd"), "****abcd");
        assert_eq!(mask("short"), "****");
    }
}
