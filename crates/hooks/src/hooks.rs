//! The hooks in effect: loaded from their files in order, each remembering
//! where it came from.
//!
//! Guarantees: files load in the order given (the user's before the
//! workspace's, see [`claude_settings_files`]) and hooks keep that order in
//! [`Hooks::list`] and in a run's combined outcome. A missing file is not
//! an error (most users have none); a file that cannot be read or parsed,
//! or whose `hooks` section has a wrong shape, is an error naming the file.
//! Every hook knows its [`HookSource`], so the caller can ask the user's
//! consent for the workspace's hooks and drop those refused
//! ([`Hooks::retain`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axon_process::EnvPolicy;
use axon_tools::CommandSandbox;

use crate::config::{ConfigError, DEFAULT_TIMEOUT_SECS, HooksConfig};
use crate::event::HookEvent;
use crate::fingerprint::{Fingerprint, fingerprint};
use crate::matcher::Matcher;

/// Where a hook was configured.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HookSource {
    /// The file (for axon's TOML, the config file the `[hooks]` table is in).
    pub path: PathBuf,
    /// The file belongs to the workspace (it came with the project, so the
    /// user has not necessarily seen it): its hooks need the user's consent.
    pub workspace: bool,
    pub format: SourceFormat,
}

/// The dialect of a hook file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceFormat {
    /// axon's TOML config: a `[hooks]` table. Hooks are told axon's tool
    /// names.
    AxonToml,
    /// A Claude Code settings file: its `hooks` object. Hooks are told
    /// Claude's tool names and argument names (see [`crate::names`]).
    ClaudeSettings,
}

/// A file to load hooks from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFile {
    pub path: PathBuf,
    pub format: SourceFormat,
    pub workspace: bool,
}

/// Claude Code's settings files for `workspace`, in load order: the user's
/// `~/.claude/settings.json` (when `home` is known), then the workspace's
/// `.claude/settings.json` and `.claude/settings.local.json`. A workspace
/// that is the home folder itself has its file once, as the user's.
pub fn claude_settings_files(workspace: &Path, home: Option<&Path>) -> Vec<HookFile> {
    let mut files = Vec::new();
    if let Some(home) = home {
        files.push(HookFile {
            path: home.join(".claude").join("settings.json"),
            format: SourceFormat::ClaudeSettings,
            workspace: false,
        });
    }
    for name in ["settings.json", "settings.local.json"] {
        let path = workspace.join(".claude").join(name);
        if !files.iter().any(|file| file.path == path) {
            files.push(HookFile { path, format: SourceFormat::ClaudeSettings, workspace: true });
        }
    }
    files
}

/// A hook file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum HooksError {
    #[error("cannot read hooks from {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{} is not valid JSON: {source}; fix or remove it", path.display())]
    Json { path: PathBuf, source: serde_json::Error },
    #[error("{} is not valid TOML: {message}", path.display())]
    Toml { path: PathBuf, message: String },
    #[error("{}: {source}", path.display())]
    Config { path: PathBuf, source: ConfigError },
}

/// One configured hook.
#[derive(Debug, Clone)]
pub(crate) struct Hook {
    pub event: HookEvent,
    pub matcher: Matcher,
    pub command: String,
    pub timeout: Duration,
    pub source: Arc<HookSource>,
    /// A workspace hook as it was allowed ([`Hooks::pin_workspace`]): it
    /// runs only while it still is.
    pub pinned: Option<Fingerprint>,
}

/// What [`Hooks::list`] shows of one hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookEntry {
    pub event: HookEvent,
    /// As configured; empty when it matches everything by omission.
    pub matcher: String,
    pub command: String,
    pub timeout: Duration,
    pub source: HookSource,
}

/// The hooks in effect for a session, and how their commands run.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    pub(crate) hooks: Vec<Hook>,
    warnings: Vec<String>,
    /// The environment hooks see; `None`: axon's own, as Claude Code does.
    pub(crate) env: Option<Arc<EnvPolicy>>,
    /// What pinned workspace hooks are checked against before each run.
    pub(crate) pins: Option<Pins>,
    /// The sandbox workspace hooks run in (`None`: unconfined, as the
    /// user's own hooks always run).
    pub(crate) sandbox: Option<Arc<CommandSandbox>>,
}

/// Asked when a pinned hook changed: whether the hook as it is now is
/// allowed after all (the user trusted it again mid-session).
pub type Readmit = Arc<dyn Fn(&HookEntry, &Fingerprint) -> bool + Send + Sync>;

/// The workspace pinned hooks are fingerprinted in, and who may readmit a
/// changed one.
#[derive(Clone)]
pub(crate) struct Pins {
    pub workspace: PathBuf,
    pub readmit: Readmit,
}

impl std::fmt::Debug for Pins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pins").field("workspace", &self.workspace).finish_non_exhaustive()
    }
}

impl Hooks {
    /// No hooks.
    pub fn new() -> Hooks {
        Hooks::default()
    }

    /// The hooks of `files`, in order; a missing file is skipped.
    pub fn load(files: &[HookFile]) -> Result<Hooks, HooksError> {
        let mut hooks = Hooks::new();
        for file in files {
            hooks.add_file(file)?;
        }
        Ok(hooks)
    }

