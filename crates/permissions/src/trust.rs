//! Each workspace's trust file: the allow rules the user added with
//! "always", and the workspace MCP servers and hooks the user consented to.
//!
//! Guarantees: the file lives under the user's data folder
//! (`DATA/trust/NAME-HASH.toml`), never in the repository, so a repository
//! cannot grant itself permissions. A missing file is an empty trust; a file
//! written for another workspace (a hash clash, a copied file) is treated as
//! empty, never applied. Bad TOML or a bad rule is an error naming the file.
//! Saving is atomic (a temporary file in the same folder, synced, then
//! renamed) with mode 0600 on the file and 0700 on `DATA/trust` (Unix), and
//! never writes a rule that does not parse. `Trust::update` serialises
//! concurrent writers (several axon sessions) with a lock file.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::rule::{Rule, RuleError};

/// What the user trusts in one workspace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Trust {
    /// The workspace's canonical root.
    pub workspace: PathBuf,
    /// Allow rules, in the order they were added.
    pub allow: Vec<String>,
    /// Workspace MCP servers the user consented to: name -> a description of
    /// what it runs (its command line); a changed command is not trusted.
    pub mcp_servers: BTreeMap<String, String>,
    /// Workspace hooks the user consented to: the hook (event, matcher,
    /// command) -> a fingerprint of what it runs (the command and the
    /// workspace scripts it names); a changed one is not trusted.
    pub hooks: BTreeMap<String, String>,
    /// A session has run here (of any kind; the name is the older
    /// meaning, a session under `--yes`, kept so trust files stay
    /// readable): from then on `--yes` covers only the workspace servers
    /// and hooks trusted as they are, so one a command wrote or changed
    /// since is not run without a new consent.
    pub yes_baseline: bool,
}

/// A trust file that cannot be read, understood or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("cannot read the trust file {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("the trust file {path} is not valid ({reason}); fix or remove it")]
    Invalid { path: PathBuf, reason: String },
    /// A rule that does not parse; its message names the file.
    #[error(transparent)]
    Rule(RuleError),
    #[error("cannot write the trust file {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
}

/// The file's layout.
#[derive(Serialize, Deserialize)]
struct TrustFile {
    workspace: PathBuf,
    #[serde(default)]
    allow: Vec<String>,
    /// Before the tables: TOML puts plain values first.
    #[serde(default)]
    yes_baseline: bool,
    #[serde(default)]
    mcp_servers: BTreeMap<String, String>,
    #[serde(default)]
    hooks: BTreeMap<String, String>,
}

const HEADER: &str = "\
# axon trust file, written by axon: what the user allowed in one workspace.
# `allow` holds permission rules added with \"always\" in an approval;
# `mcp_servers` the workspace's MCP servers the user consented to, each with
# the command it runs (a changed command is asked about again); `hooks` the
# workspace's hook commands the user consented to, likewise; `yes_baseline`
# that a session ran here, so --yes now covers only those.
# It lives in the user's data folder, never in the repository, so a
# repository cannot grant itself permissions. axon rewrites this file:
# edits to its values are kept, comments are not.
";

/// Where the trust file of `workspace` lives:
/// `DATA/trust/<last component, sanitised>-<16 hex of sha256(path)>.toml`.
pub fn trust_path(data_dir: &Path, workspace: &Path) -> PathBuf {
    let name: String = workspace
        .file_name()
        .map(|name| name.to_string_lossy())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
        .take(48)
        .collect();
    // A leading dot would hide the file; an empty name would start with `-`.
    let name = match name.strip_prefix('.') {
        Some(rest) => format!("_{rest}"),
        None if name.is_empty() => "workspace".to_string(),
        None => name,
    };
    let digest = Sha256::digest(workspace.as_os_str().as_encoded_bytes());
    let hash: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    trust_dir(data_dir).join(format!("{name}-{hash}.toml"))
}

fn trust_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("trust")
}

impl Trust {
    /// An empty trust for `workspace`.
    pub fn new(workspace: impl Into<PathBuf>) -> Trust {
        Trust { workspace: workspace.into(), ..Trust::default() }
    }

