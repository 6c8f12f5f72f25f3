//! The user's own git setup cannot break snapshots: a global config that
//! signs every commit, runs a failing hook, converts line endings and
//! forbids commits without a configured identity, and `GIT_*` variables
//! pointing at other indexes and object stores. Its own test binary,
//! because it changes the process's environment.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use common::Fixture;

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
    // SAFETY: this test binary has this one test, so no other thread reads
    // the environment while it changes.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("HOME", home.path());
        std::env::set_var("XDG_CONFIG_HOME", home.path());
        std::env::set_var("GIT_INDEX_FILE", bogus.join("index"));
        std::env::set_var("GIT_OBJECT_DIRECTORY", bogus.join("objects"));
        std::env::set_var("GIT_CONFIG_COUNT", "1");
        std::env::set_var("GIT_CONFIG_KEY_0", "core.autocrlf");
        std::env::set_var("GIT_CONFIG_VALUE_0", "true");
        std::env::remove_var("GIT_AUTHOR_NAME");
        std::env::remove_var("EMAIL");
    }

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
}
