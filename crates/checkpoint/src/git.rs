//! The one door to the `git` CLI. Every command runs against the shadow
//! repository (`GIT_DIR`) with the workspace as its work tree, in an
//! environment built from nothing: the user's git config (system, global,
//! `GIT_CONFIG_*`), hooks, signing, editors, pagers, askpass and any `GIT_*`
//! variable that could point git at another index or object store never
//! reach it. Paths cross the pipe NUL-separated, never quoted.

use std::ffi::OsStr;
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::CheckpointError;

/// The oldest git with `--pathspec-from-file` (2.25, January 2020).
const MIN_VERSION: (u32, u32) = (2, 25);

/// The first git whose `update-index` wraps its additions in one object
/// database transaction (2.37), so that blobs streamed to a pack all land
/// in a single pack; older ones would write one pack per file.
const ONE_PACK_VERSION: (u32, u32) = (2, 37);

/// From how many files one `update-index` writes its new blobs into a pack
/// instead of one loose object each: a loose object costs a file (and often
/// a fan-out folder) created, written and renamed, which on the first
/// snapshot of a tree is most of its time; a pack is one file. Small turns
/// stay loose, so the packs made this way are few (the first snapshot, and
/// turns that add a whole tree), and `gc` in `prune_session` folds them.
pub(crate) const PACK_FROM_FILES: usize = 64;

/// The git version, asked once per process (a `git --version` per open
/// would cost a process each time): `None` for an unusual version string.
/// Kept with the text git printed, for the error message.
static VERSION: OnceLock<(Option<(u32, u32)>, String)> = OnceLock::new();

/// The identity every snapshot commit carries, so no user config is needed.
const IDENTITY: &str = "axon";
const EMAIL: &str = "axon@localhost";

/// How much of git's stderr an error keeps: the end, where git says why.
const STDERR_TAIL: usize = 1500;

/// A git command line bound to one shadow repository and work tree.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    pub(crate) git_dir: PathBuf,
    pub(crate) work_tree: PathBuf,
    /// The user's `.git/info/exclude`, honoured as an extra excludes file.
    pub(crate) user_exclude: Option<PathBuf>,
    /// Whether many new blobs may be streamed into one pack
    /// ([`ONE_PACK_VERSION`]).
    pub(crate) one_pack: bool,
}

/// Settings that make the per-turn scan cheap, given on every command line
/// (so shadow repositories made before they existed get them too):
/// `status` keeps an untracked cache in the index, so a folder whose mtime
/// and ignore files have not changed since the last scan is not read again
/// (git counts a folder changed in the same tick as the index was written
/// as changed); the cache serves `-uall` only when that is the configured
/// mode.
const SPEED: [&str; 2] = ["core.untrackedCache=true", "status.showUntrackedFiles=all"];

impl Git {
    fn command(&self) -> Command {
        let mut command = Command::new("git");
        command.env_clear();
        // PATH to find git and its helpers; nothing else of the caller's.
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        command
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            // HOME points into the shadow repo: no ~/.gitconfig, no
            // ~/.config/git/{config,ignore,attributes}.
            .env("HOME", &self.git_dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", IDENTITY)
            .env("GIT_AUTHOR_EMAIL", EMAIL)
            .env("GIT_COMMITTER_NAME", IDENTITY)
            .env("GIT_COMMITTER_EMAIL", EMAIL)
            .env("LC_ALL", "C")
            .current_dir(&self.work_tree)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for pair in SPEED {
            command.args(["-c", pair]);
        }
        if let Some(exclude) = &self.user_exclude {
            command.arg("-c").arg(config_pair("core.excludesFile", exclude));
        }
        command
    }

    /// Creates a bare repository at `git_dir`, in the same clean
    /// environment but without a work tree, which `init --bare` refuses.
    pub(crate) fn init_bare(&self) -> Result<(), CheckpointError> {
        let mut command = self.command();
        command.env_remove("GIT_DIR").env_remove("GIT_WORK_TREE");
        // Files 0600 and folders 0700 from the first one on: snapshots hold
        // the workspace's secrets too.
        command.args(["init", "-q", "--bare", "--template=", "--shared=0600"]).arg(&self.git_dir);
        run_command(command, None).map(drop)
    }

    /// Runs `git ARGS`, feeding `input` on stdin, and returns its stdout.
    /// A non-zero exit is an error carrying the end of git's stderr.
    pub(crate) fn run<I, S>(
        &self,
        args: I,
        input: Option<Vec<u8>>,
    ) -> Result<Vec<u8>, CheckpointError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = self.command();
        command.args(args);
        run_command(command, input)
    }

    /// [`Git::run`], but git may also write what it learnt into the index
    /// (refreshed stat data, the untracked cache): only for `status`, and
    /// only under the workspace's lock.
    pub(crate) fn run_updating_index<I, S>(&self, args: I) -> Result<Vec<u8>, CheckpointError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = self.command();
        command.env_remove("GIT_OPTIONAL_LOCKS").args(args);
        run_command(command, None)
    }
}

