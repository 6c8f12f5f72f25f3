//! Which of axon's environment variables a child process sees.
//!
//! axon's environment holds the user's API keys, and a command the model runs
//! could print them back to the model (and so to the provider). An
//! [`EnvPolicy`] builds a child's environment from scratch, in this order:
//!
//! 1. Start from `inherit`: all of axon's variables (the default), only the
//!    [core](CORE_VARS) ones (`PATH`, `HOME`, `LANG`, `LC_*`, `TERM`, …), or
//!    none.
//! 2. Add axon's variables whose names match an `include` pattern.
//! 3. Remove those matching an `exclude` pattern.
//! 4. Remove every variable whose name contains `KEY`, `SECRET`, `TOKEN`,
//!    `PASSWORD`, `CREDENTIAL`, `PASSPHRASE`, `DATABASE_URL` or
//!    `CONNECTION_STRING`, or has `PAT`, `PASS`, `PASSWD`, `DSN` or `COOKIE`
//!    as a `_`-separated word (`GITHUB_PAT`, `DB_PASS`, `SENTRY_DSN`), or
//!    whose value has a secret's shape (`axon_secrets`' rules, seeing
//!    `NAME=value`: a `ghp_…` token, a password in a URL, a private key),
//!    in any letter case, unless an `include` pattern matches it or
//!    `ignore_default_excludes` is set, and every
//!    variable the configuration names as a key (a provider's `api_key_env`,
//!    an MCP server's `bearer_token_env`) unless `include` names it exactly:
//!    a wildcard never lets a configured key through.
//! 5. Set the `set` variables.
//!
//! Patterns are globs (`*`, `?`, `[…]`) matched against the whole name,
//! ignoring letter case. The policy is applied with `env_clear`, so nothing
//! reaches the child that the policy did not let through.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;

/// Name fragments that mark a variable as a secret.
pub const SECRET_MARKERS: [&str; 8] = [
    "KEY",
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "CREDENTIAL",
    "PASSPHRASE",
    "DATABASE_URL",
    "CONNECTION_STRING",
];

/// Words of a name (between `_`) that mark a variable as a secret: too
/// short to look for inside words (`PATH` holds `PAT`, `PASSENGER` `PASS`).
pub const SECRET_WORDS: [&str; 5] = ["PAT", "PASS", "PASSWD", "DSN", "COOKIE"];

/// What `inherit = "core"` keeps for commands: what programs need to find
/// themselves, their files and the user's language. `LC_*` stands for every
/// locale variable.
pub const CORE_VARS: [&str; 14] = [
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP", "LANG",
    "LANGUAGE", "LC_*", "TERM", "TZ",
];

/// What a stdio MCP server gets besides [`CORE_VARS`] and its configured
/// `env`: the proxy settings, without which `npx -y …` or `uvx …` cannot
/// download the server behind a proxy, and the per-user runtime folder
/// (sockets of the user's session). Matched ignoring case, so `http_proxy`
/// passes too. Not part of the commands' `core`: a proxy URL may carry a
/// password (`http://user:pass@proxy`), and a command's output goes to the
/// model, while a server's environment does not.
pub const SERVER_EXTRA_VARS: [&str; 5] =
    ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "XDG_RUNTIME_DIR"];

/// Where a child's environment starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Inherit {
    /// All of axon's variables (secrets are still removed).
    #[default]
    All,
    /// Only [`CORE_VARS`].
    Core,
    /// Nothing; only `include` and `set` add variables.
    None,
}

/// `[shell_environment_policy]` as written in a config file. Every field is
/// optional, so files can be layered.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvPolicyConfig {
    pub inherit: Option<Inherit>,
    /// Keep variables whose names look like secrets (`*KEY*`, `*TOKEN*`, …).
    pub ignore_default_excludes: Option<bool>,
    /// Globs of variables passed even when `inherit` or the secret filter
    /// would drop them.
    #[serde(default)]
    pub include: Vec<String>,
    /// Globs of variables never passed.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Variables set to these values.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
}

impl EnvPolicyConfig {
    /// `other` layered over `self`: its `inherit` and switch win, patterns
    /// and variables add up.
    pub fn merge(&mut self, other: EnvPolicyConfig) {
        self.inherit = other.inherit.or(self.inherit);
        self.ignore_default_excludes =
            other.ignore_default_excludes.or(self.ignore_default_excludes);
        self.include.extend(other.include);
        self.exclude.extend(other.exclude);
        self.set.extend(other.set);
    }
}

