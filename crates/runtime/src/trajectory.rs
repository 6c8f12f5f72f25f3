//! Saved sessions as ATIF trajectories (`axon sessions export --format
//! atif`, `axon run --trajectory FILE`): the conversion is the store's
//! ([`axon_store::to_atif`], whose doc says what a trajectory holds); this
//! names axon's version as the agent's and writes the file atomically.

use std::path::Path;

use anyhow::{Context, Result};
/// A session as loaded from its file.
pub use axon_store::Session as SavedSession;
use axon_store::SessionStore;
pub use axon_store::{ATIF_VERSION, AtifError, AtifExport, Trajectory, atif_json};

/// The agent version a trajectory names: this build's.
pub const AGENT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// `session` as a trajectory, with the lines loading it had to skip.
pub fn from_session(session: &SavedSession) -> Result<AtifExport, AtifError> {
    axon_store::to_atif(session, AGENT_VERSION)
}

/// Writes session `id` as an ATIF trajectory to `path`, atomically (a
/// reader sees the old file or the whole new one). Returns the lines of
/// the session file that could not be read and were left out.
pub fn write(store: &SessionStore, id: &str, path: &Path) -> Result<Vec<String>> {
    let session = store.open(id)?;
    let export = from_session(&session)?;
    let mut json = atif_json(&export.trajectory);
    json.push('\n');
    axon_tools::atomic_write_path(path, json.as_bytes()).with_context(|| {
        format!(
            "cannot write the trajectory to {}; check that its folder exists and is writable",
            path.display()
        )
    })?;
    Ok(export.skipped)
}
