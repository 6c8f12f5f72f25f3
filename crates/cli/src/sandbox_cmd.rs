//! `axon sandbox check` and `axon sandbox run`: what this machine enforces,
//! and a command run exactly as the `shell` tool would run it (same
//! environment policy, sandbox and process group), for users to try their
//! build under it. Output is not captured: the command talks to the
//! terminal.

use std::path::PathBuf;
use std::process::Stdio;

use axon_protocol::SandboxMode;
use axon_runtime::Project;
use axon_runtime::safety_config::parse_mode;
use axon_runtime::sandbox::{self, Choice};
use clap::Subcommand;

use crate::{exit, say};

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Print what this machine's kernel enforces, and try it.
    Check {
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
        /// The mode to check (default: the config's, else workspace-write).
        #[arg(long, value_parser = parse_mode)]
        sandbox: Option<SandboxMode>,
    },
    /// Run a command in the workspace as the shell tool would, sandboxed.
    Run {
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: PathBuf,
        /// The mode (default: the config's, else workspace-write).
        #[arg(long, value_parser = parse_mode)]
        sandbox: Option<SandboxMode>,
        /// The command and its arguments (one argument is a shell command
        /// line, run with `sh -c`).
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
}

pub async fn run(command: SandboxCommand) -> u8 {
    match command {
        SandboxCommand::Check { dir, sandbox } => check(&dir, sandbox),
        SandboxCommand::Run { dir, sandbox, command } => run_command(&dir, sandbox, &command).await,
    }
}

/// The workspace as a project, and the sandbox chosen for it.
fn load(dir: &std::path::Path, flag: Option<SandboxMode>) -> Result<(Project, Choice), String> {
    let project = Project::load(dir).map_err(|e| format!("{e:#}"))?;
    let choice = Choice::new(&project.config, flag).map_err(|e| format!("{e:#}"))?;
    Ok((project, choice))
}

fn check(dir: &std::path::Path, flag: Option<SandboxMode>) -> u8 {
    let (project, choice) = match load(dir, flag) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("axon: {e}");
            return exit::USAGE;
        }
    };
    let (root, config, dirs) = (project.root(), &project.config, &project.dirs);
    for warning in &config.refused {
        say(&format!("# warning: {warning}"));
    }
    let support = axon_runtime::sandbox::probe();
    for line in support.describe() {
        say(&line);
    }
    say(&format!("mode: {}", choice.summary()));
    if choice.mode == SandboxMode::WorkspaceWrite {
        say(&support.describe_confinement(&choice.policy(root)));
    }
    if choice.mode == SandboxMode::Off {
        say("commands run unsandboxed, with your full rights (the mode is off)");
        return exit::OK;
    }
    let setup = match sandbox::setup(&choice, root, &support, dirs) {
        Ok(setup) => setup,
        Err(e) => {
            say(&format!("not enforced: {e:#}"));
            return exit::FAILED;
        }
    };
    if let Some(warning) = &setup.warning {
        say(&format!("note: {warning}"));
    }
    let Some(tool) = setup.tool else {
        say(&format!("not enforced: {}", setup.info.detail));
        return exit::FAILED;
    };
    let policy = tool.policy();
    match axon_runtime::sandbox::self_test(policy) {
        Ok(()) => {
            say(&format!(
                "enforced: a {} command was tried here and confined as documented",
                policy.mode.name()
            ));
            exit::OK
        }
        Err(e) => {
            say(&format!("not enforced: the self-test failed: {e}"));
            exit::FAILED
        }
    }
}

async fn run_command(dir: &std::path::Path, flag: Option<SandboxMode>, argv: &[String]) -> u8 {
    let (project, choice) = match load(dir, flag) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("axon: {e}");
            return exit::USAGE;
        }
    };
    let (root, config) = (project.root(), &project.config);
    let setup = match sandbox::setup(&choice, root, &axon_runtime::sandbox::probe(), &project.dirs)
    {
        Ok(setup) => setup,
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::FAILED;
        }
    };
    if let Some(warning) = &setup.warning {
        eprintln!("axon: {warning}");
        if setup.tool.is_none() {
            return exit::FAILED;
        }
    }
    let env = match config.env_policy(&[]) {
        Ok(env) => env,
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    let line = match argv {
        [one] => one.clone(),
        many => match shlex::try_join(many.iter().map(String::as_str)) {
            Ok(line) => line,
            Err(e) => {
                eprintln!("axon: cannot quote the command: {e}");
                return exit::USAGE;
            }
        },
    };
    let mut command = match project.command(&line, &env, &setup) {
        Ok(command) => command,
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::FAILED;
        }
    };
    // Ctrl-C reaches it directly: it is in the terminal's foreground group.
    command.stdin(Stdio::inherit());
    match &setup.tool {
        Some(tool) => eprintln!("axon: running sandboxed ({})", tool.describe()),
        None => eprintln!("axon: running unsandboxed (the mode is off)"),
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("axon: cannot start the command: {e}");
            return exit::FAILED;
        }
    };
    // Ctrl-C goes to the whole foreground group, the command included; axon
    // waits for it to end and gives its status back.
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            _ = tokio::signal::ctrl_c() => {}
        }
    };
    match status {
        Ok(status) => match status.code() {
            Some(code) => u8::try_from(code).unwrap_or(exit::FAILED),
            None => {
                use std::os::unix::process::ExitStatusExt;
                status
                    .signal()
                    .map_or(exit::FAILED, |s| u8::try_from(128 + s).unwrap_or(exit::FAILED))
            }
        },
        Err(e) => {
            eprintln!("axon: cannot wait for the command: {e}");
            exit::FAILED
        }
    }
}
