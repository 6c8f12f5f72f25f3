//! The shadow repository's life: where it lives, its lock, its creation
//! (built aside, then renamed into place, so no process ever sees half a
//! repository), its config and exclude rules, and its refs.

use std::fs;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::git::{self, Git};
use crate::ignored::IgnoredBudget;
use crate::{CheckpointError, Checkpoints, MAX_FILE_BYTES, SnapshotInfo};

/// Settings appended to what `git init` probed (file modes, symlinks, case):
/// later keys win. No hooks, signing, line-ending conversion, automatic gc
/// (it would run in the middle of a turn) or reflogs (they would keep
/// pruned snapshots alive). `git init --shared=0600` (git.rs) keeps files
/// 0600 and folders 0700.
const CONFIG: &str = "
[core]
\tbare = false
\tautocrlf = false
\tsafecrlf = false
\thooksPath = /dev/null
\tfsmonitor = false
\tlogAllRefUpdates = false
\tquotePath = false
\tsplitIndex = false
\tsparseCheckout = false
[commit]
\tgpgSign = false
[gc]
\tauto = 0
[maintenance]
\tauto = false
[index]
\tthreads = true
";

/// Attributes in `info/` beat the workspace's `.gitattributes`: content goes
/// in and comes out byte for byte.
const ATTRIBUTES: &str = "* -text -eol -ident -filter -working-tree-encoding\n";

const REF_ROOT: &str = "refs/axon";

/// What HEAD names when it is not a snapshot: a branch that never exists.
const UNBORN: &str = "refs/heads/axon-no-snapshot";

pub(crate) fn open(data_dir: &Path, workspace: &Path) -> Result<Checkpoints, CheckpointError> {
    let one_pack = git::check_version()?;
    let workspace =
        fs::canonicalize(workspace).and_then(|path| fs::read_dir(&path).map(|_| path)).map_err(
            |source| CheckpointError::WorkspaceUnreadable { path: workspace.to_path_buf(), source },
        )?;
    let root = data_dir.join("checkpoints");
    fs::create_dir_all(&root).map_err(|e| CheckpointError::io("create", &root, e))?;
    // Snapshots hold the workspace's files (its .env too): the data folder
    // and the shadow repositories are the user's alone.
    for dir in [data_dir, root.as_path()] {
        private(dir).map_err(|e| CheckpointError::io("protect", dir, e))?;
    }
    let name = shadow_name(&workspace);
    let git_dir = root.join(&name);
    let lock_path = root.join(format!("{name}.lock"));
    let user_exclude =
        Some(workspace.join(".git").join("info").join("exclude")).filter(|path| path.is_file());
    let git = Git { git_dir, work_tree: workspace, user_exclude, one_pack };
    let _lock = lock(&lock_path)?;
    if !git.git_dir.join("HEAD").is_file() {
        init(&git, &root)?;
    }
    write_if_changed(&git.git_dir.join("info").join("exclude"), &excludes(&git))?;
    let ignored = stored_budget(&git).unwrap_or_default();
    Ok(Checkpoints { git, lock_path, max_file_bytes: MAX_FILE_BYTES, ignored })
}

/// The shadow repository's config keys for the ignored-file budget: a
/// workspace keeps the budget its sessions chose, so `axon rewind` and every
/// later open agree with the snapshots on what they hold.
const BUDGET_KEYS: [&str; 2] = ["axon.ignoredFileBytes", "axon.ignoredTotalBytes"];

/// The budget stored by [`store_budget`], if any.
fn stored_budget(git: &Git) -> Option<IgnoredBudget> {
    let value = |key: &str| -> Option<u64> {
        let out = git.run(["config", "--get", key], None).ok()?;
        String::from_utf8_lossy(&out).trim().parse().ok()
    };
    Some(IgnoredBudget { file_bytes: value(BUDGET_KEYS[0])?, total_bytes: value(BUDGET_KEYS[1])? })
}

/// Stores `budget` as the workspace's, unless it already is.
pub(crate) fn store_budget(git: &Git, budget: IgnoredBudget) -> Result<(), CheckpointError> {
    if stored_budget(git) == Some(budget) {
        return Ok(());
    }
    for (key, value) in BUDGET_KEYS.iter().zip([budget.file_bytes, budget.total_bytes]) {
        git.run(["config", key, &value.to_string()], None)?;
    }
    Ok(())
}

