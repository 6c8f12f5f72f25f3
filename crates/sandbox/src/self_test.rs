//! [`self_test`]: what the kernel really enforces, found by trying.
//!
//! Guarantees: `self_test` runs `/bin/sh` under a policy like the given one
//! (same mode, network and protected names) in a scratch workspace it
//! creates and removes, and returns `Ok` only if, in the child, a write in
//! the temp folder worked, a write outside was refused, the workspace
//! behaved as the mode says (writable, with a repository's hooks read-only
//! and, in a mount namespace, its top folder writable; or read-only), a signal to this process was refused (Landlock ABI 6+),
//! and the kernel reports the child with no_new_privs and one seccomp
//! filter more than this process has (a filter inherited from a container
//! does not count).
//! It leaves no process behind (each child is waited for) and no file
//! outside its scratch folder (a write that should have been refused is
//! reported, and the scratch folder, where it landed, is removed).

use crate::policy::{Mode, Policy};

/// Runs the checks above; `Err` names the first check that failed and what
/// it means. Mode `off` has nothing to check and returns `Ok`.
pub fn self_test(policy: &Policy) -> Result<(), String> {
    if policy.mode == Mode::Off {
        return Ok(());
    }
    imp::self_test(policy)
}

#[cfg(target_os = "linux")]
mod imp {
    use std::io::Read;
    use std::path::{Path, PathBuf};
    use std::process::{Command, ExitStatus, Stdio};

    use crate::policy::{Mode, Policy};

    /// A scratch folder under the system temp folder, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new() -> Result<Scratch, String> {
            let base = std::env::temp_dir();
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let mut last_error = None;
            for attempt in 0..16u32 {
                let path = base
                    .join(format!("axon-sandbox-check-{}-{nanos:x}-{attempt}", std::process::id()));
                match std::fs::create_dir(&path) {
                    Ok(()) => return Ok(Scratch(path)),
                    Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                        last_error = Some(error);
                    }
                    Err(error) => return Err(scratch_error(&base, &error)),
                }
            }
            let error = last_error.unwrap_or_else(|| std::io::ErrorKind::AlreadyExists.into());
            Err(scratch_error(&base, &error))
        }

        fn dir(&self, name: &str) -> Result<PathBuf, String> {
            let path = self.0.join(name);
            std::fs::create_dir_all(&path).map_err(|error| {
                format!("the sandbox check could not create {}: {error}", path.display())
            })?;
            Ok(path)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn scratch_error(base: &Path, error: &std::io::Error) -> String {
        format!(
            "the sandbox check could not create a scratch folder in {}: {error}",
            base.display()
        )
    }

    pub(super) fn self_test(policy: &Policy) -> Result<(), String> {
        let support = crate::probe();
        support.can_enforce(policy)?;
        let scratch = Scratch::new()?;
        let workspace = scratch.dir("workspace")?;
        let inside = scratch.dir("workspace/src")?;
        // A repository: its hooks folder is protected in both confinements.
        let hooks = if policy.protected.iter().any(|name| name == ".git") {
            let hooks = scratch.dir("workspace/.git/hooks")?;
            let config = workspace.join(".git/config");
            std::fs::write(&config, "[core]\n").map_err(|error| {
                format!("the sandbox check could not create {}: {error}", config.display())
            })?;
            Some(hooks)
        } else {
            None
        };
        let temp = scratch.dir("temp")?;
        let outside = scratch.dir("outside")?;
        let test_policy = Policy {
            mode: policy.mode,
            network: policy.network,
            workspace,
            writable_roots: Vec::new(),
            temp: temp.clone(),
            protected: policy.protected.clone(),
            mount_namespace: policy.mount_namespace,
        };

        expect_write(&test_policy, &temp.join("file"), true, "the sandbox's temp folder")?;
        expect_write(&test_policy, &outside.join("file"), false, "a folder outside the workspace")?;
        match policy.mode {
            Mode::WorkspaceWrite => {
                expect_write(&test_policy, &inside.join("file"), true, "the workspace")?;
                if let Some(hooks) = hooks {
                    expect_write(&test_policy, &hooks.join("file"), false, "a repository's hooks")?;
                    if let crate::Confinement::Namespace(_) = support.confinement(policy) {
                        let top = test_policy.workspace.join("new-file");
                        expect_write(&test_policy, &top, true, "a repository's top folder")?;
                    }
                }
            }
            Mode::ReadOnly => {
                expect_write(&test_policy, &inside.join("file"), false, "the workspace")?;
            }
            Mode::Off => {}
        }
        if support.landlock_abi.unwrap_or(0) >= 6 {
            let status = run(&test_policy, "kill -0 \"$1\" 2>/dev/null", &std::process::id())?;
            if status.success() {
                return Err("a sandboxed command could signal a process outside its sandbox \
                     although Landlock ABI 6 scopes signals"
                    .to_owned());
            }
        }
        expect_seccomp(&test_policy)
    }

    /// Runs `script` under `policy` with `arg` as `$1`, output discarded.
    fn run(
        policy: &Policy,
        script: &str,
        arg: &dyn std::fmt::Display,
    ) -> Result<ExitStatus, String> {
        let mut command = command(policy, script, &arg.to_string())?;
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        command
            .status()
            .map_err(|error| format!("could not run /bin/sh under the sandbox: {error}"))
    }

    fn command(policy: &Policy, script: &str, arg: &str) -> Result<Command, String> {
        let prepared = crate::prepare(policy).map_err(|error| error.to_string())?;
        let mut command = Command::new("/bin/sh");
        command.arg("-c").arg(script).arg("sh").arg(arg);
        prepared.apply(&mut command);
        Ok(command)
    }

    fn expect_write(
        policy: &Policy,
        file: &Path,
        allowed: bool,
        place: &str,
    ) -> Result<(), String> {
        let status = run(policy, "echo sandbox > \"$1\" 2>/dev/null", &file.display())?;
        let written = file.exists();
        match (allowed, written) {
            (true, true) | (false, false) => Ok(()),
            (true, false) => Err(format!(
                "a sandboxed write to {place} failed ({status}) although mode {} allows it",
                policy.mode
            )),
            (false, true) => Err(format!(
                "a sandboxed write to {place} was NOT refused in mode {}: this kernel does not \
                 enforce the Landlock rules",
                policy.mode
            )),
        }
    }

    /// Reads the kernel's view of a sandboxed child from /proc: it must run
    /// with no_new_privs and in seccomp filter mode.
    fn expect_seccomp(policy: &Policy) -> Result<(), String> {
        let mut command = command(policy, "read line", "")?;
        command.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null());
        let mut child = command
            .spawn()
            .map_err(|error| format!("could not run /bin/sh under the sandbox: {error}"))?;
        // spawn returns after exec succeeded, so the filter is in place.
        let status_path = format!("/proc/{}/status", child.id());
        let mut text = String::new();
        let read = std::fs::File::open(&status_path).and_then(|mut f| f.read_to_string(&mut text));
        // Closing stdin ends `read`; wait so no process is left behind.
        drop(child.stdin.take());
        let _ = child.wait();
        read.map_err(|error| format!("could not read {status_path}: {error}"))?;
        // The forking thread's view: seccomp filters are per thread.
        let parent = std::fs::read_to_string("/proc/thread-self/status")
            .or_else(|_| std::fs::read_to_string("/proc/self/status"))
            .map_err(|error| format!("could not read this process's /proc status: {error}"))?;
        super::check_status(&parent, &text)
    }
}

