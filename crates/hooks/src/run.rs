//! Running the hooks of one event.
//!
//! Every hook that matches runs at once (as in Claude Code), through
//! `sh -c COMMAND` in the workspace, with the event's JSON on stdin and
//! `CLAUDE_PROJECT_DIR` and `AXON_WORKSPACE` naming the workspace. The
//! same command configured twice for an event runs once.
//!
//! Guarantees: a pinned workspace hook ([`Hooks::pin_workspace`]) is
//! fingerprinted again right before each run and does not run if it
//! changed since it was allowed (unless the caller readmits it): the
//! outcome then warns, naming what changed and how to allow it again. A
//! workspace hook runs inside the session's sandbox when one is given
//! ([`Hooks::with_workspace_sandbox`]), and does not run if that sandbox
//! cannot be set up. A hook runs in its own process group, which is killed when
//! the hook ends (what it left running goes with it), when its timeout
//! passes, and when the run's future is dropped; the guardian in
//! `axon_process` kills it should axon die. A hook's stdout and
//! stderr are kept up to [`OUTPUT_CAP`] bytes each and the rest is read and
//! dropped, so a chatty hook neither fills memory nor blocks on a full
//! pipe. A hook that cannot start, times out, or fails is a warning in the
//! outcome, never an error: hooks never stop axon by failing.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use axon_process::{Capture, GroupChild, Keep, die_with_parent};
use futures_util::future::join_all;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::event::HookInput;
use crate::fingerprint::fingerprint;
use crate::hooks::{Hook, Hooks, SourceFormat, entry};
use crate::outcome::{Exit, HookOutcome};

/// Bytes of a hook's stdout (and of its stderr) that are kept.
pub const OUTPUT_CAP: usize = 64 * 1024;
/// The first [`OUTPUT_CAP`] bytes kept, the rest read and dropped.
const KEEP: Keep = Keep { head: OUTPUT_CAP, tail: 0 };
/// How long output is still read after the hook's group is killed (a
/// process that left the group may hold the pipe open).
const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// Characters of a command quoted in messages.
const LABEL_CHARS: usize = 80;

impl Hooks {
    /// Runs every hook configured for `input`'s event whose matcher
    /// matches, at once, and combines what they say. With no such hook the
    /// outcome is empty ("go on") and nothing is started.
    pub async fn run(&self, input: &HookInput) -> HookOutcome {
        let event = input.event();
        let target = input.data.match_target();
        let tool_event =
            matches!(event, crate::HookEvent::PreToolUse | crate::HookEvent::PostToolUse);
        let mut selected: Vec<&Hook> = Vec::new();
        for hook in self.hooks.iter().filter(|hook| hook.event == event) {
            let matches = match target {
                Some(name) if tool_event => hook.matcher.matches_tool(name),
                Some(value) => hook.matcher.matches_value(value),
                None => true,
            };
            if matches && !selected.iter().any(|chosen| chosen.command == hook.command) {
                selected.push(hook);
            }
        }
        if selected.is_empty() {
            return HookOutcome::default();
        }
        let axon_json = input.to_json(false).to_string();
        let claude_json = input.to_json(true).to_string();
        let runs = selected.iter().map(|hook| {
            let stdin = match hook.source.format {
                SourceFormat::AxonToml => axon_json.as_bytes(),
                SourceFormat::ClaudeSettings => claude_json.as_bytes(),
            };
            self.run_one(hook, stdin, &input.cwd)
        });
        let mut outcome = HookOutcome::default();
        for one in join_all(runs).await {
            outcome.merge(one);
        }
        outcome
    }

    /// Whether `hook` may run as it is now: not pinned, unchanged since it
    /// was, or readmitted; else the warning that it did not run.
    async fn still_allowed(&self, hook: &Hook) -> Result<(), String> {
        let (Some(pinned), Some(pins)) = (&hook.pinned, &self.pins) else { return Ok(()) };
        let (event, matcher, command) =
            (hook.event, hook.matcher.as_str().to_string(), hook.command.clone());
        let workspace = pins.workspace.clone();
        // Reading the files it names is blocking work.
        let now =
            tokio::task::spawn_blocking(move || fingerprint(event, &matcher, &command, &workspace))
                .await
                .map_err(|e| {
                    format!("hook {} did not run: checking it failed: {e}", label(hook))
                })?;
        if &now == pinned || (pins.readmit)(&entry(hook), &now) {
            return Ok(());
        }
        Err(format!(
            "hook {} did not run: it changed since it was allowed ({} changed). Look at it, then \
             run `axon hooks trust` to allow it as it is now",
            label(hook),
            pinned.changes(&now)
        ))
    }

    async fn run_one(&self, hook: &Hook, stdin: &[u8], cwd: &Path) -> HookOutcome {
        let label = label(hook);
        if let Err(warning) = self.still_allowed(hook).await {
            return HookOutcome::warning(warning);
        }
        let prepared = match (&self.sandbox, hook.source.workspace) {
            (Some(sandbox), true) => match axon_sandbox::prepare(sandbox.policy()) {
                Ok(prepared) => Some(prepared),
                Err(e) => {
                    return HookOutcome::warning(format!(
                        "hook {label} did not run: its sandbox could not be set up ({e}); \
                         `axon sandbox check` shows what this machine enforces"
                    ));
                }
            },
            _ => None,
        };
        let mut command = Command::new("sh");
        if let Some(env) = &self.env {
            env.configure(&mut command);
        }
        command
            .arg("-c")
            .arg(&hook.command)
            .current_dir(cwd)
            .env("CLAUDE_PROJECT_DIR", cwd)
            .env("AXON_WORKSPACE", cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        die_with_parent(&mut command);
        if let Some(prepared) = prepared {
            prepared.apply_tokio(&mut command);
        }
        let mut child = match axon_process::spawn_listed(&mut command) {
            Ok(child) => child,
            Err(e) => {
                return HookOutcome::warning(format!(
                    "hook {label} could not start in {}: {e}",
                    cwd.display()
                ));
            }
        };
        let stdout = Capture::spawn(child.stdout.take(), KEEP);
        let stderr = Capture::spawn(child.stderr.take(), KEEP);
        let feeder = child.stdin.take().map(|mut pipe| {
            let input = stdin.to_vec();
            // A hook need not read its input: a closed pipe is fine.
            tokio::spawn(async move {
                let _ = pipe.write_all(&input).await;
            })
        });
        let mut running = GroupChild::new(child);
        let status = tokio::time::timeout(hook.timeout, running.wait()).await;
        running.kill_group();
        if let Some(feeder) = feeder {
            feeder.abort();
        }
        let (stdout, stderr) = (stdout.finish(DRAIN_GRACE).await, stderr.finish(DRAIN_GRACE).await);
        let (stdout, stderr) = (stdout.head, stderr.head);
        match status {
            Err(_) => {
                let _ = running.wait().await;
                HookOutcome::warning(format!(
                    "hook {label} timed out after {} s and was killed",
                    hook.timeout.as_secs()
                ))
            }
            Ok(Err(e)) => HookOutcome::warning(format!("hook {label}: waiting for it failed: {e}")),
            Ok(Ok(status)) => HookOutcome::from_exit(
                hook.event,
                &label,
                Exit { code: status.code(), stdout, stderr },
            ),
        }
    }
}

/// `` `command` (from FILE) ``, the command cut to a readable length.
fn label(hook: &Hook) -> String {
    let mut command: String = hook.command.chars().take(LABEL_CHARS).collect();
    if command.len() < hook.command.len() {
        command.push('…');
    }
    format!("`{command}` (from {})", hook.source.path.display())
}
