//! `axon permissions list | rm`: the permission rules in effect for a
//! workspace, and revoking the ones "always" saved. What is listed and how
//! a rule is removed is `axon_runtime::saved_rules`; this only prints.

use std::path::PathBuf;

use axon_runtime::Project;
use axon_runtime::saved_rules;
use clap::Subcommand;

use crate::{exit, say};

#[derive(Debug, Subcommand)]
pub enum PermissionsCommand {
    /// The rules "always" saved for this workspace (numbered, in its trust
    /// file under the data folder) and the config files' rules.
    List {
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
    /// Remove a rule "always" saved: its number in `axon permissions list`
    /// or its text (`'shell(cargo test:*)'`). Sessions started after it
    /// ask again.
    Rm {
        /// The rule's number or text.
        rule: String,
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
}

pub fn run(command: PermissionsCommand) -> u8 {
    let dir = match &command {
        PermissionsCommand::List { dir } | PermissionsCommand::Rm { dir, .. } => dir,
    };
    let project = match Project::load(dir) {
        Ok(project) => project,
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    let (config, root) = (&project.config, project.root());
    let result = match &command {
        PermissionsCommand::List { .. } => {
            saved_rules::list(config, root).map(|list| say(&list.render()))
        }
        PermissionsCommand::Rm { rule, .. } => {
            saved_rules::remove(&config.data, root, rule).map(|removed| {
                say(&format!("removed: allow {removed} (sessions started from now on ask again)"))
            })
        }
    };
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("axon: {e:#}");
            exit::FAILED
        }
    }
}
