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
//!
//! Guarantees: a workspace hook is pinned as it was allowed and checked
//! again right before every run (a hook or script changed mid-session does
//! not run; the warning says how to trust it again), and it runs inside the
//! session's sandbox, as the `shell` tool's commands do (the user's own
//! hooks run as the user configured them, unconfined).

use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// What consent is remembered for, for one hook of the workspace (see
/// [`axon_hooks::fingerprint`]: its command and every workspace file it can
/// name, directly, through `cd` or a nested `sh -c`).
pub fn fingerprint(entry: &HookEntry, workspace: &Path) -> String {
    axon_hooks::fingerprint(entry.event, &entry.matcher, &entry.command, workspace).to_string()
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
    trusted_as(entry, &fingerprint(entry, workspace), data, workspace)
}

/// Whether the user trusted this workspace hook as `fingerprint` describes it.
fn trusted_as(entry: &HookEntry, fingerprint: &str, data: &Path, workspace: &Path) -> bool {
    axon_permissions::Trust::load(data, workspace)
        .is_ok_and(|trust| trust.trusts_hook(&trust_key(entry), fingerprint))
}

/// The hooks a session runs, and a warning for each workspace hook left
/// out. Each workspace hook let in is pinned as it was allowed: it runs
/// only while it stays so (or the trust file allows it as it has become),
/// checked before every run.
pub fn in_effect(
    effective: &Effective,
    workspace: &Path,
    consent: &ServerConsent,
    approval: ApprovalPolicy,
) -> (Hooks, Vec<String>) {
    let (mut hooks, mut warnings) = configured(effective, workspace);
    let data = effective.data.clone();
    let root = workspace.to_path_buf();
    let readmit: axon_hooks::Readmit =
        Arc::new(move |entry: &HookEntry, now: &axon_hooks::Fingerprint| {
            trusted_as(entry, &now.to_string(), &data, &root)
        });
    let pinned = hooks.pin_workspace(workspace, readmit);
    let mut refused = Vec::new();
    let mut to_trust = Vec::new();
    for (entry, now) in &pinned {
        let now = now.to_string();
        let trusted = trusted_as(entry, &now, &effective.data, workspace);
        let allowed = approval != ApprovalPolicy::ReadOnly
            && (trusted || matches!(consent, ServerConsent::Allow));
        if !allowed {
            refused.push(entry.clone());
        } else if !trusted {
            // The first session here, under `--yes`: what it runs is what
            // later `--yes` sessions may run (ServerConsent::settle).
            to_trust.push((trust_key(entry), now));
        }
    }
    if !to_trust.is_empty() {
        let saved = axon_permissions::Trust::update(&effective.data, workspace, |trust| {
            for (key, fingerprint) in &to_trust {
                trust.trust_hook(key, fingerprint);
            }
        });
        if let Err(e) = saved {
            warnings.push(format!(
                "workspace hooks run, but your consent could not be remembered: {e}"
            ));
        }
    }
    if !refused.is_empty() {
        hooks.retain(|source| !source.workspace || !refused.iter().any(|e| &e.source == source));
        // Hooks of a file with some trusted and some not are all left out:
        // `retain` works per file, and a half-run file is harder to reason
        // about than none.
        let why = if approval == ApprovalPolicy::ReadOnly {
            "a read-only session runs no workspace hooks".to_string()
        } else if matches!(consent, ServerConsent::AllowTrusted) {
            "--yes does not cover them: they are new or changed since a session here last \
             ran, and a command may have written them; run `axon hooks trust` to allow them \
             as they are"
                .to_string()
        } else {
            "run `axon hooks trust` to allow them as they are".to_string()
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