/// `git --version` must answer and be recent enough. Returns whether its
/// `update-index` can stream many blobs into one pack. Asked once per
/// process; a failure is not remembered, so a git installed later is found.
pub(crate) fn check_version() -> Result<bool, CheckpointError> {
    let (version, text) = match VERSION.get() {
        Some(known) => known,
        None => {
            let asked = ask_version()?;
            VERSION.get_or_init(|| asked)
        }
    };
    match *version {
        Some(found) if found < MIN_VERSION => {
            Err(CheckpointError::GitTooOld { found: text.clone() })
        }
        Some(found) => Ok(found >= ONE_PACK_VERSION),
        // An unusual version string (a vendor build): let the commands
        // decide, and keep to loose objects, which every git writes alike.
        None => Ok(false),
    }
}

fn ask_version() -> Result<(Option<(u32, u32)>, String), CheckpointError> {
    let mut command = Command::new("git");
    command.arg("--version").stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let out = run_command(command, None)?;
    let text = String::from_utf8_lossy(&out);
    let version = text.trim().strip_prefix("git version ").unwrap_or(text.trim());
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    let parsed = match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => Some((major, minor)),
        _ => None,
    };
    Ok((parsed, version.to_string()))
}

fn run_command(mut command: Command, input: Option<Vec<u8>>) -> Result<Vec<u8>, CheckpointError> {
    let line = describe(&command);
    if input.is_some() {
        command.stdin(Stdio::piped());
    }
    die_with_parent(&mut command);
    let mut child = command.spawn().map_err(|e| match e.kind() {
        ErrorKind::NotFound => CheckpointError::GitMissing,
        _ => CheckpointError::Spawn { source: e },
    })?;
    // stdin is written from its own thread so a child that answers while it
    // reads can never fill its stdout pipe and stall against us.
    let writer = match (input, child.stdin.take()) {
        (Some(bytes), Some(mut stdin)) => Some(std::thread::spawn(move || stdin.write_all(&bytes))),
        _ => None,
    };
    let mut stderr = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(stderr) = stderr.as_mut() {
            let _ = stderr.read_to_end(&mut buf);
        }
        buf
    });
    let mut stdout = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_end(&mut stdout).map_err(|e| CheckpointError::Spawn { source: e })?;
    }
    let status = child.wait().map_err(|e| CheckpointError::Spawn { source: e })?;
    let stderr = err_reader.join().unwrap_or_default();
    // A broken pipe means git stopped reading early; its status says why.
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    if !status.success() {
        let text = String::from_utf8_lossy(&stderr);
        let text = text.trim();
        let cut = text.len().saturating_sub(STDERR_TAIL);
        let cut = (cut..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
        return Err(CheckpointError::GitFailed {
            command: line,
            code: status.code(),
            stderr: text[cut..].to_string(),
        });
    }
    Ok(stdout)
}

/// `git sub-command ...` for error messages (the `-c` pairs left out).
fn describe(command: &Command) -> String {
    let mut words = vec!["git".to_string()];
    let mut skip = false;
    for arg in command.get_args() {
        let arg = arg.to_string_lossy();
        if skip {
            skip = false;
        } else if arg == "-c" {
            skip = true;
        } else {
            words.push(arg.into_owned());
        }
    }
    words.join(" ")
}

fn config_pair(key: &str, value: &Path) -> std::ffi::OsString {
    let mut pair = std::ffi::OsString::from(format!("{key}="));
    pair.push(value.as_os_str());
    pair
}

/// Splits NUL-terminated output into its non-empty records.
pub(crate) fn split_z(out: &[u8]) -> impl Iterator<Item = &[u8]> {
    out.split(|&b| b == 0).filter(|s| !s.is_empty())
}

/// A path git printed, relative to the work tree.
pub(crate) fn path_of(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// Literal pathspecs for `--pathspec-from-file --pathspec-file-nul`: a
/// file named `*.rs` or `:(glob)x` means itself and nothing else.
pub(crate) fn literal_pathspecs<'a>(paths: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for path in paths {
        out.extend_from_slice(b":(literal)");
        out.extend_from_slice(path);
        out.push(0);
    }
    out
}

/// NUL-terminated paths for `--stdin -z` commands.
pub(crate) fn nul_list<'a>(paths: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for path in paths {
        out.extend_from_slice(path);
        out.push(0);
    }
    out
}

/// git gets SIGKILL when the thread that started it dies (axon killed):
/// a git left running would hold files of the shadow repository that the
/// next axon, holding the workspace lock, takes for stale and removes.
fn die_with_parent(command: &mut Command) {
    axon_process::die_with_parent_std(command);
}
