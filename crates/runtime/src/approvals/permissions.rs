//! The session's standing permissions: what the config files' rules, the
//! workspace's trust file and the sandbox say of each call before the
//! approval policy does (`axon_core::Permissions`).
//!
//! Guarantees: a deny rule refuses whatever the policy; an ask rule, and a
//! command that would run outside the sandbox it was meant to run in, is
//! asked about even under `--yes`; an allow rule, and a command the
//! sandbox confines, runs without asking. Rules an "always" answer adds go
//! to the trust file under the user's data folder, never the repository.

use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock};

use anyhow::{Context, Result};
use axon_core::{Gate, Permissions, UnderAuto};
use axon_permissions::{Kind, RuleSet, Source, Trust, Verdict};
use axon_protocol::{RuleSuggestion, ToolCall, ToolSpec};
use axon_tools::Workspace;

use crate::config::Effective;
use crate::safety_config::UnsandboxedUnderYes;

/// How `shell` commands will run, as the gate needs to know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Commands {
    /// Confined by an enforced sandbox; `auto_approve`: they run unasked;
    /// `under_yes`: what a call asking to leave it gets under `--yes`.
    Sandboxed { auto_approve: bool, under_yes: UnsandboxedUnderYes },
    /// The sandbox is off by the user's choice: the policy decides.
    Unsandboxed,
    /// A sandbox was asked for but this machine cannot enforce it (the
    /// reason): every command is asked about.
    Unenforced(String),
}

pub struct SessionPermissions {
    rules: RwLock<RuleSet>,
    data_dir: PathBuf,
    workspace: Workspace,
    commands: Commands,
}

/// The refusal of `unsandboxed: true` under `--yes` by default.
pub const UNSANDBOXED_UNDER_YES: &str = "Refused: --yes allows sandboxed commands, not leaving \
     the sandbox. Run the command sandboxed, or tell the user what it needs: they can set \
     `unsandboxed_under_yes = \"allow\"` (or \"ask\") under [sandbox] in their own config \
     (~/.config/axon/config.toml), run without --yes to be asked, or run axon with --sandbox off.";

/// The trust file's source name in messages.
const TRUST: &str = "this workspace's trust file";

impl SessionPermissions {
    /// The rules of every config file (a rule that does not parse is an
    /// error naming the rule and its file) and of the workspace's trust file.
    pub fn load(
        config: &Effective,
        data_dir: &Path,
        workspace: &Workspace,
        commands: Commands,
    ) -> Result<SessionPermissions> {
        Ok(SessionPermissions {
            rules: RwLock::new(load_rules(config, data_dir, workspace.root())?),
            data_dir: data_dir.to_path_buf(),
            workspace: workspace.clone(),
            commands,
        })
    }

    /// What an "always" answer to `call` would save. Nothing when no rule
    /// could make it run unasked: it leaves the sandbox (allow rules never
    /// cover that), or an ask rule asked (it would still win).
    pub fn suggest(&self, call: &ToolCall) -> Option<RuleSuggestion> {
        if self.leaves_sandbox(call) || matches!(self.verdict(call), Verdict::Ask { .. }) {
            return None;
        }
        let suggestion =
            axon_permissions::suggest(&call.name, &call.arguments, self.workspace.root())?;
        Some(RuleSuggestion { rules: suggestion.rules, description: suggestion.description })
    }

    /// Adds `rule`'s rules for the rest of this session and saves them in
    /// the workspace's trust file for later ones. The error says why they
    /// could not be saved (they still apply to this session).
    pub fn remember(&self, rule: &RuleSuggestion) -> Result<(), String> {
        self.rules
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .parse_list(Kind::Allow, &rule.rules, &Source::new(TRUST))
            .map_err(|e| e.to_string())?;
        let (_, added) = Trust::update(&self.data_dir, self.workspace.root(), |trust| {
            trust.add_allow(&rule.rules)
        })
        .map_err(|e| e.to_string())?;
        added.map(|_| ()).map_err(|e| e.to_string())
    }
}

/// Every config file's rules and the workspace's trust file's, parsed; a
/// rule that does not parse is an error naming it and its file.
pub fn load_rules(config: &Effective, data_dir: &Path, workspace: &Path) -> Result<RuleSet> {
    let mut rules = RuleSet::new();
    // Reading a file that usually holds secrets is asked about, unless
    // the user's own config removed these rules (a workspace's cannot).
    if config.permissions.iter().all(|(_, file)| file.ask_secret_files != Some(false)) {
        rules.parse_list(
            Kind::Ask,
            axon_permissions::SECRET_FILES,
            &Source::new(axon_permissions::SECRET_FILES_SOURCE),
        )?;
    }
    for (path, file) in &config.permissions {
        let source = Source::new(path.display().to_string());
        for (kind, list) in
            [(Kind::Allow, &file.allow), (Kind::Ask, &file.ask), (Kind::Deny, &file.deny)]
        {
            rules.parse_list(kind, list, &source)?;
        }
    }
    let trust = Trust::load(data_dir, workspace)?;
    let path = axon_permissions::trust_path(data_dir, workspace);
    rules
        .parse_list(Kind::Allow, &trust.allow, &Source::new(TRUST))
        .with_context(|| format!("in {}", path.display()))?;
    Ok(rules)
}

impl SessionPermissions {
    /// Whether the rules deny `read_file` of a path (relative to the
    /// root): tools that read many files at once leave such files out.
    /// Deny rules come from the config files only, never from an "always",
    /// so the rules as they are now decide for the whole session.
    pub fn read_denied(&self) -> axon_tools::ReadDenied {
        let rules = self.rules.read().unwrap_or_else(PoisonError::into_inner).clone();
        let root = self.workspace.root().to_path_buf();
        std::sync::Arc::new(move |relative: &str| {
            let arguments = serde_json::json!({ "path": relative });
            matches!(rules.decide("read_file", &arguments, &root), Verdict::Deny { .. })
        })
    }

