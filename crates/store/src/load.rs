//! Reading a session file back, whatever state a crash left it in.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::record::{HEADER_TYPE, HeaderLine, Record, SESSION_VERSION};
use crate::redact::Redactor;
use crate::store::Session;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read session file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("session file {0} is empty (a session that crashed before its first line); remove it")]
    Empty(PathBuf),
    #[error("session file {path}, line 1: not a session header ({reason})")]
    BadHeader { path: PathBuf, reason: String },
    #[error(
        "session file {path} was written by a newer axon (schema version {found}; this one reads \
         up to {SESSION_VERSION}); upgrade axon to open it"
    )]
    TooNew { path: PathBuf, found: u32 },
}

/// Loads a session file. Unreadable lines after the header are skipped with
/// a warning (a torn last line is the usual case, from a crash mid-write);
/// only a missing or unreadable header is an error.
pub fn load(path: &Path) -> Result<Session, LoadError> {
    let bytes = std::fs::read(path)
        .map_err(|source| LoadError::Read { path: path.to_path_buf(), source })?;
    let text = String::from_utf8_lossy(&bytes);
    if text.trim().is_empty() {
        return Err(LoadError::Empty(path.to_path_buf()));
    }
    let ends_cleanly = text.ends_with('\n');
    let mut lines = text.split('\n').enumerate().peekable();
    let (_, first) = lines.next().unwrap_or((0, ""));
    let bad_header = |reason: String| LoadError::BadHeader { path: path.to_path_buf(), reason };
    let mut header_value: Value =
        serde_json::from_str(first).map_err(|e| bad_header(e.to_string()))?;
    if header_value.get("type").and_then(Value::as_str) != Some(HEADER_TYPE) {
        return Err(bad_header("its \"type\" is not \"session\"".to_string()));
    }
    let version = header_value
        .get("version")
        .and_then(Value::as_u64)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| bad_header("no schema \"version\"".to_string()))?;
    if version > SESSION_VERSION {
        return Err(LoadError::TooNew { path: path.to_path_buf(), found: version });
    }
    migrate_header(&mut header_value, version);
    let mut header: HeaderLine =
        serde_json::from_value(header_value).map_err(|e| bad_header(e.to_string()))?;
    // Files written before titles were redacted may hold a key in theirs.
    header.header.title = Redactor::default().redact(&header.header.title);

    let mut records = Vec::new();
    let mut warnings = Vec::new();
    while let Some((index, line)) = lines.next() {
        let is_last = lines.peek().is_none_or(|(_, rest)| rest.is_empty() && ends_cleanly);
        if line.trim().is_empty() {
            continue;
        }
        let parsed =
            serde_json::from_str::<Value>(line).map_err(|e| e.to_string()).and_then(|mut value| {
                migrate_record(&mut value, version);
                for problem in crate::images::internalize(&mut value, path) {
                    warnings.push(format!(
                        "{}, line {}: {problem}; the model is told it is missing",
                        path.display(),
                        index + 1
                    ));
                }
                serde_json::from_value::<Record>(value).map_err(|e| e.to_string())
            });
        match parsed {
            Ok(record) => records.push(record),
            Err(_) if is_last && !ends_cleanly => warnings.push(format!(
                "{}: the last line was cut off (the run was interrupted while writing it) and was dropped",
                path.display()
            )),
            Err(reason) => warnings.push(format!(
                "{}, line {}: unreadable, skipped ({reason})",
                path.display(),
                index + 1
            )),
        }
    }
    Ok(Session { path: path.to_path_buf(), header: header.header, records, warnings })
}

/// Brings a header written by schema `from` up to [`SESSION_VERSION`].
/// Version 1 is the first; each later version adds its step here, so an old
/// file is migrated one version at a time.
fn migrate_header(header: &mut Value, from: u32) {
    if from < SESSION_VERSION {
        header["version"] = Value::from(SESSION_VERSION);
    }
}

/// Brings one record written by schema `from` up to [`SESSION_VERSION`].
fn migrate_record(_record: &mut Value, _from: u32) {}
