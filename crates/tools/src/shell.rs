//! `shell`: run a command with `sh -c` in the workspace.
//!
//! The command runs in its own process group, so a timeout, a cancelled call
//! (the future dropped) or the command's end kills everything it started,
//! grandchildren included; what detached itself with `setsid` is killed when
//! axon leaves (see `axon_process`), and the whole group dies with axon
//! even when axon is killed. The command sees axon's environment filtered by
//! an [`EnvPolicy`]: never the user's API keys. Output is read concurrently
//! from both pipes into buffers that keep the head and tail of very long
//! output. The result always shows the exit code, stdout and stderr, even
//! when empty.
//!
//! With a [`CommandSandbox`], the command runs under the OS sandbox
//! (`axon_sandbox`: Landlock and seccomp, installed between fork and exec):
//! if the sandbox cannot be set up the command does not run. A call with
//! `unsandboxed: true` runs without it; the session's permissions make sure
//! the user approved that. A sandboxed command that fails gets a note
//! saying what the sandbox refuses, so the model can tell the user instead
//! of retrying blindly.
//!
//! With `background: true` the command starts the same way (`Shell::command`)
//! and returns its id at once; `background.rs` keeps it, its output and its
//! group.
//!
//! The preview is the command and its working folder (workspace-relative),
//! after the same checks the run makes before starting anything.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axon_protocol::{Preview, ToolAnnotations, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::process::Command;

use crate::background::Jobs;
use crate::error::ToolError;
use crate::preview::invalid;
use crate::registry::{ToolContext, TypedTool};
use axon_process::EnvPolicy;
use axon_process::{Capture, GroupChild, Keep, die_with_parent};

const DEFAULT_TIMEOUT_MS: u64 = 120_000;
const MAX_TIMEOUT_MS: u64 = 600_000;
/// Bytes kept from the start and from the end of each stream.
const KEEP: Keep = Keep { head: 24 * 1024, tail: 24 * 1024 };
/// How long output from the killed group is still read after the command ends.
const DRAIN_GRACE: Duration = Duration::from_millis(300);

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShellArgs {
    /// The command line, run with `sh -c`.
    pub command: String,
    /// Milliseconds before the command and everything it started are killed. Defaults to 120000, at most 600000.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Folder to run in, relative to the workspace root. Defaults to the root.
    #[serde(default)]
    pub workdir: Option<String>,
    /// Run outside the sandbox. Only for a command that needs what the sandbox refuses (the network, writing outside the workspace or into .git); the user is asked first.
    #[serde(default)]
    pub unsandboxed: Option<bool>,
    /// Start the command and return its id at once, without waiting: for servers and long builds. Read its output with shell_output, stop it with shell_kill. It runs until it ends, is killed, or the session ends (timeout_ms applies only if given).
    #[serde(default)]
    pub background: Option<bool>,
}

/// The sandbox `shell` commands run in: its policy, and the private temp
/// folder the policy names (removed when the last holder goes).
#[derive(Debug)]
pub struct CommandSandbox {
    policy: axon_sandbox::Policy,
    _temp: tempfile::TempDir,
    /// Whether a call may ask for `unsandboxed` (a session's gate asks the
    /// user first); `false` where nobody can approve it (`axon mcp serve`,
    /// `axon tool call`), with the reason to give.
    no_leaving: Option<String>,
}

impl CommandSandbox {
    /// `policy` with `temp` as its temp folder.
    pub fn new(mut policy: axon_sandbox::Policy, temp: tempfile::TempDir) -> CommandSandbox {
        policy.temp = temp.path().to_path_buf();
        CommandSandbox { policy, _temp: temp, no_leaving: None }
    }

    /// The same sandbox where no call may leave it: `unsandboxed: true` is
    /// refused with `why` (which says how the user can run commands
    /// unsandboxed instead).
    pub fn without_leaving(mut self, why: impl Into<String>) -> CommandSandbox {
        self.no_leaving = Some(why.into());
        self
    }

    pub fn policy(&self) -> &axon_sandbox::Policy {
        &self.policy
    }