/// A compiled policy; see the module documentation for the rules.
#[derive(Debug, Clone)]
pub struct EnvPolicy {
    inherit: Inherit,
    keep_secret_names: bool,
    include: GlobSet,
    /// `include` entries without wildcards, uppercased: the only way a
    /// configured key is let through.
    include_exact: BTreeSet<String>,
    exclude: GlobSet,
    core: GlobSet,
    set: BTreeMap<String, String>,
    /// Variables the configuration names as keys, uppercased.
    configured_keys: BTreeSet<String>,
}

impl Default for EnvPolicy {
    /// Everything but secrets: the policy when nothing is configured.
    fn default() -> Self {
        EnvPolicy::new(&EnvPolicyConfig::default(), Vec::<String>::new())
            .unwrap_or_else(|_| EnvPolicy::empty())
    }
}

impl EnvPolicy {
    /// Compiles `config`; `configured_keys` are the variables the
    /// configuration names as keys. A pattern that is not a valid glob is an
    /// error naming it.
    pub fn new(
        config: &EnvPolicyConfig,
        configured_keys: impl IntoIterator<Item = impl Into<String>>,
    ) -> Result<EnvPolicy, String> {
        Ok(EnvPolicy {
            inherit: config.inherit.unwrap_or_default(),
            keep_secret_names: config.ignore_default_excludes.unwrap_or(false),
            include: globs(&config.include, "include")?,
            include_exact: config
                .include
                .iter()
                .filter(|p| !p.contains(['*', '?', '[', '{']))
                .map(|p| p.to_uppercase())
                .collect(),
            exclude: globs(&config.exclude, "exclude")?,
            core: core_globs(CORE_VARS.iter()),
            set: config.set.clone(),
            configured_keys: configured_keys.into_iter().map(|k| k.into().to_uppercase()).collect(),
        })
    }

    /// What a stdio MCP server starts from before its configured `env`: the
    /// core variables and [`SERVER_EXTRA_VARS`], never a secret.
    pub fn mcp_server() -> EnvPolicy {
        let core = CORE_VARS.iter().chain(SERVER_EXTRA_VARS.iter());
        EnvPolicy { inherit: Inherit::Core, core: core_globs(core), ..EnvPolicy::default() }
    }

    /// Passes nothing; the fallback should the built-in patterns not compile.
    fn empty() -> EnvPolicy {
        EnvPolicy {
            inherit: Inherit::None,
            keep_secret_names: false,
            include: GlobSet::empty(),
            include_exact: BTreeSet::new(),
            exclude: GlobSet::empty(),
            core: GlobSet::empty(),
            set: BTreeMap::new(),
            configured_keys: BTreeSet::new(),
        }
    }

    /// The environment a child gets, built from axon's own.
    pub fn environment(&self) -> Vec<(OsString, OsString)> {
        self.apply(std::env::vars_os())
    }

    /// The environment a child gets, built from `vars`.
    pub fn apply(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        let mut out: BTreeMap<OsString, OsString> = vars
            .into_iter()
            .filter(|(name, value)| self.passes(name) && self.value_passes(name, value))
            .collect();
        for (name, value) in &self.set {
            out.insert(name.into(), value.into());
        }
        out.into_iter().collect()
    }

    /// Whether axon's variable `name` reaches the child (before `set`).
    pub fn passes(&self, name: &OsStr) -> bool {
        let name = name.to_string_lossy();
        let upper = name.to_uppercase();
        let included = self.include.is_match(name.as_ref());
        let inherited = match self.inherit {
            Inherit::All => true,
            Inherit::Core => self.core.is_match(name.as_ref()),
            Inherit::None => false,
        };
        if !(inherited || included) || self.exclude.is_match(name.as_ref()) {
            return false;
        }
        if self.configured_keys.contains(&upper) {
            return self.include_exact.contains(&upper);
        }
        included || self.keep_secret_names || !looks_secret(&upper)
    }

