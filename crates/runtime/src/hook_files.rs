//! Which hooks a session runs: the `[hooks]` tables of axon's config files
//! and the `hooks` of Claude Code's settings files (the user's, then the
//! workspace's), and the consent the workspace's need.
//!
//! A workspace's hooks are commands a repository asks to run, like its
//! MCP servers: they run with `--yes`, or once the user trusted them
//! (`axon hooks trust`, remembered in the workspace's trust file for
//! exactly what they run: the hook's command and the content of every
//! workspace file the command names); otherwise they are left out with a
//! warning that says how to allow them. Never in a read-only session.

use std::path::{Path, PathBuf};

use axon_core::ApprovalPolicy;
use axon_hooks::{HookEntry, HookFile, HookSource, Hooks, SourceFormat, claude_settings_files};

use crate::config::Effective;
use crate::servers::ServerConsent;

/// Every hook the config and settings files configure, consented or not.
/// A settings file axon cannot read is left out with a warning (in
/// [`Hooks::warnings`]'s place, the second value): a repository's broken
/// `.claude/settings.local.json` must not stop a session.
pub fn configured(effective: &Effective, workspace: &Path) -> (Hooks, Vec<String>) {
    let mut hooks = Hooks::new();
    let mut problems = Vec::new();
    for (path, config, from_workspace) in &effective.hooks {
        let source = HookSource {
            path: path.clone(),
            workspace: *from_workspace,
            format: SourceFormat::AxonToml,
        };
        hooks.add_config(config, source);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let files: Vec<HookFile> = claude_settings_files(workspace, home.as_deref());
    for file in &files {
        if let Err(e) = hooks.add_file(file) {
            problems.push(format!("{e}; its hooks are off"));
        }
    }
    problems.extend(hooks.warnings().iter().cloned());
    (hooks, problems)
}

/// What consent is remembered for, for one hook of the workspace.
pub fn fingerprint(entry: &HookEntry, workspace: &Path) -> String {
    use sha2::{Digest, Sha256};
    let mut text = format!("{} {} {}", entry.event.name(), entry.matcher, entry.command);
    let root = workspace.display().to_string();
    let expanded = entry
        .command
        .replace("${CLAUDE_PROJECT_DIR}", &root)
        .replace("$CLAUDE_PROJECT_DIR", &root)
        .replace("${AXON_WORKSPACE}", &root)
        .replace("$AXON_WORKSPACE", &root);
    // The words as the shell will see them (`"$CLAUDE_PROJECT_DIR"/x.sh`
    // is one word once its quotes go), and each piece between shell
    // operators, so `a.sh && b.sh` names both.
    let words = shlex::split(&expanded).unwrap_or_else(|| {
        expanded.split_whitespace().map(|w| w.replace(['"', '\''], "")).collect()
    });
    let pieces = words.iter().flat_map(|w| w.split([';', '&', '|', '(', ')', '<', '>']));
    for word in pieces.filter(|w| !w.is_empty()) {
        let Ok(path) = std::fs::canonicalize(workspace.join(word)) else { continue };
        if !path.starts_with(workspace) || !path.is_file() {
            continue;
        }
        let digest: String = match std::fs::read(&path) {
            Ok(bytes) => Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect(),
            Err(e) => format!("unreadable ({e})"),
        };
        text.push_str(&format!(" file {word:?} sha256 {digest}"));
    }
    text
}

/// The key a hook is remembered under in the trust file.
pub fn trust_key(entry: &HookEntry) -> String {
    format!(
        "{} {} [{}] {}",
        entry.source.path.display(),
        entry.event.name(),
        entry.matcher,
        entry.command
    )
}

/// Whether the user trusted this workspace hook as it is now.
pub fn trusted(entry: &HookEntry, data: &Path, workspace: &Path) -> bool {
    axon_permissions::Trust::load(data, workspace)
        .is_ok_and(|trust| trust.trusts_hook(&trust_key(entry), &fingerprint(entry, workspace)))
}

/// The hooks a session runs, and a warning for each workspace hook left
/// out.
pub fn in_effect(
    effective: &Effective,
    workspace: &Path,
    consent: &ServerConsent,
    approval: ApprovalPolicy,
) -> (Hooks, Vec<String>) {
    let (mut hooks, mut warnings) = configured(effective, workspace);
    let entries = hooks.list();
    let mut refused = Vec::new();
    for entry in entries.iter().filter(|e| e.source.workspace) {
        let allowed = approval != ApprovalPolicy::ReadOnly
            && (matches!(consent, ServerConsent::Allow)
                || trusted(entry, &effective.data, workspace));
        if !allowed {
            refused.push(entry.clone());
        }
    }
    if !refused.is_empty() {
        hooks.retain(|source| !source.workspace || !refused.iter().any(|e| &e.source == source));
        // Hooks of a file with some trusted and some not are all left out:
        // `retain` works per file, and a half-run file is harder to reason
        // about than none.
        let why = if approval == ApprovalPolicy::ReadOnly {
            "a read-only session runs no workspace hooks".to_string()
        } else {
            "run `axon hooks trust` to allow them as they are, or pass --yes".to_string()
        };
        let mut files: Vec<&PathBuf> = refused.iter().map(|e| &e.source.path).collect();
        files.dedup();
        for file in files {
            let count = refused.iter().filter(|e| &e.source.path == file).count();
            warnings.push(format!(
                "{} asks to run {count} hook command(s) that you have not allowed; they are off \
                 ({why})",
                file.display()
            ));
        }
    }
    (hooks, warnings)
}