/// Compares the `/proc/<pid>/status` text of this process (`parent`) and of
/// a sandboxed child: the child must run with no_new_privs and with more
/// seccomp filters than the parent. `Seccomp: 2` alone proves nothing where
/// the parent already runs under a filter (Docker's default profile,
/// systemd's `SystemCallFilter=`), so it is only the fallback for kernels
/// older than 5.9, which have no `Seccomp_filters:` line.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn check_status(parent: &str, child: &str) -> Result<(), String> {
    fn field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
        text.lines().find_map(|line| line.strip_prefix(name)).map(str::trim)
    }
    if field(child, "NoNewPrivs:") != Some("1") {
        return Err("a sandboxed command ran without no_new_privs".to_owned());
    }
    let filters = |text| field(text, "Seccomp_filters:").and_then(|n| n.parse::<u64>().ok());
    match (filters(parent), filters(child)) {
        (Some(outer), Some(inner)) if inner > outer => Ok(()),
        (Some(outer), Some(inner)) => Err(format!(
            "a sandboxed command ran without its seccomp filter (it has {inner} filters, axon \
             itself {outer})"
        )),
        _ if field(child, "Seccomp:") == Some("2") => Ok(()),
        _ => Err("a sandboxed command ran without its seccomp filter".to_owned()),
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use crate::policy::Policy;

    pub(super) fn self_test(_policy: &Policy) -> Result<(), String> {
        Err(crate::LINUX_ONLY.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::check_status;

    fn status(no_new_privs: u8, mode: u8, filters: Option<u32>) -> String {
        let filters = filters.map(|n| format!("Seccomp_filters:\t{n}\n")).unwrap_or_default();
        format!(
            "Name:\tsh\nNoNewPrivs:\t{no_new_privs}\nSeccomp:\t{mode}\n{filters}Speculation:\tx\n"
        )
    }

    #[test]
    fn a_filter_inherited_from_a_container_is_not_the_sandboxs() {
        // Docker's default profile: the parent already has one filter.
        let parent = status(0, 2, Some(1));
        let error = check_status(&parent, &status(1, 2, Some(1))).unwrap_err();
        assert!(error.contains("without its seccomp filter"), "{error}");
        assert!(error.contains("1 filters, axon itself 1"), "{error}");
        assert_eq!(check_status(&parent, &status(1, 2, Some(2))), Ok(()));
        assert_eq!(check_status(&status(0, 0, Some(0)), &status(1, 2, Some(1))), Ok(()));
    }

    #[test]
    fn without_a_filter_count_seccomp_mode_2_is_the_fallback() {
        let parent = status(0, 0, None);
        assert_eq!(check_status(&parent, &status(1, 2, None)), Ok(()));
        assert!(check_status(&parent, &status(1, 0, None)).is_err());
    }

    #[test]
    fn no_new_privs_is_required() {
        let error = check_status(&status(0, 0, Some(0)), &status(0, 2, Some(1))).unwrap_err();
        assert!(error.contains("no_new_privs"), "{error}");
    }
}