/// Makes `dir` its owner's alone (0700).
fn private(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// `<folder name, sanitised>-<16 hex of sha256(path)>`: unique by path,
/// readable by a human looking in the data folder.
fn shadow_name(workspace: &Path) -> String {
    let name: String = workspace
        .file_name()
        .map(|name| name.to_string_lossy())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') { c } else { '_' })
        .take(48)
        .collect();
    let name = if name.is_empty() { "workspace".to_string() } else { name };
    let digest = Sha256::digest(workspace.as_os_str().as_encoded_bytes());
    let hash: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("{name}-{hash}")
}

/// Takes the workspace's lock, waiting for another holder to finish.
/// Released when the returned file is dropped (or the process ends).
pub(crate) fn lock(path: &Path) -> Result<fs::File, CheckpointError> {
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| CheckpointError::io("open", path, e))?;
    file.lock().map_err(|e| CheckpointError::io("lock", path, e))?;
    Ok(file)
}

/// Builds the repository in a sibling folder and renames it into place.
fn init(git: &Git, root: &Path) -> Result<(), CheckpointError> {
    let aside = root.join(format!(".init-{}-{}", std::process::id(), fastish_suffix()));
    let result = (|| {
        let builder = Git { git_dir: aside.clone(), ..git.clone() };
        // `--bare` so git records no work tree: GIT_WORK_TREE gives it on
        // every call instead, and the config below clears `bare`.
        builder.init_bare()?;
        let config = aside.join("config");
        let mut text =
            fs::read_to_string(&config).map_err(|e| CheckpointError::io("read", &config, e))?;
        text.push_str(CONFIG);
        fs::write(&config, text).map_err(|e| CheckpointError::io("write", &config, e))?;
        let info = aside.join("info");
        fs::create_dir_all(&info).map_err(|e| CheckpointError::io("create", &info, e))?;
        let attributes = info.join("attributes");
        fs::write(&attributes, ATTRIBUTES)
            .map_err(|e| CheckpointError::io("write", &attributes, e))?;
        let about = aside.join("axon-workspace");
        let mut line = git.work_tree.as_os_str().as_encoded_bytes().to_vec();
        line.push(b'\n');
        fs::write(&about, line).map_err(|e| CheckpointError::io("write", &about, e))?;
        fs::rename(&aside, &git.git_dir).map_err(|e| CheckpointError::io("create", &git.git_dir, e))
    })();
    if result.is_err() {
        let _ = fs::remove_dir_all(&aside);
    }
    result
}

fn fastish_suffix() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

/// What the shadow repository never holds: the user's `.git` (git skips it
/// anyway), axon's own state, and the shadow repository itself when the
/// data folder is inside the workspace.
fn excludes(git: &Git) -> Vec<u8> {
    let mut text = b"# Written by axon: never in a checkpoint.\n/.git\n/.axon/\n".to_vec();
    if let Ok(inside) = git.git_dir.parent().unwrap_or(&git.git_dir).strip_prefix(&git.work_tree)
        && !inside.as_os_str().is_empty()
    {
        text.push(b'/');
        text.extend_from_slice(&escape_pattern(inside.as_os_str().as_encoded_bytes()));
        text.extend_from_slice(b"/\n");
    }
    text
}

/// A path as a gitignore pattern matching only itself.
fn escape_pattern(path: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(path.len());
    for &b in path {
        if matches!(b, b'*' | b'?' | b'[' | b'\\' | b'!' | b'#' | b' ') {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    if fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| CheckpointError::io("create", parent, e))?;
    }
    fs::write(path, bytes).map_err(|e| CheckpointError::io("write", path, e))
}

