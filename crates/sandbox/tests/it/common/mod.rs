//! Shared fixtures for the sandbox tests: a scratch workspace (plain or a
//! `git init`ed one), a private temp folder, and helpers that run real
//! commands under `prepare` + `apply`, with the workspace as working folder.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use axon_sandbox::{Mode, Policy, prepare, probe};
use tempfile::TempDir;

/// Returns from the calling test, with the reason printed, when the kernel
/// has no Landlock at all (the only case where these tests may skip) —
/// unless [`sandbox_required`], where it panics: in CI a green escape test
/// must mean the escape was tried.
#[macro_export]
macro_rules! require_landlock {
    () => {
        if let Some(reason) = $crate::common::no_landlock() {
            if $crate::common::sandbox_required() {
                panic!(
                    "this test needs Landlock and CI or AXON_REQUIRE_SANDBOX is set, so it may \
                     not skip: {reason}"
                );
            }
            eprintln!("skipped: {reason}");
            return;
        }
    };
}

/// Whether tests must not skip for want of a sandbox: `CI` (set by GitHub
/// Actions, GitLab and most others) or `AXON_REQUIRE_SANDBOX` is set.
pub fn sandbox_required() -> bool {
    ["CI", "AXON_REQUIRE_SANDBOX"].iter().any(|name| std::env::var_os(name).is_some())
}

pub fn no_landlock() -> Option<String> {
    let support = probe();
    match support.landlock_abi {
        Some(_) => None,
        None => Some(support.landlock_missing.unwrap_or_else(|| "no Landlock".into())),
    }
}

/// `Some(reason)` when this kernel refuses the mount namespace, so
/// `workspace-write` runs Landlock-only here.
pub fn no_namespaces() -> Option<String> {
    let support = probe();
    match support.namespaces {
        Some(_) => None,
        None => Some(support.namespaces_missing.unwrap_or_else(|| "no namespaces".into())),
    }
}

pub fn landlock_abi() -> i32 {
    probe().landlock_abi.unwrap_or(0)
}

pub struct Sandbox {
    /// Held (and removed with the sandbox); the policy names its path.
    _workspace: TempDir,
    /// Held (and removed with the sandbox); the policy names its path.
    _temp: TempDir,
    pub policy: Policy,
}

impl Sandbox {
    /// A plain workspace (no protected entry) holding `src/`.
    pub fn plain(mode: Mode) -> Sandbox {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::create_dir(workspace.path().join("src")).unwrap();
        std::fs::write(workspace.path().join("README.md"), "hello\n").unwrap();
        let temp = tempfile::tempdir().unwrap();
        let root = workspace.path().canonicalize().unwrap();
        let policy = Policy::new(mode, root, temp.path().canonicalize().unwrap());
        Sandbox { _workspace: workspace, _temp: temp, policy }
    }

    /// A `git init`ed workspace with one commit (`README.md`, `src/lib.rs`).
    pub fn git(mode: Mode) -> Sandbox {
        let sandbox = Sandbox::plain(mode);
        std::fs::write(sandbox.path("src/lib.rs"), "// lib\n").unwrap();
        for args in [
            &["init", "-q"][..],
            &["add", "."],
            &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first"],
        ] {
            let status = Command::new("git")
                .args(args)
                .current_dir(sandbox.root())
                .stdin(Stdio::null())
                .status()
                .expect("git is required for the .git cases");
            assert!(status.success(), "git {args:?} failed");
        }
        sandbox
    }

    /// The same sandbox without a mount namespace (the Landlock-only mode
    /// of kernels that refuse one).
    pub fn landlock_only(mut self) -> Sandbox {
        self.policy.mount_namespace = false;
        self
    }

    /// `git args` in the workspace, unsandboxed (setting up a fixture).
    pub fn git_setup(&self, args: &[&str]) {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"])
            .args(args)
            .current_dir(self.root())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .expect("git is required for the .git cases");
        assert!(status.success(), "git {args:?} failed");
    }

    pub fn root(&self) -> &Path {
        &self.policy.workspace
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    /// `program args` under the sandbox, in the workspace, stdin empty.
    pub fn run(&self, program: &str, args: &[&str]) -> Output {
        let mut command = Command::new(program);
        command.args(args);
        self.output(command)
    }

    /// `/bin/sh -c script` under the sandbox.
    pub fn sh(&self, script: &str) -> Output {
        self.run("/bin/sh", &["-c", script])
    }

    /// `python3 -c code` under the sandbox.
    pub fn python(&self, code: &str) -> Output {
        self.run("python3", &["-c", code])
    }

    pub fn output(&self, command: Command) -> Output {
        self.output_in(command, self.root())
    }

    /// Runs `command` under the sandbox in the folder `cwd`.
    pub fn output_in(&self, mut command: Command, cwd: &Path) -> Output {
        command.current_dir(cwd).stdin(Stdio::null());
        prepare(&self.policy).unwrap().apply(&mut command);
        command.output().unwrap()
    }
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).trim().to_owned()
}

/// Asserts the command failed, showing its output otherwise.
pub fn assert_refused(output: &Output, what: &str) {
    assert!(
        !output.status.success(),
        "{what} was not refused: stdout {:?} stderr {:?}",
        stdout(output),
        stderr(output)
    );
}

pub fn assert_ok(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what} failed ({}): stdout {:?} stderr {:?}",
        output.status,
        stdout(output),
        stderr(output)
    );
}

/// Python code printing the errno of `statement` (or `ok`).
pub fn python_errno(statement: &str) -> String {
    format!(
        "import sys\ntry:\n    {statement}\n    print('ok')\nexcept OSError as e:\n    print(e.errno)\n"
    )
}
