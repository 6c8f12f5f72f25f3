//! `axon hooks list | trust`: the hooks in effect for a workspace, from
//! which file, and consent for the workspace's own.

use std::path::{Path, PathBuf};

use axon_runtime::Project;
use axon_runtime::config::Effective;
use axon_runtime::hook_files;
use clap::Subcommand;

use crate::{exit, say};

#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// The hooks configured for this workspace: event, matcher, command,
    /// timeout, the file each comes from, and whether it runs.
    List {
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// Allow the workspace's hooks (.axon/config.toml, .claude/settings.json)
    /// as they are now; a changed command or script is off again until
    /// trusted again.
    Trust {
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
}

pub fn run(command: HooksCommand) -> u8 {
    let dir = match &command {
        HooksCommand::List { dir } | HooksCommand::Trust { dir } => dir,
    };
    let project = match Project::load(dir) {
        Ok(project) => project,
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    let (config, root) = (&project.config, project.root());
    let result = match command {
        HooksCommand::List { .. } => list(config, root),
        HooksCommand::Trust { .. } => trust(config, root),
    };
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("axon: {e:#}");
            exit::FAILED
        }
    }
}

fn list(config: &Effective, root: &Path) -> anyhow::Result<()> {
    let (hooks, warnings) = hook_files::configured(config, root);
    for warning in warnings {
        eprintln!("axon: warning: {warning}");
    }
    let entries = hooks.list();
    if entries.is_empty() {
        eprintln!(
            "axon: no hooks for {} (configure [[hooks.PreToolUse]] in config.toml, or a `hooks` \
             section in .claude/settings.json)",
            root.display()
        );
        return Ok(());
    }
    for entry in entries {
        let state = if !entry.source.workspace {
            "on"
        } else if hook_files::trusted(&entry, &config.data, root) {
            "on (trusted)"
        } else {
            "off until trusted (axon hooks trust)"
        };
        let matcher = if entry.matcher.is_empty() { "*" } else { entry.matcher.as_str() };
        say(&format!(
            "{:<16} {:<20} {}  [{}s, {}, {state}]",
            entry.event.name(),
            matcher,
            entry.command,
            entry.timeout.as_secs(),
            entry.source.path.display()
        ));
    }
    Ok(())
}

fn trust(config: &Effective, root: &Path) -> anyhow::Result<()> {
    let (hooks, _) = hook_files::configured(config, root);
    let workspace: Vec<_> = hooks.list().into_iter().filter(|e| e.source.workspace).collect();
    if workspace.is_empty() {
        eprintln!("axon: this workspace configures no hooks of its own");
        return Ok(());
    }
    axon_runtime::Trust::update(&config.data, root, |trust| {
        for entry in &workspace {
            trust.trust_hook(&hook_files::trust_key(entry), &hook_files::fingerprint(entry, root));
        }
    })
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    for entry in &workspace {
        say(&format!("trusted: {} {}", entry.event.name(), entry.command));
    }
    Ok(())
}