    /// `workspace-write, network off`.
    pub fn describe(&self) -> String {
        let network = if self.policy.network { "network on" } else { "network off" };
        format!("{}, {network}", self.policy.mode.name())
    }

    /// The rule that most likely refused a failed command, read from its
    /// output (`None` for a failure the sandbox does not explain, such as
    /// a failing test, which must not invite requests to leave it).
    fn refusal(&self, stdout: &str, stderr: &str) -> Option<String> {
        let confinement = axon_sandbox::probe().confinement(&self.policy);
        let output = format!("{stdout}\n{stderr}");
        axon_sandbox::explain::refusal(&self.policy, confinement, &output)
    }

    /// What a refused command's result says: the rule, what the sandbox
    /// allows, and what the user can do.
    fn note(&self, rule: &str) -> String {
        let confinement = axon_sandbox::probe().confinement(&self.policy);
        let how = match confinement {
            axon_sandbox::Confinement::Namespace(_) => "mount namespace + Landlock + seccomp",
            axon_sandbox::Confinement::LandlockOnly => "Landlock + seccomp, no mount namespace",
        };
        let mut note = format!(
            "\n[sandbox] Refused by the sandbox ({}, {how}): {rule}.",
            self.policy.mode.name()
        );
        if !self.policy.network {
            note.push(' ');
            note.push_str(axon_sandbox::network_off_note());
        }
        note.push_str(" If it failed because of the sandbox, tell the user. ");
        note.push_str(&axon_sandbox::explain::remedies(&self.policy));
        note.push_str(
            " You may call shell again with unsandboxed: true only if the user can approve it.",
        );
        note
    }
}

/// The `shell` tool; its commands get the environment `env` allows, inside
/// `sandbox` when there is one.
pub struct Shell {
    pub env: Arc<EnvPolicy>,
    pub sandbox: Option<Arc<CommandSandbox>>,
    /// The session's background commands.
    pub jobs: Arc<Jobs>,
}

impl TypedTool for Shell {
    type Args = ShellArgs;
    const NAME: &'static str = "shell";

    fn description(&self) -> String {
        let mut text = "Run a shell command (`sh -c`) in the workspace and return its exit code, \
         stdout and stderr. Stdin is empty; nothing is interactive. timeout_ms (default 120000) \
         kills the command and everything it started. Background processes are stopped when the \
         command returns; start servers and other long-running commands with background=true \
         (then shell_output reads what they print and shell_kill stops them). \
         API keys and other secret variables are not in the environment. Prefer read_file, search \
         and glob for reading and finding files."
            .to_string();
        if let Some(sandbox) = &self.sandbox {
            let policy = sandbox.policy();
            text.push_str(&format!(
                " Commands run sandboxed ({}{}): {}; set unsandboxed only when a command needs \
                 more, and say why.",
                policy.mode.name(),
                if policy.network { "" } else { ", network off" },
                match policy.mode {
                    axon_sandbox::Mode::ReadOnly => "they can write only in $TMPDIR",
                    _ =>
                        "they can write inside the workspace (not a repository's .git config, \
                          hooks or info, nor .axon, .mcp.json or .claude settings, agents and \
                          skills) and $TMPDIR",
                }
            ));
        }
        text
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::DESTRUCTIVE
    }

    async fn run(&self, ctx: &ToolContext, args: ShellArgs) -> Result<ToolOutput, ToolError> {
        let mut prepared = self.command(ctx, &args)?;
        if args.background == Some(true) {
            let timeout = args.timeout_ms.map(|ms| Duration::from_millis(ms.max(1)));
            return self.jobs.start(prepared, &args.command, timeout).map(ToolOutput::text);
        }
        let command = &mut prepared.command;
        let sandbox = self.sandbox_for(&args);
        let timeout = Duration::from_millis(
            args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS).clamp(1, MAX_TIMEOUT_MS),
        );
        command.stdout(Stdio::piped()).stderr(Stdio::piped());

