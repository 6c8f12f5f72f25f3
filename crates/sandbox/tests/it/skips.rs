//! `require_landlock!` may skip a test only outside CI: this file runs its
//! own test binary again on a "kernel" without Landlock (a seccomp filter
//! answering `ENOSYS` to `landlock_create_ruleset`, as an old kernel or a
//! container profile would) and checks that the guarded test skips
//! without `CI`/`AXON_REQUIRE_SANDBOX` and fails with either.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Output, Stdio};

/// Guarded like every escape test; run by the test below in a child.
#[test]
fn needs_landlock() {
    require_landlock!();
    assert!(axon_sandbox::probe().landlock_abi.is_some());
}

/// Runs `needs_landlock` in a child without Landlock, with `env` set (and
/// the two variables removed otherwise).
fn needs_landlock_without_landlock(env: &[(&str, &str)]) -> Output {
    use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};
    use std::os::unix::process::CommandExt;

    let rules = [(libc::SYS_landlock_create_ruleset, Vec::new())].into_iter().collect();
    let arch = TargetArch::try_from(std::env::consts::ARCH).unwrap();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .unwrap();
    let program = BpfProgram::try_from(filter).unwrap();
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["skips::needs_landlock", "--exact", "--nocapture", "--test-threads=1"]);
    command.env_remove("CI").env_remove("AXON_REQUIRE_SANDBOX").stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    // SAFETY: prctl and seccomp only, on a program built before the fork.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            seccompiler::apply_filter(&program).map_err(|_| std::io::Error::last_os_error())
        });
    }
    command.output().unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn without_landlock_a_guarded_test_skips_only_outside_ci() {
    let output = needs_landlock_without_landlock(&[]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(text(&output).contains("skipped: Landlock is not available"), "{}", text(&output));

    for variable in ["CI", "AXON_REQUIRE_SANDBOX"] {
        let output = needs_landlock_without_landlock(&[(variable, "true")]);
        assert!(!output.status.success(), "{variable}: {}", text(&output));
        assert!(text(&output).contains("may not skip"), "{variable}: {}", text(&output));
    }
}
