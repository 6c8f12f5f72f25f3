//! `git clone --depth 1` of a configured skill repository, run as axon runs
//! its helpers.
//!
//! What it guarantees: git runs in a process group of its own that dies
//! with axon (`axon_process::die_with_parent_std`, and the guardian holds
//! the group while it runs), and the whole group (git's ssh or helper
//! children too) is killed when the clone takes longer than
//! [`CLONE_TIMEOUT`] and when it ends; git sees an environment built by an
//! [`EnvPolicy`] (never one of axon's secrets) and never prompts; it clones
//! into a temporary folder renamed into place only when complete, so a
//! failed or cut clone leaves no half a cache. Errors are messages a user
//! can act on (git missing, the time limit, git's own last line).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use axon_process::{EnvPolicy, StdGroupChild};

/// How long one clone may take.
pub const CLONE_TIMEOUT: Duration = Duration::from_secs(120);

/// Clones `repo` into `target` (its parent created, `fallback_parent` when
/// it has none), within [`CLONE_TIMEOUT`].
pub(crate) fn clone_repo(
    repo: &str,
    target: &Path,
    fallback_parent: &Path,
    env: &EnvPolicy,
) -> Result<(), String> {
    clone_within(repo, target, fallback_parent, env, CLONE_TIMEOUT)
}

fn clone_within(
    repo: &str,
    target: &Path,
    fallback_parent: &Path,
    env: &EnvPolicy,
    timeout: Duration,
) -> Result<(), String> {
    let parent = target.parent().unwrap_or(fallback_parent);
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let partial = target.with_extension("partial");
    let _ = std::fs::remove_dir_all(&partial);
    let mut command = Command::new("git");
    command
        .args(["clone", "--depth", "1", "--quiet", "--", repo])
        .arg(&partial)
        .env_clear()
        .envs(env.environment())
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    axon_process::die_with_parent_std(&mut command);
    let child = axon_process::spawn_listed_std(&mut command)
        .map_err(|e| format!("cannot run git (is it installed?): {e}"))?;
    let mut git = StdGroupChild::new(child);
    let deadline = Instant::now() + timeout;
    let status = loop {
        match git.child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                drop(git);
                let _ = std::fs::remove_dir_all(&partial);
                return Err(format!("git clone of {repo} took longer than {}s", timeout.as_secs()));
            }
            Err(e) => return Err(format!("git clone of {repo} failed: {e}")),
        }
    };
    // What git left behind in its group goes with it, so nothing holds
    // its stderr open below.
    git.kill_group();
    if !status.success() {
        let mut stderr = String::new();
        if let Some(mut pipe) = git.child.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        let _ = std::fs::remove_dir_all(&partial);
        let detail = stderr.lines().last().unwrap_or("").trim().to_string();
        return Err(format!("git clone of {repo} failed: {detail}"));
    }
    std::fs::rename(&partial, target)
        .map_err(|e| format!("cannot move the clone into {}: {e}", target.display()))
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use std::collections::BTreeMap;

    use axon_process::env_policy::{EnvPolicyConfig, Inherit};

    use super::*;

    /// git with the `ext::` transport allowed, so a "repository" can be a
    /// command; with only PATH and HOME from axon.
    fn ext_git() -> EnvPolicy {
        let set = BTreeMap::from([
            ("GIT_CONFIG_COUNT".to_string(), "1".to_string()),
            ("GIT_CONFIG_KEY_0".to_string(), "protocol.ext.allow".to_string()),
            ("GIT_CONFIG_VALUE_0".to_string(), "always".to_string()),
        ]);
        let config = EnvPolicyConfig {
            inherit: Some(Inherit::None),
            include: vec!["PATH".into(), "HOME".into()],
            set,
            ..EnvPolicyConfig::default()
        };
        EnvPolicy::new(&config, Vec::<String>::new()).unwrap()
    }

    /// Whether `pid` is gone (or a zombie waiting for init).
    fn gone(pid: &str) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => {
                stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z'))
            }
        }
    }

    #[test]
    fn a_clone_past_its_time_is_killed_with_its_children_and_leaves_no_cache() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        // git runs this as its transport: a grandchild of axon, in git's group.
        let repo = format!("ext::sh -c echo% $$% >{}% &&% exec% sleep% 60", pid_file.display());
        let target = dir.path().join("cache/skill");
        let err = clone_within(&repo, &target, dir.path(), &ext_git(), Duration::from_secs(2))
            .unwrap_err();
        assert!(err.contains("took longer than 2s"), "{err}");
        assert!(!target.exists() && !target.with_extension("partial").exists());
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        // Room for a busy machine: the kill is sent; its reaping may lag.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !gone(pid.trim()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(gone(pid.trim()), "the transport's sleep outlived the clone");
    }

    #[test]
    fn a_failed_clone_says_what_git_said_and_leaves_no_cache() {
        let dir = tempfile::tempdir().unwrap();
        let missing = format!("file://{}", dir.path().join("nowhere").display());
        let target = dir.path().join("cache/skill");
        let err = clone_repo(&missing, &target, dir.path(), &EnvPolicy::default()).unwrap_err();
        assert!(err.starts_with(&format!("git clone of {missing} failed: ")), "{err}");
        assert!(err.len() > format!("git clone of {missing} failed: ").len(), "{err}");
        assert!(!target.exists() && !target.with_extension("partial").exists());
    }
}