    /// Reads the trust file of `workspace`; missing or written for another
    /// workspace = empty.
    pub fn load(data_dir: &Path, workspace: &Path) -> Result<Trust, TrustError> {
        let path = trust_path(data_dir, workspace);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Ok(Trust::new(workspace));
            }
            Err(source) => return Err(TrustError::Read { path, source }),
        };
        let file: TrustFile = toml::from_str(&text).map_err(|error| {
            let line =
                error.span().map(|span| text[..span.start.min(text.len())].lines().count().max(1));
            let reason = match line {
                Some(line) => format!("line {line}: {}", error.message()),
                None => error.message().to_string(),
            };
            TrustError::Invalid { path: path.clone(), reason }
        })?;
        if file.workspace != workspace {
            return Ok(Trust::new(workspace));
        }
        check_rules(&file.allow, &path)?;
        Ok(Trust {
            workspace: file.workspace,
            allow: file.allow,
            mcp_servers: file.mcp_servers,
            hooks: file.hooks,
            yes_baseline: file.yes_baseline,
        })
    }

    /// Writes the trust file atomically (see the module's guarantees).
    pub fn save(&self, data_dir: &Path) -> Result<(), TrustError> {
        let path = trust_path(data_dir, &self.workspace);
        check_rules(&self.allow, &path)?;
        let file = TrustFile {
            workspace: self.workspace.clone(),
            allow: self.allow.clone(),
            mcp_servers: self.mcp_servers.clone(),
            hooks: self.hooks.clone(),
            yes_baseline: self.yes_baseline,
        };
        let body = toml::to_string(&file).map_err(|error| TrustError::Invalid {
            path: path.clone(),
            reason: format!("cannot be written: {error}"),
        })?;
        let write_error = |source| TrustError::Write { path: path.clone(), source };
        let dir = trust_dir(data_dir);
        private_dir(&dir).map_err(write_error)?;
        let mut temp = tempfile::Builder::new()
            .prefix(".trust-")
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(write_error)?;
        temp.write_all(HEADER.as_bytes()).map_err(write_error)?;
        temp.write_all(b"\n").map_err(write_error)?;
        temp.write_all(body.as_bytes()).map_err(write_error)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            temp.as_file()
                .set_permissions(fs::Permissions::from_mode(0o600))
                .map_err(write_error)?;
        }
        temp.as_file().sync_all().map_err(write_error)?;
        temp.persist(&path).map_err(|error| write_error(error.error))?;
        // The rename is durable once the folder is synced; a file system
        // that cannot sync folders still has the complete file, so a failure
        // here is not worth failing the save for.
        if let Ok(folder) = fs::File::open(&dir) {
            let _ = folder.sync_all();
        }
        Ok(())
    }

    /// Loads the trust of `workspace`, applies `change`, and saves it if it
    /// changed, holding a lock so concurrent sessions do not lose each
    /// other's additions. Answers the trust as saved and `change`'s result.
    pub fn update<T>(
        data_dir: &Path,
        workspace: &Path,
        change: impl FnOnce(&mut Trust) -> T,
    ) -> Result<(Trust, T), TrustError> {
        let dir = trust_dir(data_dir);
        let lock_path = dir.join(".lock");
        let lock_error = |source| TrustError::Write { path: lock_path.clone(), source };
        private_dir(&dir).map_err(lock_error)?;
        let lock = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(lock_error)?;
        lock.lock().map_err(lock_error)?;
        let mut trust = Trust::load(data_dir, workspace)?;
        let before = trust.clone();
        let out = change(&mut trust);
        if trust != before {
            trust.save(data_dir)?;
        }
        // Closing the file releases the lock.
        drop(lock);
        Ok((trust, out))
    }

    /// Adds the rules not already present; all or nothing: a rule that
    /// does not parse adds none. Answers whether anything was added.
    pub fn add_allow(&mut self, rules: &[String]) -> Result<bool, RuleError> {
        for text in rules {
            Rule::parse(text)?;
        }
        let mut changed = false;
        for text in rules {
            let text = text.trim();
            if !self.allow.iter().any(|have| have.trim() == text) {
                self.allow.push(text.to_string());
                changed = true;
            }
        }
        Ok(changed)
    }

    /// Removes one allow rule: `which` is its number in `allow` counted
    /// from 1 (as `axon permissions list` shows them) or its text. Answers
    /// the rule removed; `None` when nothing matches.
    pub fn remove_allow(&mut self, which: &str) -> Option<String> {
        let which = which.trim();
        let index = match which.parse::<usize>() {
            Ok(number) if (1..=self.allow.len()).contains(&number) => number - 1,
            Ok(_) => return None,
            Err(_) => self.allow.iter().position(|have| have.trim() == which)?,
        };
        Some(self.allow.remove(index))
    }

    /// Whether the server `name` was trusted with exactly this description
    /// of what it runs.
    pub fn trusts_server(&self, name: &str, description: &str) -> bool {
        self.mcp_servers.get(name).is_some_and(|have| have == description)
    }

    /// Trusts the server `name` running `description` (replacing an older
    /// description); answers whether anything changed.
    pub fn trust_server(&mut self, name: &str, description: &str) -> bool {
        let previous = self.mcp_servers.insert(name.to_string(), description.to_string());
        previous.as_deref() != Some(description)
    }

    /// Whether the workspace hook `hook` was trusted with exactly this
    /// fingerprint of what it runs.
    pub fn trusts_hook(&self, hook: &str, fingerprint: &str) -> bool {
        self.hooks.get(hook).is_some_and(|have| have == fingerprint)
    }

    /// Trusts the workspace hook `hook` as `fingerprint` describes it;
    /// answers whether anything changed.
    pub fn trust_hook(&mut self, hook: &str, fingerprint: &str) -> bool {
        let previous = self.hooks.insert(hook.to_string(), fingerprint.to_string());
        previous.as_deref() != Some(fingerprint)
    }
}

fn check_rules(rules: &[String], path: &Path) -> Result<(), TrustError> {
    for text in rules {
        Rule::parse(text)
            .map_err(|error| TrustError::Rule(error.with_origin(path.display().to_string())))?;
    }
    Ok(())
}

/// Creates `dir` (and its parents) and makes it private to the user.
fn private_dir(dir: &Path) -> io::Result<()> {
    if let Some(parent) = dir.parent() {
        fs::create_dir_all(parent)?;
    }
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    match builder.create(dir) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(error),
    }
    // A folder made earlier (or by hand) with wider permissions is narrowed.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}
