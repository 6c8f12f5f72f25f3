//! `axon config show`: what is in effect and where it came from, secrets
//! masked.

use std::path::PathBuf;

use clap::Subcommand;

use axon_runtime::Project;

use crate::config::{Dirs, Effective, Overrides, env, mask};
use crate::{exit, say};

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the effective configuration (API keys masked).
    Show {
        /// The workspace whose `.axon/config.toml` applies.
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
    },
}

pub fn run(command: ConfigCommand) -> u8 {
    let ConfigCommand::Show { dir } = command;
    let project = match Project::load(&dir) {
        Ok(project) => project,
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    let (effective, dirs) = (&project.config, &project.dirs);
    let sources: Vec<String> = effective.sources.iter().map(|p| p.display().to_string()).collect();
    say(&format!(
        "# files read: {}",
        if sources.is_empty() { "none".to_string() } else { sources.join(", ") }
    ));
    say(&format!("# user config file: {}", dirs.config_file.display()));
    for warning in &effective.refused {
        say(&format!("# warning: {warning}"));
    }
    match effective.provider(&Overrides::default()) {
        Ok(p) => {
            say(&format!("provider = {:?}", p.name));
            say(&format!("kind = {:?}", format!("{:?}", p.kind).to_lowercase()));
            say(&format!("base_url = {:?}", p.base_url));
            say(&format!("model = {:?}", p.model));
            let key = match &p.api_key {
                Some(key) => format!("{:?}", mask(key)),
                None if p.requires_key => format!("\"\"  # not set: export {}=...", p.api_key_env),
                None => "\"\"  # not needed".to_string(),
            };
            say(&format!("api_key = {key}"));
            say(&format!("api_key_env = {:?}", p.api_key_env));
            let window = match p
                .context_window
                .or_else(|| axon_runtime::known_context_window(&p.model))
            {
                Some(window) => {
                    say(&format!("context_window = {window}"));
                    window
                }
                None => {
                    let window = axon_runtime::DEFAULT_CONTEXT_WINDOW;
                    say(&format!("context_window = {window}  # unless the server says at start"));
                    window
                }
            };
            match axon_runtime::default_max_tokens(&p, window) {
                Some(max) => say(&format!("max_tokens = {max}")),
                None => say("max_tokens = 0  # none sent"),
            }
            say(&format!("tool_protocol = {:?}", format!("{:?}", p.tool_protocol).to_lowercase()));
            for (name, value) in &p.headers {
                let lower = name.to_lowercase();
                let secret =
                    lower.contains("auth") || lower.contains("key") || lower.contains("token");
                let value = if secret { mask(value) } else { value.clone() };
                say(&format!("headers.{name:?} = {value:?}"));
            }
        }
        Err(e) => {
            say("provider = \"\"");
            // This is `config show`: the line sending the user here is
            // left out.
            for line in format!("{e:#}").lines().filter(|l| *l != axon_runtime::SEE_CONFIG_SHOW) {
                say(&format!("# {line}"));
            }
        }
    }
    for known in axon_runtime::PROVIDERS {
        let key = match env(known.key_var) {
            Some(_) => "set",
            None if known.requires_key => "not set",
            None => "not needed",
        };
        say(&format!(
            "# known provider {}: {} (model {}), key ${} {key}",
            known.name, known.base_url, known.default_model, known.key_var
        ));
    }
    let file = &effective.file;
    say(&format!("max_iterations = {}", file.max_iterations.unwrap_or(25)));
    say(&format!("approval = {:?}", file.approval.as_deref().unwrap_or("ask")));
    say(&format!("profile = {:?}", file.profile.as_deref().unwrap_or("code")));
    let secrets = file.secrets.unwrap_or_default();
    say(&format!("secrets = {:?}", secrets.name()));
    if secrets == axon_runtime::config::SecretsMode::Redact {
        say("# secrets in tool results and attachments are masked before the model sees them");
    }
    show_sandbox(effective, project.root());
    show_permissions(effective, dirs, project.root());
    say(&format!("# data folder: {}", dirs.data.display()));
    say(&format!("# cache folder: {}", dirs.cache.display()));
    if env("AXON_HOME").is_some() {
        say("# AXON_HOME is set: config, data and cache live under it");
    }
    exit::OK
}

/// The sandbox commands would run in here, and whether this machine
/// enforces it.
fn show_sandbox(effective: &Effective, root: &std::path::Path) {
    use axon_runtime::sandbox::Choice;
    let choice = match Choice::new(effective, None) {
        Ok(choice) => choice,
        Err(e) => {
            say(&format!("# sandbox: {e:#}"));
            return;
        }
    };
    say("[sandbox]");
    say(&format!("mode = {:?}", axon_runtime::safety_config::mode_name(choice.mode)));
    say(&format!("network = {}", choice.network));
    let roots: Vec<String> =
        choice.writable_roots.iter().map(|r| r.display().to_string()).collect();
    say(&format!("writable_roots = {roots:?}"));
    say(&format!("auto_approve = {}", choice.auto_approve));
    say(&format!("unsandboxed_under_yes = {:?}", choice.unsandboxed_under_yes.name()));
    say(&format!("mount_namespace = {}", choice.mount_namespace));
    if choice.mode == axon_protocol::SandboxMode::Off {
        say("# commands run unsandboxed, with your full rights");
        return;
    }
    match axon_runtime::sandbox::probe().can_enforce(&choice.policy(root)) {
        Ok(()) => say("# enforced on this machine (details: axon sandbox check)"),
        Err(why) => say(&format!("# NOT enforced here: {why}")),
    }
}

/// Every rule in effect, with the file it came from, and the trust file.
fn show_permissions(effective: &Effective, dirs: &Dirs, root: &std::path::Path) {
    say("[permissions]");
    let removed = effective.permissions.iter().any(|(_, f)| f.ask_secret_files == Some(false));
    say(&format!("ask_secret_files = {}", !removed));
    if !removed {
        say(&format!("# ask {}  built in", axon_runtime::SECRET_FILES.join(", ")));
    }
    for (path, file) in &effective.permissions {
        for (kind, rules) in [("allow", &file.allow), ("ask", &file.ask), ("deny", &file.deny)] {
            for rule in rules {
                say(&format!("# {kind} {rule:?}  from {}", path.display()));
            }
        }
    }
    let trust_file = axon_runtime::trust_path(&dirs.data, root);
    match axon_runtime::Trust::load(&dirs.data, root) {
        Ok(trust) => {
            for rule in &trust.allow {
                say(&format!("# allow {rule:?}  from {}", trust_file.display()));
            }
            for name in trust.mcp_servers.keys() {
                say(&format!("# trusted MCP server {name:?}  in {}", trust_file.display()));
            }
        }
        Err(e) => say(&format!("# the trust file cannot be read: {e}")),
    }
    say(&format!("# trust file: {}", trust_file.display()));
}
