//! Lexical path arithmetic shared by path rules and redirection checks.
//!
//! Guarantees: a path is judged by its text alone (no file system access, so
//! no symlink is followed); `relative` answers `None` for anything that is
//! not provably inside the workspace root: an absolute path elsewhere, a
//! relative path whose `..` climbs above the root, a Windows prefix, or a
//! component that is not UTF-8. Relative paths are taken from the root.

use std::ffi::OsStr;
use std::path::{Component, Path};

/// The components of an absolute path after resolving `.` and `..` by text
/// (`/..` stays `/`, as the kernel does). `None` for a relative path or one
/// with a Windows prefix, which this crate never judges inside.
fn absolute_components(path: &Path) -> Option<Vec<&OsStr>> {
    let mut out = Vec::new();
    let mut rooted = false;
    for component in path.components() {
        match component {
            Component::RootDir => rooted = true,
            Component::Prefix(_) => return None,
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    rooted.then_some(out)
}

/// `path` (absolute, or relative to the workspace root) as a path relative
/// to `workspace` with `/` separators (`""` for the root itself), or `None`
/// when it is not provably inside.
pub(crate) fn relative(workspace: &Path, path: &str) -> Option<String> {
    let path = Path::new(path);
    let mut out: Vec<&str> = Vec::new();
    if path.has_root() {
        let root = absolute_components(workspace)?;
        let full = absolute_components(path)?;
        let rest = full.strip_prefix(root.as_slice())?;
        for name in rest {
            out.push(name.to_str()?);
        }
        return Some(out.join("/"));
    }
    for component in path.components() {
        match component {
            Component::CurDir => {}
            // Climbing above the root is leaving it, even if a later
            // component would come back: the root's own name is unknown here.
            Component::ParentDir => {
                out.pop()?;
            }
            Component::Normal(name) => out.push(name.to_str()?),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::relative;
    use std::path::Path;

    #[test]
    fn inside_and_outside() {
        let ws = Path::new("/home/u/proj");
        assert_eq!(relative(ws, "src/a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(relative(ws, "./src/../b").as_deref(), Some("b"));
        assert_eq!(relative(ws, "/home/u/proj/src/x").as_deref(), Some("src/x"));
        assert_eq!(relative(ws, "/home/u/proj").as_deref(), Some(""));
        assert_eq!(relative(ws, "/home/u/proj/../proj/x").as_deref(), Some("x"));
        assert_eq!(relative(ws, "../x"), None);
        assert_eq!(relative(ws, "a/../../x"), None);
        assert_eq!(relative(ws, "/home/u/projx/a"), None);
        assert_eq!(relative(ws, "/tmp/../etc/x"), None);
        assert_eq!(relative(ws, "/etc/passwd"), None);
    }
}
