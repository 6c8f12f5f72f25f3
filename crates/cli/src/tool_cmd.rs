//! `axon tool list` and `axon tool call`: the built-in tools by hand.

use std::io::Read;
use std::path::PathBuf;

use axon_runtime::{Profile, Project, ToolContext, Workspace};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::Value;

use crate::{exit, say};

#[derive(Debug, Subcommand)]
pub enum ToolCommand {
    /// List the tools of a profile with their descriptions.
    List {
        #[command(flatten)]
        target: Target,
        /// Print the full specs (name, description, input schema) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Call one tool with JSON arguments and print its output.
    Call {
        /// The tool's name, as `axon tool list` shows it.
        name: String,
        /// The arguments as a JSON object; `-` reads them from stdin. Defaults to `{}`.
        arguments: Option<String>,
        #[command(flatten)]
        target: Target,
        /// Print the output as JSON (`{"content": [...], "is_error": bool}`).
        #[arg(long)]
        json: bool,
        /// The sandbox `shell` runs in (default: the config's, else
        /// workspace-write); `off` runs the command unconfined.
        #[arg(long, value_parser = axon_runtime::safety_config::parse_mode)]
        sandbox: Option<axon_protocol::SandboxMode>,
    },
}

#[derive(Debug, Args)]
pub struct Target {
    /// The workspace folder the tools are confined to.
    #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Which tool set: a code workspace or a notes vault.
    #[arg(long, value_enum, default_value_t = ProfileArg::Code)]
    profile: ProfileArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ProfileArg {
    Code,
    Vault,
}

impl From<ProfileArg> for Profile {
    fn from(p: ProfileArg) -> Self {
        match p {
            ProfileArg::Code => Profile::Code,
            ProfileArg::Vault => Profile::Vault,
        }
    }
}

pub async fn run(command: ToolCommand) -> u8 {
    match command {
        ToolCommand::List { target, json } => list(&target, json),
        ToolCommand::Call { name, arguments, target, json, sandbox } => {
            call(&name, arguments.as_deref(), &target, json, sandbox).await
        }
    }
}

/// The web settings of `target`'s folder, as far as they can be read (a
/// folder or config that cannot be is reported by the call itself).
fn web_settings(target: &Target) -> axon_runtime::web_config::WebFile {
    Workspace::new(&target.dir)
        .ok()
        .and_then(|workspace| Project::of(workspace).ok())
        .map(|project| project.config.file.web)
        .unwrap_or_default()
}

/// The tools by hand: the profile's and the web tools.
fn hand_registry(target: &Target) -> axon_runtime::ToolRegistry {
    let env = axon_runtime::process::EnvPolicy::default();
    axon_runtime::hand_tools(Profile::from(target.profile), &web_settings(target), env, None)
}

fn list(target: &Target, json: bool) -> u8 {
    let registry = hand_registry(target);
    if json {
        let specs: Vec<_> = registry.specs().collect();
        return match serde_json::to_string_pretty(&specs) {
            Ok(text) => {
                say(&text);
                exit::OK
            }
            Err(e) => {
                eprintln!("axon: cannot encode the tool specs: {e}");
                exit::FAILED
            }
        };
    }
    let width = registry.names().map(str::len).max().unwrap_or(0);
    for spec in registry.specs() {
        let summary = spec.description.split(". ").next().unwrap_or_default();
        let summary = summary.trim_end_matches('.');
        let marker = if spec.annotations.read_only { " " } else { "*" };
        say(&format!("{marker} {:width$}  {summary}.", spec.name));
    }
    say("\n* changes files or runs commands");
    exit::OK
}

async fn call(
    name: &str,
    arguments: Option<&str>,
    target: &Target,
    json: bool,
    sandbox: Option<axon_protocol::SandboxMode>,
) -> u8 {
    let registry = hand_registry(target);
    if !registry.contains(name) {
        let names: Vec<&str> = registry.names().collect();
        eprintln!(
            "axon: Tool '{name}' is not available in the {} profile. Available: {}",
            format!("{:?}", target.profile).to_lowercase(),
            names.join(", ")
        );
        return exit::USAGE;
    }
    let arguments = match parse_arguments(arguments) {
        Ok(value) => value,
        Err(message) => {
            eprintln!("axon: {message}");
            return exit::USAGE;
        }
    };
    let workspace = match Workspace::new(&target.dir) {
        Ok(workspace) => workspace,
        Err(e) => {
            eprintln!("axon: {e}");
            return exit::USAGE;
        }
    };
    // `shell` sees what the configuration lets it see, in the sandbox the
    // flag or the configuration chose, as in a run.
    let set_up = Project::of(workspace.clone()).and_then(|project| {
        let env = project.config.env_policy(&[])?;
        let sandbox = if name == "shell" {
            project.sandbox_for_direct_calls(sandbox, "axon tool call")?
        } else {
            None
        };
        Ok((env, sandbox))
    });
    let registry = match set_up {
        Ok((env, sandbox)) => axon_runtime::hand_tools(
            Profile::from(target.profile),
            &web_settings(target),
            env,
            sandbox,
        ),
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::FAILED;
        }
    };
    let output = registry.call(&ToolContext::new(workspace), name, arguments).await;
    if json {
        match serde_json::to_string(&output) {
            Ok(text) => say(&text),
            Err(e) => {
                eprintln!("axon: cannot encode the tool output: {e}");
                return exit::FAILED;
            }
        }
    } else if output.is_error {
        eprintln!("{}", output.text_content());
    } else {
        say(&output.text_content());
    }
    if output.is_error { exit::FAILED } else { exit::OK }
}

pub(crate) fn parse_arguments(arguments: Option<&str>) -> Result<Value, String> {
    let text = match arguments {
        None => return Ok(Value::Object(Default::default())),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read the arguments from stdin: {e}"))?;
            text
        }
        Some(text) => text.to_string(),
    };
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| format!("the arguments are not valid JSON ({e}); pass an object such as '{{\"path\": \"README.md\"}}'"))?;
    if value.is_object() {
        Ok(value)
    } else {
        Err(format!("the arguments must be a JSON object, not {value}"))
    }
}