    /// Adds the hooks of `file`, after those already loaded. A missing
    /// file adds nothing.
    pub fn add_file(&mut self, file: &HookFile) -> Result<(), HooksError> {
        let text = match std::fs::read_to_string(&file.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => return Err(HooksError::Read { path: file.path.clone(), source }),
        };
        let config_error = |source| HooksError::Config { path: file.path.clone(), source };
        let config = match file.format {
            SourceFormat::ClaudeSettings => {
                let settings: serde_json::Value = serde_json::from_str(&text)
                    .map_err(|source| HooksError::Json { path: file.path.clone(), source })?;
                match settings.get("hooks") {
                    None | Some(serde_json::Value::Null) => return Ok(()),
                    Some(section) => {
                        HooksConfig::from_claude_json(section).map_err(config_error)?
                    }
                }
            }
            SourceFormat::AxonToml => {
                let settings: toml::Table = toml::from_str(&text).map_err(|e| {
                    HooksError::Toml { path: file.path.clone(), message: e.to_string() }
                })?;
                match settings.get("hooks") {
                    None => return Ok(()),
                    Some(section) => HooksConfig::from_toml_value(section).map_err(config_error)?,
                }
            }
        };
        let source =
            HookSource { path: file.path.clone(), workspace: file.workspace, format: file.format };
        self.add_config(&config, source);
        Ok(())
    }

    /// Adds already parsed hooks (axon's `[hooks]` table the caller read
    /// with its config), remembering `source` for each.
    pub fn add_config(&mut self, config: &HooksConfig, source: HookSource) {
        let source = Arc::new(source);
        let place = source.path.display().to_string();
        self.warnings.extend(config.warnings.iter().map(|warning| format!("{place}: {warning}")));
        for (event, group) in &config.groups {
            let (matcher, warning) = Matcher::new(group.matcher.as_deref());
            if let Some(warning) = warning {
                self.warnings.push(format!("{place}: hooks.{event}: {warning}"));
            }
            if !event.uses_matcher() && !matcher.matches_all() {
                self.warnings.push(format!(
                    "{place}: hooks.{event}: `matcher` is ignored; {event} hooks always run"
                ));
            }
            for hook in &group.hooks {
                self.hooks.push(Hook {
                    event: *event,
                    matcher: matcher.clone(),
                    command: hook.command.clone(),
                    timeout: Duration::from_secs(hook.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS)),
                    source: Arc::clone(&source),
                    pinned: None,
                });
            }
        }
    }

    /// Hook commands see `env`'s filtered environment instead of axon's
    /// whole environment.
    pub fn with_env_policy(mut self, env: Arc<EnvPolicy>) -> Hooks {
        self.env = Some(env);
        self
    }

    /// Pins every workspace hook as it is now (`workspace` is the
    /// workspace's canonical path) and answers each with its fingerprint,
    /// for the caller's consent check. From then on a workspace hook runs
    /// only while its fingerprint is the one pinned (checked right before
    /// every run), or `readmit` allows the changed one; otherwise the run
    /// is a warning saying what changed and how to allow it again.
    pub fn pin_workspace(
        &mut self,
        workspace: &Path,
        readmit: Readmit,
    ) -> Vec<(HookEntry, Fingerprint)> {
        let mut pinned = Vec::new();
        for hook in self.hooks.iter_mut().filter(|hook| hook.source.workspace) {
            let now = fingerprint(hook.event, hook.matcher.as_str(), &hook.command, workspace);
            hook.pinned = Some(now.clone());
            pinned.push((entry(hook), now));
        }
        self.pins = Some(Pins { workspace: workspace.to_path_buf(), readmit });
        pinned
    }

    /// Workspace hooks run inside `sandbox` (the session's, as its `shell`
    /// commands do); `None` leaves them unconfined (the user turned the
    /// sandbox off, or this machine cannot enforce it).
    pub fn with_workspace_sandbox(mut self, sandbox: Option<Arc<CommandSandbox>>) -> Hooks {
        self.sandbox = sandbox;
        self
    }

    /// Keeps only the hooks whose source `keep` accepts (the workspace's
    /// hooks the user consented to, say).
    pub fn retain(&mut self, mut keep: impl FnMut(&HookSource) -> bool) {
        self.hooks.retain(|hook| keep(&hook.source));
    }

    /// Every source that configured at least one hook, in load order.
    pub fn sources(&self) -> Vec<HookSource> {
        let mut sources: Vec<HookSource> = Vec::new();
        for hook in &self.hooks {
            if !sources.contains(&hook.source) {
                sources.push(HookSource::clone(&hook.source));
            }
        }
        sources
    }

    /// The hooks in effect, in the order they were loaded.
    pub fn list(&self) -> Vec<HookEntry> {
        self.hooks.iter().map(entry).collect()
    }

    /// What loading skipped (unknown events, non-command hooks, matchers
    /// that are not regexes), each naming its file. For the user.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Whether any hook is configured for `event` (the caller may skip
    /// building an input when none is).
    pub fn has(&self, event: HookEvent) -> bool {
        self.hooks.iter().any(|hook| hook.event == event)
    }
}

/// What [`Hooks::list`] shows of `hook`.
pub(crate) fn entry(hook: &Hook) -> HookEntry {
    HookEntry {
        event: hook.event,
        matcher: hook.matcher.as_str().to_string(),
        command: hook.command.clone(),
        timeout: hook.timeout,
        source: HookSource::clone(&hook.source),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_settings_come_before_the_workspace_s() {
        let files = claude_settings_files(Path::new("/w"), Some(Path::new("/home/u")));
        let paths: Vec<_> = files.iter().map(|f| (f.path.clone(), f.workspace)).collect();
        assert_eq!(
            paths,
            vec![
                (PathBuf::from("/home/u/.claude/settings.json"), false),
                (PathBuf::from("/w/.claude/settings.json"), true),
                (PathBuf::from("/w/.claude/settings.local.json"), true),
            ]
        );
        let at_home = claude_settings_files(Path::new("/home/u"), Some(Path::new("/home/u")));
        assert_eq!(at_home.len(), 2);
        assert!(!at_home[0].workspace);
    }
}