    /// Whether the value of a variable whose name passed may go too: not
    /// when it has a secret's shape, unless the user let such names through
    /// (`include`, `ignore_default_excludes`).
    fn value_passes(&self, name: &OsStr, value: &OsStr) -> bool {
        let text = name.to_string_lossy();
        // Names chosen one by one (`include`, the core set: an MCP server's
        // proxy URL may carry its password and must reach it) keep values.
        let chosen = self.include.is_match(text.as_ref())
            || (self.inherit == Inherit::Core && self.core.is_match(text.as_ref()));
        if self.keep_secret_names || chosen {
            return true;
        }
        let line = format!("{}={}", name.to_string_lossy(), value.to_string_lossy());
        axon_secrets::find(&line).is_empty()
    }

    /// Replaces `command`'s environment with this policy's.
    pub fn configure(&self, command: &mut tokio::process::Command) {
        command.env_clear().envs(self.environment());
    }
}

/// Whether an (uppercased) name contains a secret marker.
fn looks_secret(upper: &str) -> bool {
    SECRET_MARKERS.iter().any(|marker| upper.contains(marker))
        || upper.split('_').any(|word| SECRET_WORDS.contains(&word))
}

fn globs(patterns: &[String], field: &str) -> Result<GlobSet, String> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = GlobBuilder::new(pattern).case_insensitive(true).build().map_err(|e| {
            format!("shell_environment_policy.{field}: '{pattern}' is not a valid pattern ({e})")
        })?;
        set.add(glob);
    }
    set.build().map_err(|e| format!("shell_environment_policy.{field}: {e}"))
}