        let started = Instant::now();
        let mut child = axon_process::spawn_listed(command)
            .map_err(|e| ToolError::failed(format!("Failed to start `sh`: {e}")))?;
        let stdout = Capture::spawn(child.stdout.take(), KEEP);
        let stderr = Capture::spawn(child.stderr.take(), KEEP);
        let mut running = GroupChild::new(child);

        let status = tokio::time::timeout(timeout, running.wait()).await;
        // Whatever the command left running goes with it.
        running.kill_group();
        let (stdout, stderr) = (stdout.finish(DRAIN_GRACE).await, stderr.finish(DRAIN_GRACE).await);
        let (stdout_text, stderr_text) = (stdout.joined(), stderr.joined());
        let elapsed = started.elapsed();

        match status {
            Err(_) => {
                let _ = running.wait().await;
                Ok(ToolOutput::error(format!(
                    "Command timed out after {} ms and was killed.\n{}",
                    timeout.as_millis(),
                    render_streams(&stdout_text, &stderr_text)
                )))
            }
            Ok(Err(e)) => Err(ToolError::failed(format!("Failed to wait for the command: {e}"))),
            Ok(Ok(status)) => {
                let code = describe_status(&status);
                let streams = render_streams(&stdout_text, &stderr_text);
                let elapsed = elapsed.as_secs_f64();
                if status.success() {
                    return Ok(ToolOutput::text(format!("{code} ({elapsed:.1}s)\n{streams}")));
                }
                // The first line is what a terminal shows of a result: it
                // names the rule, not only the exit code.
                let refusal =
                    sandbox.and_then(|s| Some((s, s.refusal(&stdout_text, &stderr_text)?)));
                let body = match refusal {
                    Some((sandbox, rule)) => format!(
                        "{code} ({elapsed:.1}s); the sandbox may have refused it: {rule}\n\
                         {streams}{}",
                        sandbox.note(&rule)
                    ),
                    None => format!("{code} ({elapsed:.1}s)\n{streams}"),
                };
                Ok(ToolOutput::error(body))
            }
        }
    }

    fn preview(&self, ctx: &ToolContext, args: &ShellArgs) -> Option<Preview> {
        Some(match checked_workdir(&ctx.workspace, args) {
            Ok((workdir, _)) => Preview::Command {
                command: args.command.clone(),
                workdir: ctx.workspace.relative(workdir.path()),
                sandbox: self.sandbox_for(args).map(|sandbox| sandbox.describe()),
            },
            Err(e) => invalid(&e),
        })
    }
}

impl Shell {
    /// The command a call runs, ready to spawn: `sh -c` in the checked
    /// working folder, with the policy's environment, in a process group of
    /// its own that dies with axon, inside the call's sandbox (or refused
    /// when the sandbox cannot be set up). Foreground and background
    /// commands both start here; the caller sets up stdout and stderr.
    fn command(&self, ctx: &ToolContext, args: &ShellArgs) -> Result<ShellCommand, ToolError> {
        let (workdir, workdir_handle) = checked_workdir(&ctx.workspace, args)?;
        if args.unsandboxed == Some(true)
            && let Some(why) = self.sandbox.as_ref().and_then(|s| s.no_leaving.as_ref())
        {
            return Err(ToolError::failed(why.clone()));
        }
        let sandbox = self.sandbox_for(args);
        let prepared = match sandbox {
            Some(sandbox) => Some(axon_sandbox::prepare(sandbox.policy()).map_err(|e| {
                ToolError::failed(format!(
                    "The command did not run: its sandbox could not be set up ({e}). Tell the \
                     user: `axon sandbox check` shows what this machine enforces, and \
                     `--sandbox off` runs commands unsandboxed."
                ))
            })?),
            None => None,
        };

        let mut command = Command::new("sh");
        self.env.configure(&mut command);
        command
            .arg("-c")
            .arg(&args.command)
            .current_dir(workdir_handle.cwd())
            .env("PWD", workdir.path())
            .stdin(Stdio::null())
            .env("PAGER", "cat")
            .env("GIT_PAGER", "cat")
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        die_with_parent(&mut command);
        if let Some(prepared) = prepared {
            prepared.apply_tokio(&mut command);
        }
        Ok(ShellCommand { command, _workdir: workdir_handle })
    }

