//! Private temp folders (the sandbox's `$TMPDIR`) that do not outlive
//! axon, however it ends.
//!
//! A `TempDir` is removed when dropped, but `process::exit` (SIGTERM,
//! SIGHUP, a closed pipe) runs no destructors and SIGKILL runs nothing, so
//! every such end left a folder in `/tmp`: a test day here left about 3,000.
//! Two guarantees close that:
//! - every folder made here is listed, and [`crate::kill_all`] removes the
//!   listed ones on the way out;
//! - a folder's name carries the pid that made it
//!   (`PREFIX<pid>-<random>`), and making a new one first removes this
//!   user's folders of the same prefix whose process is gone. A pid reused
//!   by another process keeps its folder (never removes one in use).

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tempfile::TempDir;

/// The folders made by this process and not yet dropped.
static MADE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A private folder under the system's temp folder, named
/// `{prefix}{pid}-{random}`, mode 0700; removed when dropped or by
/// [`crate::kill_all`]. Stale folders of the same prefix (their process
/// gone) are removed first.
pub fn private_temp(prefix: &str) -> io::Result<TempDir> {
    let parent = std::env::temp_dir();
    remove_stale(&parent, prefix);
    let dir = tempfile::Builder::new()
        .prefix(&format!("{prefix}{}-", std::process::id()))
        .tempdir_in(&parent)?;
    if let Ok(mut made) = MADE.lock() {
        made.retain(|path| path.exists());
        made.push(dir.path().to_path_buf());
    }
    Ok(dir)
}

/// Removes every folder [`private_temp`] made that still exists.
pub(crate) fn remove_all() {
    let made = match MADE.lock() {
        Ok(mut made) => std::mem::take(&mut *made),
        Err(_) => return,
    };
    for path in made {
        let _ = std::fs::remove_dir_all(path);
    }
}

/// Removes `parent/{prefix}{pid}-*` folders owned by this user whose pid
/// no longer runs. Best effort: what cannot be read or removed stays.
#[allow(unsafe_code)]
fn remove_stale(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    // SAFETY: getuid has no preconditions and cannot fail.
    let me = unsafe { libc::getuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|name| owner_pid(name, prefix)) else {
            continue;
        };
        if pid == std::process::id() || alive(pid) {
            continue;
        }
        // Not followed: a symlink planted under the name is not ours.
        match entry.path().symlink_metadata() {
            Ok(meta) if meta.is_dir() && meta.uid() == me => {
                let _ = std::fs::remove_dir_all(entry.path());
            }
            _ => {}
        }
    }
}

/// The pid in `{prefix}{pid}-{random}`, if `name` has that shape.
fn owner_pid(name: &str, prefix: &str) -> Option<u32> {
    let (pid, random) = name.strip_prefix(prefix)?.split_once('-')?;
    if random.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok().filter(|&pid| pid > 0)
}

/// Whether a process `pid` exists (one of another user counts too).
#[allow(unsafe_code)]
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_of_the_right_shape_give_a_pid() {
        assert_eq!(owner_pid("axon-sandbox-123-abcd", "axon-sandbox-"), Some(123));
        assert_eq!(owner_pid("axon-sandbox-abcd12", "axon-sandbox-"), None);
        assert_eq!(owner_pid("axon-sandbox-123-", "axon-sandbox-"), None);
        assert_eq!(owner_pid("axon-sandbox-0-x", "axon-sandbox-"), None);
        assert_eq!(owner_pid("other-123-abcd", "axon-sandbox-"), None);
    }

    #[test]
    fn a_dead_processs_folder_is_removed_and_a_live_ones_kept() {
        let parent = tempfile::tempdir().unwrap();
        // A child that has exited and been reaped: its pid runs nothing
        // (unless reused at once, which would only keep the folder).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = parent.path().join(format!("axon-test-{dead}-abc"));
        let live = parent.path().join(format!("axon-test-{}-abc", std::process::id()));
        let other = parent.path().join("axon-test-xyz");
        for dir in [&stale, &live, &other] {
            std::fs::create_dir(dir).unwrap();
        }
        remove_stale(parent.path(), "axon-test-");
        assert!(!stale.exists() || alive(dead), "a dead process's folder stayed");
        assert!(live.exists(), "this process's folder was removed");
        assert!(other.exists(), "a folder of another shape was removed");
    }

    #[test]
    fn remove_all_removes_what_was_made() {
        let dir = private_temp("axon-scratch-test-").unwrap();
        let path = dir.path().to_path_buf();
        assert!(path.exists());
        remove_all();
        assert!(!path.exists());
        // Dropping it afterwards is harmless.
        drop(dir);
    }
}
