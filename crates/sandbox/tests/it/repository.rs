//! Everyday work in a git repository under `workspace-write` (issue 30,
//! §1): creating, removing and renaming files at the top and deep down,
//! `git add` and `git commit`, a fresh build creating `target/`, in a
//! nested repository too. Where the kernel gives a mount namespace all of
//! it works; where it refuses one, each test says so and asserts the
//! Landlock-only fallback and its documented price instead.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common::{Sandbox, assert_ok, assert_refused, no_namespaces};
use axon_sandbox::{Confinement, Mode, prepare};

const EVERYDAY: &str = "set -e
echo junk > junk.txt && rm junk.txt
touch NEWFILE.md && mv NEWFILE.md RENAMED.md
mkdir -p target/debug deep/a/b && echo x > target/debug/out && echo y > deep/a/b/c
mv deep/a/b/c deep/a/b/d && rm -r deep
echo more >> README.md
git add -A && git -c user.name=t -c user.email=t@t commit -qm second
git status --short";

#[test]
fn everyday_work_at_the_top_of_a_repository() {
    require_landlock!();
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    let confinement = prepare(&sandbox.policy).unwrap().confinement();
    let output = sandbox.sh(EVERYDAY);
    if let Some(why) = no_namespaces() {
        eprintln!("no mount namespace here ({why}): asserting the Landlock-only price");
        assert_eq!(confinement, Some(Confinement::LandlockOnly));
        assert_refused(&output, "creating a top-level file next to .git without a namespace");
        assert!(!sandbox.path("junk.txt").exists());
        return;
    }
    assert!(matches!(confinement, Some(Confinement::Namespace(_))), "{confinement:?}");
    assert_ok(&output, "rm, touch, mv, mkdir at the top, git add and git commit");
    assert!(sandbox.path("RENAMED.md").exists());
    assert!(sandbox.path("target/debug/out").exists());
    let log = std::process::Command::new("git")
        .args(["log", "--format=%s"])
        .current_dir(sandbox.root())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&log.stdout), "second\nfirst\n");
}

#[test]
fn the_landlock_only_mode_keeps_its_documented_price() {
    require_landlock!();
    let sandbox = Sandbox::git(Mode::WorkspaceWrite).landlock_only();
    assert_eq!(prepare(&sandbox.policy).unwrap().confinement(), Some(Confinement::LandlockOnly));
    assert_refused(&sandbox.sh("touch NEWFILE.md"), "a new top-level file");
    assert_refused(&sandbox.sh("rm README.md"), "removing a top-level file");
    assert_refused(&sandbox.sh("git add -A && git commit -qm x"), "git commit");
    assert!(sandbox.path("README.md").exists());
    // What still works: editing top-level files and anything below.
    assert_ok(&sandbox.sh("echo x >> README.md && touch src/new && rm src/new"), "edits");
}

#[test]
fn a_first_cargo_build_creates_target() {
    require_landlock!();
    if std::process::Command::new("cargo").arg("--version").output().is_err() {
        panic!("cargo is needed for this test (it builds a crate offline, no dependency)");
    }
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    std::fs::write(
        sandbox.path("Cargo.toml"),
        "[package]\nname = \"fresh\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(sandbox.path("src/main.rs"), "fn main() { println!(\"hi\"); }\n").unwrap();
    let mut command = std::process::Command::new("cargo");
    command.args(["build", "--offline", "-q"]).env_remove("CARGO_TARGET_DIR");
    // Cargo's home holds the registry cache; the sandbox lets it write
    // only in the temp folder, where a private CARGO_HOME goes.
    command.env("CARGO_HOME", sandbox.policy.temp.join("cargo-home"));
    let output = sandbox.output(command);
    if let Some(why) = no_namespaces() {
        eprintln!("no mount namespace here ({why}): a first build cannot create target/");
        assert_refused(&output, "a first cargo build without a namespace");
        return;
    }
    assert_ok(&output, "a first cargo build");
    assert!(sandbox.path("target").is_dir());
    assert!(sandbox.path("Cargo.lock").is_file());
}

#[test]
fn a_nested_repository_is_usable_and_protected() {
    require_landlock!();
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    std::fs::create_dir_all(sandbox.path("tools/inner")).unwrap();
    std::fs::write(sandbox.path("tools/inner/a.txt"), "a\n").unwrap();
    for args in [&["init", "-q"][..], &["add", "."], &["commit", "-qm", "inner"]] {
        let mut all = vec!["-C", "tools/inner"];
        all.extend_from_slice(args);
        sandbox.git_setup(&all);
    }
    let before = std::fs::read(sandbox.path("tools/inner/.git/config")).unwrap();
    assert_refused(
        &sandbox
            .sh("printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> tools/inner/.git/config"),
        "writing a nested repository's config",
    );
    assert_refused(
        &sandbox.sh("echo evil > tools/inner/.git/hooks/post-commit"),
        "planting a nested repository's hook",
    );
    assert_eq!(std::fs::read(sandbox.path("tools/inner/.git/config")).unwrap(), before);
    assert!(!sandbox.path("tools/inner/.git/hooks/post-commit").exists());
    let commit = sandbox.sh("cd tools/inner && touch b.txt && git add b.txt && \
         git -c user.name=t -c user.email=t@t commit -qm two");
    if let Some(why) = no_namespaces() {
        eprintln!("no mount namespace here ({why}): the nested .git is wholly read-only");
        assert_refused(&commit, "a commit in a nested repository without a namespace");
        return;
    }
    assert_ok(&commit, "a commit in a nested repository");
}
