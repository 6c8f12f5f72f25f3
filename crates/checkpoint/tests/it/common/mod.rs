//! Shared test helpers: a workspace and data folder in temp dirs, and a
//! byte-and-mode picture of a tree to compare before and after.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use axon_checkpoint::Checkpoints;

pub struct Fixture {
    pub data: tempfile::TempDir,
    pub ws: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture { data: tempfile::tempdir().unwrap(), ws: tempfile::tempdir().unwrap() }
    }

    pub fn open(&self) -> Checkpoints {
        Checkpoints::open(self.data.path(), self.ws.path()).unwrap()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.ws.path().join(rel)
    }

    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }

    pub fn read(&self, rel: &str) -> Vec<u8> {
        fs::read(self.path(rel)).unwrap()
    }

    pub fn state(&self) -> BTreeMap<PathBuf, (Vec<u8>, bool)> {
        state(self.ws.path())
    }
}

/// Every file below `root` except the user's `.git`: bytes and executable bit.
pub fn state(root: &Path) -> BTreeMap<PathBuf, (Vec<u8>, bool)> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, (Vec<u8>, bool)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path == root.join(".git") {
            continue;
        }
        let meta = entry.metadata().unwrap();
        if meta.is_dir() {
            walk(root, &path, out);
        } else {
            let exec = meta.permissions().mode() & 0o100 != 0;
            out.insert(
                path.strip_prefix(root).unwrap().to_path_buf(),
                (fs::read(&path).unwrap(), exec),
            );
        }
    }
}

pub fn set_exec(path: &Path, exec: bool) {
    let mode = if exec { 0o755 } else { 0o644 };
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs git on the shadow repository, as a test's witness.
pub fn shadow_git(checkpoints: &Checkpoints, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .env("GIT_DIR", checkpoints.shadow_dir())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(args)
        .output()
        .unwrap()
}

/// Runs git in the user's own repository inside the workspace.
pub fn user_git(ws: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(ws)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .args(["-c", "user.name=u", "-c", "user.email=u@example.com"])
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}
