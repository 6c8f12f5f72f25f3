//! The attacks of issue 30 against the sandbox itself, each tried for
//! real under `workspace-write`: a submodule's `.git` file replaced by a
//! gitdir whose config runs code (§2.2), axon's and Claude Code's auto-run
//! files planted (§2.5), a device node made as root (§2.3), the limits
//! and priority of processes outside changed (§2.8), a descriptor axon
//! inherited written through (§2.10), the host name set (§2.12), and the
//! mount namespace's own protections undone (rename, unmount, a working
//! folder entered before the mounts). Each checks that nothing changed.
//! `docs/attacks.md` lists every finding of that issue with its test.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::fd::AsRawFd;

use crate::common::{
    Sandbox, assert_ok, assert_refused, no_namespaces, python_errno, stderr, stdout,
};
use axon_sandbox::Mode;

/// Both confinements: the default (a namespace where the kernel has one)
/// and the Landlock-only fallback.
fn both(make: fn() -> Sandbox) -> [(&'static str, Sandbox); 2] {
    [("default", make()), ("landlock-only", make().landlock_only())]
}

/// A repository with a submodule at `vendor/lib` (a `.git` file pointing
/// into `.git/modules/vendor/lib`).
fn with_submodule() -> Sandbox {
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    let upstream = sandbox.policy.temp.join("upstream");
    std::fs::create_dir_all(&upstream).unwrap();
    std::fs::write(upstream.join("lib.c"), "int x;\n").unwrap();
    for args in [&["init", "-q"][..], &["add", "."], &["commit", "-qm", "lib"]] {
        let mut all = vec!["-C", upstream.to_str().unwrap()];
        all.extend_from_slice(args);
        sandbox.git_setup(&all);
    }
    sandbox.git_setup(&["submodule", "add", "-q", upstream.to_str().unwrap(), "vendor/lib"]);
    assert!(sandbox.path("vendor/lib/.git").is_file());
    sandbox
}

#[test]
fn a_submodule_git_file_cannot_be_repointed() {
    require_landlock!();
    for (name, sandbox) in both(with_submodule) {
        let before = std::fs::read(sandbox.path("vendor/lib/.git")).unwrap();
        // The attack: a gitdir of the command's making whose config sets
        // core.fsmonitor, then the .git file pointed at it.
        let output = sandbox.sh("mkdir -p evil && cp -r .git/modules/vendor/lib evil/gitdir && \
             printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> evil/gitdir/config && \
             echo \"gitdir: $PWD/evil/gitdir\" > vendor/lib/.git");
        assert_refused(&output, &format!("{name}: rewriting vendor/lib/.git"));
        assert_refused(&sandbox.sh("rm -f vendor/lib/.git"), &format!("{name}: removing it"));
        assert_refused(
            &sandbox.sh("mv vendor/lib vendor/old && mkdir vendor/lib"),
            &format!("{name}: moving its folder away"),
        );
        assert_refused(
            &sandbox.sh(
                "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/modules/vendor/lib/config",
            ),
            &format!("{name}: the submodule's own config"),
        );
        assert_eq!(std::fs::read(sandbox.path("vendor/lib/.git")).unwrap(), before, "{name}");
        let config =
            std::fs::read_to_string(sandbox.path(".git/modules/vendor/lib/config")).unwrap();
        assert!(!config.contains("fsmonitor"), "{name}: {config}");
    }
}

#[test]
fn a_cache_tag_does_not_unprotect_a_folder() {
    // The attack found after issue 30's first round: a `CACHEDIR.TAG`
    // written into `vendor/` made the walk skip it as a cache, so the next
    // command could repoint `vendor/lib/.git`. Only a folder's name (which
    // a command cannot change for one holding a protected entry) skips it.
    require_landlock!();
    for (name, sandbox) in both(with_submodule) {
        let before = std::fs::read(sandbox.path("vendor/lib/.git")).unwrap();
        // Written here rather than by a command: in Landlock-only mode the
        // folder holding a protected entry cannot gain one, which is not
        // what is tested.
        std::fs::write(
            sandbox.path("vendor/CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55",
        )
        .unwrap();
        let output = sandbox.sh("mkdir -p evil && cp -r .git/modules/vendor/lib evil/gitdir && \
             printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> evil/gitdir/config && \
             echo \"gitdir: $PWD/evil/gitdir\" > vendor/lib/.git");
        assert_refused(&output, &format!("{name}: rewriting vendor/lib/.git beside a cache tag"));
        assert_eq!(std::fs::read(sandbox.path("vendor/lib/.git")).unwrap(), before, "{name}");
    }
}

#[test]
fn git_config_hooks_and_info_cannot_be_planted() {
    require_landlock!();
    for (name, sandbox) in both(|| Sandbox::git(Mode::WorkspaceWrite)) {
        for (what, script) in [
            ("config", "echo '[core] hooksPath = /tmp' >> .git/config"),
            ("a hook", "echo evil > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"),
            ("info/attributes", "echo '* filter=evil' > .git/info/attributes"),
            ("renaming .git", "mv .git .git-old && mkdir .git"),
            ("renaming hooks", "mv .git/hooks .git/hooks-old"),
        ] {
            assert_refused(&sandbox.sh(script), &format!("{name}: {what}"));
        }
        assert!(!sandbox.path(".git/hooks/pre-commit").exists(), "{name}");
        assert!(!sandbox.path(".git/info/attributes").exists(), "{name}");
        assert!(sandbox.path(".git/HEAD").exists(), "{name}");
        let config = std::fs::read_to_string(sandbox.path(".git/config")).unwrap();
        assert!(!config.contains("hooksPath"), "{name}: {config}");
    }
}

#[test]
fn a_missing_hooks_folder_cannot_be_created() {
    require_landlock!();
    // `git init --template=` makes no hooks/ or info/: the sandbox adds
    // them empty, so there is something read-only to cover.
    for (name, sandbox) in both(|| Sandbox::git(Mode::WorkspaceWrite)) {
        std::fs::remove_dir_all(sandbox.path(".git/hooks")).unwrap();
        let _ = std::fs::remove_dir_all(sandbox.path(".git/info"));
        assert_refused(
            &sandbox.sh("mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit"),
            &format!("{name}: creating .git/hooks/pre-commit"),
        );
        assert!(!sandbox.path(".git/hooks/pre-commit").exists(), "{name}");
    }
}

#[test]
fn axons_and_claudes_auto_run_files_cannot_be_planted() {
    require_landlock!();
    let make = || {
        let sandbox = Sandbox::git(Mode::WorkspaceWrite);
        std::fs::create_dir_all(sandbox.path(".claude/agents")).unwrap();
        std::fs::create_dir_all(sandbox.path(".claude/skills/s")).unwrap();
        std::fs::create_dir_all(sandbox.path(".axon/skills")).unwrap();
        std::fs::create_dir_all(sandbox.path(".agents/skills/s")).unwrap();
        std::fs::create_dir_all(sandbox.path(".gemini/agents")).unwrap();
        std::fs::write(sandbox.path(".claude/settings.json"), "{}\n").unwrap();
        std::fs::write(sandbox.path(".claude/settings.local.json"), "{}\n").unwrap();
        std::fs::write(sandbox.path(".mcp.json"), "{}\n").unwrap();
        std::fs::write(sandbox.path(".axon/config.toml"), "").unwrap();
        sandbox
    };
    let hook =
        r#"{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"sh -c evil"}]}]}}"#;
    for (name, sandbox) in both(make) {
        for (what, script) in [
            (".claude/settings.json", format!("echo '{hook}' > .claude/settings.json")),
            (".claude/settings.local.json", format!("echo '{hook}' > .claude/settings.local.json")),
            (".mcp.json", r#"echo '{"mcpServers":{"x":{"command":"sh"}}}' > .mcp.json"#.into()),
            ("an agent", "echo evil > .claude/agents/a.md".into()),
            ("a skill", "echo evil > .claude/skills/s/SKILL.md".into()),
            ("an axon skill", "echo evil > .axon/skills/SKILL.md".into()),
            ("a shared skill", "echo evil > .agents/skills/s/SKILL.md".into()),
            ("a Gemini agent", "echo evil > .gemini/agents/a.md".into()),
            (
                "replacing .agents/skills",
                "mv .agents/skills .agents/old && mkdir .agents/skills".into(),
            ),
            ("axon's config", "echo 'x=1' >> .axon/config.toml".into()),
            ("replacing .claude", "mv .claude .claude-old && mkdir .claude".into()),
            ("removing .mcp.json", "rm -f .mcp.json".into()),
        ] {
            assert_refused(&sandbox.sh(&script), &format!("{name}: {what}"));
        }
        assert_eq!(std::fs::read_to_string(sandbox.path(".claude/settings.json")).unwrap(), "{}\n");
        assert_eq!(std::fs::read_to_string(sandbox.path(".mcp.json")).unwrap(), "{}\n");
        assert!(!sandbox.path(".claude/agents/a.md").exists(), "{name}");
        assert!(!sandbox.path(".axon/skills/SKILL.md").exists(), "{name}");
        assert!(!sandbox.path(".agents/skills/s/SKILL.md").exists(), "{name}");
        assert!(!sandbox.path(".gemini/agents/a.md").exists(), "{name}");
        // Claude's other files stay the command's to change, except that
        // Landlock-only cannot let a folder holding a protected entry gain
        // entries (its documented price).
        let notes = sandbox.sh("echo notes > .claude/notes.md");
        match axon_sandbox::prepare(&sandbox.policy).unwrap().confinement() {
            Some(axon_sandbox::Confinement::Namespace(_)) => {
                assert_ok(&notes, &format!("{name}: .claude/notes.md"));
            }
            _ => assert_refused(&notes, &format!("{name}: a new entry in .claude (the price)")),
        }
    }
}

#[test]
fn device_nodes_are_refused() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let root = is_root();
    if !root {
        eprintln!(
            "not root: mknod of a device is refused by the kernel anyway; checking the errno"
        );
    }
    for (kind, dev) in [("S_IFCHR", "os.makedev(1, 3)"), ("S_IFBLK", "os.makedev(7, 0)")] {
        for place in ["dev-node", "/TMP/dev-node"] {
            let place = place.replace("/TMP", &sandbox.policy.temp.display().to_string());
            let code = python_errno(&format!(
                "import os, stat; os.mknod('{place}', stat.{kind} | 0o600, {dev})"
            ));
            let output = sandbox.python(&format!("import os\n{code}"));
            assert_eq!(stdout(&output), "1", "{kind} at {place}: {}", stderr(&output));
            assert!(!std::path::Path::new(&place).exists() && !sandbox.path("dev-node").exists());
        }
    }
    // A fifo is no device and stays allowed.
    assert_ok(&sandbox.sh("mkfifo pipe && test -p pipe"), "mkfifo");
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

#[test]
fn limits_and_priority_of_outside_processes_are_refused() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    // A process outside the sandbox, as an editor would be.
    let mut victim = std::process::Command::new("sleep").arg("600").spawn().unwrap();
    let pid = victim.id();
    let limits_before = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let code = format!(
        "import os, resource\n\
         def try_(f):\n    try:\n        f(); return 'ok'\n    except OSError as e:\n        return str(e.errno)\n\
         print(try_(lambda: resource.prlimit({pid}, resource.RLIMIT_CPU, (1, 1))),\n\
               try_(lambda: resource.prlimit(os.getppid(), resource.RLIMIT_FSIZE, resource.getrlimit(resource.RLIMIT_FSIZE))),\n\
               try_(lambda: os.setpriority(os.PRIO_PROCESS, {pid}, 19)),\n\
               try_(lambda: os.setpriority(os.PRIO_USER, 0, os.getpriority(os.PRIO_PROCESS, 0))),\n\
               try_(lambda: os.sched_setaffinity({pid}, {{0}})),\n\
               try_(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE))),\n\
               try_(lambda: os.setpriority(os.PRIO_PROCESS, 0, 1)))"
    );
    let output = sandbox.python(&code);
    let limits_after = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let _ = victim.kill();
    let _ = victim.wait();
    // Outside: EPERM each time; its own limits and priority: fine.
    assert_eq!(stdout(&output), "1 1 1 1 1 ok ok", "stderr: {}", stderr(&output));
    assert_eq!(limits_before, limits_after);
    // (The attempts on the parent, this test process in axon's place,
    // set its limit to its current value, so a regression shows as "ok"
    // above and not as SIGXFSZ for the whole test binary.)
    // nice and ulimit on itself keep working.
    assert_ok(&sandbox.sh("nice -n 5 true && ulimit -f 1000 && true"), "nice and ulimit");
}

#[test]
fn an_inherited_descriptor_is_not_passed_on() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("victim");
    std::fs::write(&target, "").unwrap();
    let file = std::fs::OpenOptions::new().append(true).open(&target).unwrap();
    // As axon started with fd 7 open: a descriptor without close-on-exec.
    #[allow(unsafe_code)]
    // SAFETY: duplicates a live descriptor; the new one is closed below.
    let fd = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD, 200) };
    assert!(fd >= 200);
    // (python, not sh: dash redirects only descriptors 0 to 9.)
    let output = sandbox.python(&python_errno(&format!("import os; os.write({fd}, b'evil')")));
    #[allow(unsafe_code)]
    // SAFETY: closes the duplicate made above.
    unsafe {
        libc::close(fd)
    };
    // EBADF: the descriptor did not reach the command.
    assert_eq!(stdout(&output), "9", "stderr: {}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
}