/// Commits the shadow index as a parentless commit and names it under the
/// session. Returns the commit id.
///
/// HEAD, detached, moves to the new commit in the same transaction: the
/// next `status` compares the index with it, and since the index was just
/// written as that tree (cache-tree intact) the comparison costs next to
/// nothing, where an unborn HEAD would list every file as added.
pub(crate) fn commit(git: &Git, session: &str, label: &str) -> Result<String, CheckpointError> {
    let tree = text(git.run(["write-tree"], None)?);
    let first_line = label.lines().next().unwrap_or("").trim();
    let message = if first_line.is_empty() { "checkpoint" } else { first_line };
    let id = text(git.run(["commit-tree", "--no-gpg-sign", "-m", message, &tree], None)?);
    let millis = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let name = format!("{REF_ROOT}/{session}/{millis:013}-{id}");
    let input = format!("option no-deref\nupdate HEAD {id}\noption no-deref\nupdate {name} {id}\n");
    git.run(["update-ref", "--stdin"], Some(input.into_bytes()))?;
    Ok(id)
}

/// The full commit id of `id` (a full id or an unambiguous prefix), or
/// [`CheckpointError::UnknownId`].
pub(crate) fn resolve(git: &Git, id: &str) -> Result<String, CheckpointError> {
    let unknown = || CheckpointError::UnknownId { id: id.to_string() };
    // Only hex: nothing that git could read as an option or a rev expression.
    if id.len() < 4 || id.len() > 64 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(unknown());
    }
    match git.run(["rev-parse", "--quiet", "--verify", &format!("{id}^{{commit}}")], None) {
        Ok(out) => Ok(text(out)),
        Err(CheckpointError::GitFailed { .. }) => Err(unknown()),
        Err(e) => Err(e),
    }
}

pub(crate) fn list(git: &Git, session: &str) -> Result<Vec<SnapshotInfo>, CheckpointError> {
    let out = git.run(
        ["for-each-ref", "--format=%(refname)%00%(subject)", &format!("{REF_ROOT}/{session}/")],
        None,
    )?;
    let out = String::from_utf8_lossy(&out);
    Ok(out
        .lines()
        .filter_map(|line| {
            let (name, label) = line.split_once('\0')?;
            let (millis, id) = name.rsplit('/').next()?.split_once('-')?;
            Some(SnapshotInfo {
                id: id.to_string(),
                label: label.to_string(),
                time_ms: millis.parse().ok()?,
            })
        })
        .collect())
}

pub(crate) fn sessions(git: &Git) -> Result<Vec<String>, CheckpointError> {
    let out = git.run(["for-each-ref", "--format=%(refname)", &format!("{REF_ROOT}/")], None)?;
    let mut sessions: Vec<String> = String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|name| name.strip_prefix(REF_ROOT)?.split('/').nth(1).map(str::to_string))
        .collect();
    sessions.dedup();
    Ok(sessions)
}

pub(crate) fn prune_session(git: &Git, session: &str) -> Result<usize, CheckpointError> {
    let prefix = format!("{REF_ROOT}/{session}/");
    let out = git.run(["for-each-ref", "--format=%(refname)", &prefix], None)?;
    let refs: Vec<String> = String::from_utf8_lossy(&out).lines().map(str::to_string).collect();
    if refs.is_empty() {
        return Ok(0);
    }
    let mut input = Vec::new();
    for name in &refs {
        input.extend_from_slice(b"delete ");
        input.extend_from_slice(name.as_bytes());
        input.push(b'\n');
    }
    git.run(["update-ref", "--stdin"], Some(input))?;
    // HEAD (the last snapshot, see `commit`) would keep a pruned snapshot
    // alive: make it unborn again, which only costs the next snapshot's
    // status a comparison with nothing.
    let head = match git.run(["rev-parse", "--quiet", "--verify", "HEAD"], None) {
        Ok(out) => Some(text(out)),
        Err(CheckpointError::GitFailed { .. }) => None,
        Err(e) => return Err(e),
    };
    if let Some(head) = head
        && refs.iter().any(|name| name.ends_with(&format!("-{head}")))
    {
        git.run(["symbolic-ref", "HEAD", UNBORN], None)?;
    }
    // The index still names the current files' blobs, so they stay; the
    // rest of what only this session held goes now.
    git.run(["gc", "--quiet", "--prune=now"], None)?;
    Ok(refs.len())
}

fn text(out: Vec<u8>) -> String {
    String::from_utf8_lossy(&out).trim().to_string()
}
