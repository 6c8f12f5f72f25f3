//! Where a signed-in server's tokens live: one file per server under the
//! user's data folder (`mcp-tokens/`), never in a workspace or a session.
//!
//! Guarantees:
//! - The file is named by the server's name and a hash of its URL, so a
//!   server whose URL changed never gets the old server's tokens.
//! - The folder is created 0700 and the file 0600, and every write replaces
//!   the file atomically (axon's one writer), so a crash leaves the old
//!   tokens or the new, never a mix, and never a readable copy.
//! - Tokens are never printed: `StoredCredentials`' `Debug` redacts them and
//!   errors name the file, not its content.

use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use sha2::{Digest, Sha256};

/// The folder under the data folder that holds tokens.
pub(crate) const TOKEN_FOLDER: &str = "mcp-tokens";

/// The token file of the server `name` at `url`, under `token_dir`.
pub fn token_path(token_dir: &Path, name: &str, url: &str) -> PathBuf {
    let digest = Sha256::digest(url.as_bytes());
    let hash: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let safe: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .take(64)
        .collect();
    token_dir.join(format!("{safe}-{hash}.json"))
}

/// Writes `data` to `path` atomically, the file 0600 in a 0700 folder.
pub(crate) fn write_private(path: &Path, data: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    // A new file is created private first: the atomic writer keeps an
    // existing file's mode.
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot make {} private: {e}", path.display()))?;
    axon_tools::atomic_write_path(path, data)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// rmcp's credential store on one token file.
#[derive(Clone, Debug)]
pub(crate) struct FileStore {
    pub(crate) path: PathBuf,
}

fn store_error(path: &Path, what: &str, e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(format!("{what} {}: {e}", path.display()))
}

impl FileStore {
    pub(crate) fn read(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(store_error(&self.path, "cannot read", e)),
        };
        // The content is never quoted: it holds the tokens.
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|_| store_error(&self.path, "not a token file:", "run `axon mcp login` again"))
    }

    fn write(&self, credentials: &StoredCredentials) -> Result<(), AuthError> {
        let text = serde_json::to_vec_pretty(credentials)
            .map_err(|e| store_error(&self.path, "cannot encode the tokens for", e))?;
        write_private(&self.path, &text).map_err(AuthError::CredentialStoreError)
    }

    /// Removes the file; whether there was one.
    pub(crate) fn remove(&self) -> Result<bool, String> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(format!("cannot remove {}: {e}", self.path.display())),
        }
    }
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read()
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(&credentials)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remove().map(|_| ()).map_err(AuthError::CredentialStoreError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_url_is_another_file_and_names_stay_plain() {
        let dir = Path::new("/d");
        let a = token_path(dir, "remote", "https://a.example/mcp");
        let b = token_path(dir, "remote", "https://b.example/mcp");
        assert_ne!(a, b);
        assert_eq!(a, token_path(dir, "remote", "https://a.example/mcp"));
        let odd = token_path(dir, "../x y", "u");
        assert_eq!(odd.parent(), Some(dir));
        assert!(odd.file_name().unwrap().to_string_lossy().starts_with("___x_y-"));
    }
}