    /// What the rules say of `call`. A `path` argument is judged both as
    /// written and as the workspace resolves it (a symlink inside the
    /// workspace can name another place): deny or ask if either spelling
    /// says so, allow only if both do.
    fn verdict(&self, call: &ToolCall) -> Verdict {
        let rules = self.rules.read().unwrap_or_else(PoisonError::into_inner);
        let root = self.workspace.root();
        let written = rules.decide(&call.name, &call.arguments, root);
        if call.name == "apply_patch" {
            return worse(written, self.patch_resolved(&rules, call));
        }
        let resolved = call
            .arguments
            .get("path")
            .and_then(|path| path.as_str())
            .and_then(|path| self.workspace.resolve(path).ok())
            .map(|resolved| self.workspace.relative(resolved.path()))
            .filter(|relative| Some(relative.as_str()) != call.arguments["path"].as_str());
        let Some(relative) = resolved else { return written };
        let mut arguments = call.arguments.clone();
        arguments["path"] = serde_json::Value::String(relative);
        let physical = rules.decide(&call.name, &arguments, root);
        worse(written, Some(physical))
    }

    /// An `apply_patch` call's files as the workspace resolves them, those
    /// spelled otherwise in the patch, judged as files the patch creates
    /// (so `write_file` deny and ask rules hold too); `None` when every
    /// file is spelled as it resolves.
    fn patch_resolved(&self, rules: &RuleSet, call: &ToolCall) -> Option<Verdict> {
        let input = call.arguments.get("input").and_then(|v| v.as_str())?;
        let mut headers = String::new();
        for path in axon_tools::patch_paths(input) {
            let Ok(resolved) = self.workspace.resolve(&path) else { continue };
            let relative = self.workspace.relative(resolved.path());
            if relative != path {
                headers.push_str(&format!("*** Add File: {relative}\n"));
            }
        }
        if headers.is_empty() {
            return None;
        }
        let arguments = serde_json::json!({ "input": headers });
        Some(rules.decide(&call.name, &arguments, self.workspace.root()))
    }

    /// A `shell` call that would run unconfined although the session has a
    /// sandbox mode: asked for `unsandboxed`, or the mode cannot be enforced.
    fn leaves_sandbox(&self, call: &ToolCall) -> bool {
        if call.name != "shell" {
            return false;
        }
        let unsandboxed = call.arguments.get("unsandboxed").and_then(|v| v.as_bool()) == Some(true);
        match &self.commands {
            Commands::Sandboxed { .. } => unsandboxed,
            Commands::Unenforced(_) => true,
            Commands::Unsandboxed => false,
        }
    }
}

/// Of a call's verdict as written and as resolved, the one that holds:
/// deny or ask if either says so, allow only if both do.
fn worse(written: Verdict, physical: Option<Verdict>) -> Verdict {
    let Some(physical) = physical else { return written };
    let rank = |v: &Verdict| match v {
        Verdict::Deny { .. } => 3,
        Verdict::Ask { .. } => 2,
        Verdict::None => 1,
        Verdict::Allow { .. } => 0,
    };
    if rank(&physical) > rank(&written) { physical } else { written }
}

impl Permissions for SessionPermissions {
    fn gate(&self, call: &ToolCall, _spec: &ToolSpec) -> Gate {
        let leaves_sandbox = self.leaves_sandbox(call);
        match self.verdict(call) {
            Verdict::Deny { rule, source } => {
                return Gate::Deny(format!(
                    "Refused by the rule deny \"{rule}\" in {source}. Do not try this another way; \
                     tell the user what you wanted to run and why."
                ));
            }
            Verdict::Ask { rule, source } => {
                return Gate::Confirm(format!(
                    "Refused: this call needs the user's approval (ask: {rule}; from {source}), \
                     and no one can give it here."
                ));
            }
            // An allow rule never lets a command out of the sandbox: a
            // rule for `echo` written for sandboxed runs must not let
            // `echo … >> ~/.bashrc` run unconfined unasked.
            Verdict::Allow { .. } if !leaves_sandbox => return Gate::Allow,
            Verdict::Allow { .. } | Verdict::None => {}
        }
        if call.name != "shell" {
            return Gate::Policy;
        }
        match &self.commands {
            Commands::Unsandboxed => Gate::Policy,
            Commands::Sandboxed { under_yes, .. } if leaves_sandbox => Gate::LeaveSandbox {
                ask: "Refused: running a command outside the sandbox needs the user's approval, \
                      and no one can give it here. Run it sandboxed, or tell the user what it \
                      needs (they can run axon with --sandbox off)."
                    .to_string(),
                under_auto: match under_yes {
                    UnsandboxedUnderYes::Refuse => UnderAuto::Refuse(UNSANDBOXED_UNDER_YES.into()),
                    UnsandboxedUnderYes::Ask => UnderAuto::Ask,
                    UnsandboxedUnderYes::Allow => UnderAuto::Allow,
                },
            },
            Commands::Sandboxed { auto_approve: true, .. } => Gate::Allow,
            Commands::Sandboxed { auto_approve: false, .. } => Gate::Policy,
            Commands::Unenforced(why) => Gate::Confirm(format!(
                "Refused: the sandbox cannot be enforced here ({why}), so every command needs the \
                 user's approval, and no one can give it here. The user can run axon with \
                 --sandbox off to run commands unsandboxed."
            )),
        }
    }
}
