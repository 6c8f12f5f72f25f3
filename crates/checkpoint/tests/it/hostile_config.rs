//! The user's own git setup cannot break snapshots: a global config that
//! signs every commit, runs a failing hook, converts line endings and
//! forbids commits without a configured identity, and `GIT_*` variables
//! pointing at other indexes and object stores. The environment is the
//! whole process's and other tests run beside this one, so the snapshots
//! are taken in a child process of this test binary, with the hostile
//! environment set on the child's `Command` only.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::common::Fixture;

#[test]
fn a_hostile_global_git_config_and_environment_do_not_break_snapshots() {
    let home = tempfile::tempdir().unwrap();
    let hooks = home.path().join("hooks");
    fs::create_dir_all(&hooks).unwrap();
    for hook in ["pre-commit", "commit-msg", "post-checkout", "reference-transaction"] {
        let path = hooks.join(hook);
        fs::write(&path, "#!/bin/sh\necho hook ran >&2\nexit 1\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let gitconfig = format!(
        "[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = /bin/false\n[core]\n\thooksPath = {}\n\
         \tautocrlf = true\n\texcludesFile = {}/ignore-everything\n[user]\n\tuseConfigOnly = true\n",
        hooks.display(),
        home.path().display()
    );
    fs::write(home.path().join(".gitconfig"), gitconfig).unwrap();
    fs::write(home.path().join("ignore-everything"), "*\n").unwrap();
    let bogus = home.path().join("bogus");
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "hostile_config::snapshots_in_a_hostile_environment",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env("GIT_INDEX_FILE", bogus.join("index"))
        .env("GIT_OBJECT_DIRECTORY", bogus.join("objects"))
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "core.autocrlf")
        .env("GIT_CONFIG_VALUE_0", "true")
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("EMAIL")
        .env(BOGUS, &bogus)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{text}");
    // The child ran the snapshots (a filter that matches nothing passes too).
    assert!(text.contains(CHECKED), "{text}");
}

/// Where the child must not have written (`GIT_INDEX_FILE`,
/// `GIT_OBJECT_DIRECTORY` point into it); set by the test above.
const BOGUS: &str = "AXON_TEST_HOSTILE_BOGUS";
/// What the child says once its assertions held.
const CHECKED: &str = "snapshots held in the hostile environment";

/// The snapshots themselves, in the environment the test above gives the
/// child it runs this in; on its own (without that environment) it has
/// nothing to check.
#[test]
#[ignore = "run by a_hostile_global_git_config_and_environment_do_not_break_snapshots \
            in a child process with the hostile environment"]
fn snapshots_in_a_hostile_environment() {
    let Some(bogus) = std::env::var_os(BOGUS).map(PathBuf::from) else {
        eprintln!("skipped: only a_hostile_global_git_config_... runs this, in a child");
        return;
    };
    let fx = Fixture::new();
    fx.write("crlf.txt", "one\r\ntwo\r\n");
    fx.write("lf.txt", "one\ntwo\n");
    let before = fx.state();
    let cp = fx.open();
    let first = cp.snapshot("s", "one").unwrap();
    assert!(first.skipped.is_empty());
    fx.write("crlf.txt", "changed\n");
    fs::remove_file(fx.path("lf.txt")).unwrap();
    cp.snapshot("s", "two").unwrap();
    cp.restore("s", &first.id).unwrap();
    assert_eq!(fx.state(), before);
    assert!(!bogus.exists(), "GIT_INDEX_FILE / GIT_OBJECT_DIRECTORY were not used");
    println!("{CHECKED}");
}