#[test]
fn the_host_name_cannot_be_set() {
    require_landlock!();
    let sandbox = Sandbox::plain(Mode::WorkspaceWrite);
    // The current name again: harmless even if it were allowed.
    let output = sandbox.python(
        "import ctypes, socket\nlibc = ctypes.CDLL(None, use_errno=True)\n\
         name = socket.gethostname().encode()\n\
         r1 = libc.sethostname(name, len(name)); e1 = ctypes.get_errno()\n\
         r2 = libc.setdomainname(b'x', 1); e2 = ctypes.get_errno()\n\
         print(r1, e1, r2, e2)",
    );
    assert_eq!(stdout(&output), "-1 1 -1 1", "stderr: {}", stderr(&output));
}

#[test]
fn the_namespace_cannot_be_undone() {
    require_landlock!();
    let sandbox = Sandbox::git(Mode::WorkspaceWrite);
    if let Some(why) = no_namespaces() {
        eprintln!("no mount namespace here ({why}): nothing mounted to undo; Landlock keeps .git");
    }
    for (what, script) in [
        ("umount", "umount .git/config; echo '[x]' >> .git/config"),
        ("umount -l", "umount -l .git/hooks; echo evil > .git/hooks/pre-commit"),
        ("remount", "mount -o remount,rw .git/config; echo '[x]' >> .git/config"),
    ] {
        assert_refused(&sandbox.sh(script), what);
    }
    // A working folder entered before the mounts must not go around them.
    let mut command = std::process::Command::new("/bin/sh");
    command.args(["-c", "echo '[x]' >> config; echo evil > hooks/pre-commit"]);
    let output = sandbox.output_in(command, &sandbox.path(".git"));
    assert_refused(&output, "writing relative to a working folder inside .git");
    let config = std::fs::read_to_string(sandbox.path(".git/config")).unwrap();
    assert!(!config.contains("[x]"), "{config}");
    assert!(!sandbox.path(".git/hooks/pre-commit").exists());
    // No mount leaked out to this process's namespace.
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&sandbox.root().display().to_string()), "{mounts}");
}