    /// The sandbox a call runs in: the session's, unless it asked to run
    /// unsandboxed (which the session's permissions had the user approve).
    fn sandbox_for(&self, args: &ShellArgs) -> Option<&Arc<CommandSandbox>> {
        self.sandbox.as_ref().filter(|_| args.unsandboxed != Some(true))
    }
}

/// The checks made before a command starts, shared with the preview: a
/// command to run, and a folder inside the workspace to run it in, held
/// open.
fn checked_workdir(
    workspace: &crate::workspace::Workspace,
    args: &ShellArgs,
) -> Result<(crate::resolved::Resolved, Workdir), ToolError> {
    if args.command.trim().is_empty() {
        return Err(ToolError::failed("command is empty"));
    }
    let workdir = workspace.resolve(args.workdir.as_deref().unwrap_or("."))?;
    let handle = open_workdir(workspace, &workdir)?;
    Ok((workdir, handle))
}

fn render_streams(stdout: &str, stderr: &str) -> String {
    let show = |s: &str| {
        if s.is_empty() { "(empty)".to_string() } else { s.trim_end().to_string() }
    };
    format!("stdout:\n{}\nstderr:\n{}", show(stdout), show(stderr))
}

pub(crate) fn describe_status(status: &std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit code: {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    "exit status unknown".to_string()
}

/// A command ready to start, and the working folder it starts in, which
/// must stay open until it is spawned.
pub(crate) struct ShellCommand {
    pub(crate) command: Command,
    _workdir: Workdir,
}

/// The working folder, held open while the command starts.
struct Workdir {
    dir: cap_std::fs::Dir,
    /// Where `/proc` is missing, the path (checked, but racy).
    fallback: std::path::PathBuf,
}

impl Workdir {
    /// What the child changes into: `/proc/self/fd/N` names the open folder
    /// itself, so the child starts in the folder that was checked even if
    /// its name was swapped for a symlink since. The child inherits the
    /// handle until it executes `sh` (it is close-on-exec).
    fn cwd(&self) -> std::path::PathBuf {
        use std::os::fd::AsRawFd;
        let by_handle = std::path::PathBuf::from(format!("/proc/self/fd/{}", self.dir.as_raw_fd()));
        if std::path::Path::new("/proc/self/fd").is_dir() {
            by_handle
        } else {
            self.fallback.clone()
        }
    }
}

fn open_workdir(
    workspace: &crate::workspace::Workspace,
    workdir: &crate::resolved::Resolved,
) -> Result<Workdir, ToolError> {
    let rel = workspace.relative(workdir.path());
    crate::read::require_folder(
        workdir,
        &rel,
        "a file",
        "give the folder to run the command in as workdir",
    )?;
    let dir = workdir.open_dir().map_err(|e| ToolError::io("open folder", &rel, &e))?;
    Ok(Workdir { dir, fallback: workdir.path().to_path_buf() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn commands_get_the_environment_the_policy_builds() {
        use axon_process::env_policy::{EnvPolicyConfig, Inherit};
        let dir = tempfile::tempdir().unwrap();
        let config = EnvPolicyConfig {
            inherit: Some(Inherit::None),
            set: [("ONLY".to_string(), "this".to_string())].into(),
            ..Default::default()
        };
        let shell = Shell {
            env: Arc::new(EnvPolicy::new(&config, Vec::<String>::new()).unwrap()),
            sandbox: None,
            jobs: Arc::default(),
        };
        let ctx = ToolContext::new(crate::Workspace::new(dir.path()).unwrap());
        let args = ShellArgs {
            command: "/usr/bin/env".into(),
            timeout_ms: None,
            workdir: None,
            unsandboxed: None,
            background: None,
        };
        let text = shell.run(&ctx, args).await.unwrap().text_content();
        assert!(text.contains("ONLY=this"), "{text}");
        // The test runner's own variables (CARGO_*, PATH) stay behind.
        assert!(!text.contains("CARGO") && !text.contains("PATH="), "{text}");
    }
}