fn core_globs<'a>(names: impl Iterator<Item = &'a &'a str>) -> GlobSet {
    let core: Vec<String> = names.map(|v| (*v).to_string()).collect();
    globs(&core, "core").unwrap_or_else(|_| GlobSet::empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(names: &[&str]) -> Vec<(OsString, OsString)> {
        names.iter().map(|n| (OsString::from(n), OsString::from("v"))).collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        env.iter().map(|(n, _)| n.to_string_lossy().into_owned()).collect()
    }

    const AXON: &[&str] = &[
        "PATH",
        "HOME",
        "LC_ALL",
        "AXON_API_KEY",
        "OPENAI_API_KEY",
        "github_token",
        "DB_PASSWORD",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "MY_LLM",
        "CARGO_HOME",
        "AWS_SECRET_ACCESS_KEY",
    ];

    #[test]
    fn by_default_secrets_and_configured_keys_are_removed() {
        let policy = EnvPolicy::new(&EnvPolicyConfig::default(), ["MY_LLM"]).unwrap();
        assert_eq!(
            names(&policy.apply(vars(AXON))),
            ["CARGO_HOME", "HOME", "LC_ALL", "PATH"],
            "only variables that are neither secret-looking nor configured keys pass"
        );
        let unconfigured = EnvPolicy::default();
        assert!(names(&unconfigured.apply(vars(AXON))).contains(&"MY_LLM".to_string()));
    }

    #[test]
    fn common_secret_names_and_value_shapes_are_removed() {
        // Issue 30 §3: GITHUB_PAT, DB_PASS and DATABASE_URL passed.
        let token = ["ghp", "_KUlhpvEygmmEVggzhlkSHwb5RRKkW2X3UxHI"].concat();
        let env = [
            ("GITHUB_PAT", "x"),
            ("DB_PASS", "x"),
            ("DATABASE_URL", "postgres://app:pw@db/app"),
            ("SENTRY_DSN", "x"),
            ("MY_PASSPHRASE", "x"),
            ("UPSTREAM", "https://deploy:hunter2hunter2@git.example/r.git"),
            ("HELPER", token.as_str()),
            ("PATH", "/usr/bin:/bin"),
            ("PWD", "/w"),
            ("GIT_AUTHOR_NAME", "A Person"),
            ("SSH_AUTH_SOCK", "/tmp/ssh-abc/agent.1"),
            ("PASSENGER_HOME", "/opt/p"),
            ("LS_COLORS", "di=01;34:ln=01;36:so=01;35:pi=40;33:ex=01;32"),
        ];
        let vars: Vec<(OsString, OsString)> =
            env.iter().map(|(n, v)| (OsString::from(n), OsString::from(v))).collect();
        let passed = names(&EnvPolicy::default().apply(vars.clone()));
        assert_eq!(
            passed,
            ["GIT_AUTHOR_NAME", "LS_COLORS", "PASSENGER_HOME", "PATH", "PWD", "SSH_AUTH_SOCK"]
        );
        let config = EnvPolicyConfig { include: vec!["UPSTREAM".into()], ..Default::default() };
        let included = EnvPolicy::new(&config, Vec::<String>::new()).unwrap();
        assert!(names(&included.apply(vars)).contains(&"UPSTREAM".to_string()));
    }

    #[test]
    fn core_and_none_start_smaller() {
        let config = EnvPolicyConfig { inherit: Some(Inherit::Core), ..Default::default() };
        let core = EnvPolicy::new(&config, Vec::<String>::new()).unwrap();
        assert_eq!(names(&core.apply(vars(AXON))), ["HOME", "LC_ALL", "PATH"]);
        let config = EnvPolicyConfig {
            inherit: Some(Inherit::None),
            include: vec!["cargo_*".into()],
            set: [("X".to_string(), "1".to_string())].into(),
            ..Default::default()
        };
        let none = EnvPolicy::new(&config, Vec::<String>::new()).unwrap();
        assert_eq!(names(&none.apply(vars(AXON))), ["CARGO_HOME", "X"]);
    }

    #[test]
    fn mcp_servers_get_the_proxy_and_runtime_folder_but_commands_core_does_not() {
        let network = [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "NO_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "no_proxy",
            "all_proxy",
            "XDG_RUNTIME_DIR",
        ];
        let mut env = AXON.to_vec();
        env.extend(network);
        env.extend(["FTP_PROXY_USER", "XDG_CONFIG_HOME", "PROXY_TOKEN"]);
        let server = names(&EnvPolicy::mcp_server().apply(vars(&env)));
        let mut expected: Vec<&str> = ["HOME", "LC_ALL", "PATH"].into();
        expected.extend(network);
        expected.sort_unstable();
        assert_eq!(server, expected, "a server gets the core, the proxies and nothing else");

        let config = EnvPolicyConfig { inherit: Some(Inherit::Core), ..Default::default() };
        let shell = EnvPolicy::new(&config, Vec::<String>::new()).unwrap();
        let shell = names(&shell.apply(vars(&env)));
        assert_eq!(shell, ["HOME", "LC_ALL", "PATH"], "a command's core keeps proxies out");
    }

    #[test]
    fn include_exclude_and_the_switch() {
        let config = EnvPolicyConfig {
            include: vec!["GITHUB_*".into(), "*".into()],
            exclude: vec!["lc_*".into()],
            ..Default::default()
        };
        let policy = EnvPolicy::new(&config, ["MY_LLM"]).unwrap();
        let passed = names(&policy.apply(vars(AXON)));
        assert!(passed.contains(&"github_token".to_string()), "{passed:?}");
        assert!(!passed.contains(&"LC_ALL".to_string()), "exclude wins: {passed:?}");
        assert!(!passed.contains(&"MY_LLM".to_string()), "a wildcard never passes a key");
        let exact = EnvPolicyConfig { include: vec!["my_llm".into()], ..Default::default() };
        let policy = EnvPolicy::new(&exact, ["MY_LLM"]).unwrap();
        assert!(names(&policy.apply(vars(AXON))).contains(&"MY_LLM".to_string()));

        let keep = EnvPolicyConfig { ignore_default_excludes: Some(true), ..Default::default() };
        let policy = EnvPolicy::new(&keep, ["MY_LLM"]).unwrap();
        let passed = names(&policy.apply(vars(AXON)));
        assert!(passed.contains(&"DB_PASSWORD".to_string()) && !passed.contains(&"MY_LLM".into()));
    }

    #[test]
    fn layers_merge_and_bad_patterns_are_named() {
        let mut base: EnvPolicyConfig = toml_like(Some(Inherit::Core), &["A"]);
        base.merge(toml_like(None, &["B"]));
        assert_eq!(base.inherit, Some(Inherit::Core));
        assert_eq!(base.exclude, ["A", "B"]);
        let bad = EnvPolicyConfig { exclude: vec!["[".into()], ..Default::default() };
        let err = EnvPolicy::new(&bad, Vec::<String>::new()).unwrap_err();
        assert!(err.contains("exclude") && err.contains("'['"), "{err}");
    }

    fn toml_like(inherit: Option<Inherit>, exclude: &[&str]) -> EnvPolicyConfig {
        EnvPolicyConfig {
            inherit,
            exclude: exclude.iter().map(|s| (*s).to_string()).collect(),
            ..Default::default()
        }
    }
}
