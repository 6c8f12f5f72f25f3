//! A session's images, kept beside its file by content instead of inline.
//!
//! An image in a message (a `read_file` of a picture, `axon run --image`,
//! an `@shot.png` attachment, an editor's or the web panel's paste) is
//! base64 in memory and on the wire; in the session file it is a reference,
//! `{"type":"image","media_type":…,"sha256":…,"bytes":…}`, and its bytes
//! are the file `<sessions>/<id>.images/<sha256>.<ext>`, so a session that
//! looked at a few screenshots stays a few kilobytes of JSONL.
//!
//! Guarantees:
//! - One folder per session, not one shared by all: removing a session
//!   removes its images with it, and no session can lose an image another
//!   one still names (no reference counting, no collection to run). The
//!   same image twice in one session is one file (its name is its hash).
//! - A blob is written through the one atomic writer (temporary file,
//!   fsync, rename; 0600 in a 0700 folder) before the line naming it is
//!   written, so a line never names a blob a crash could have lost.
//! - Loading puts every image back as base64 after checking its hash. A
//!   blob that is missing, unreadable or altered becomes a text part saying
//!   so (what the model is given instead) and a warning; never an error.
//! - A blob's name is built only from a 64-digit hex hash and a fixed
//!   extension, so a tampered line cannot name a file elsewhere.
//! - A blob that cannot be written leaves the image inline in the line,
//!   as older files hold it: the session stays complete, only larger.

use std::io::Read;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::store::private_dir;

/// The folder holding the images of the session file `session`.
pub(crate) fn blob_dir(session: &Path) -> PathBuf {
    session.with_extension("images")
}

/// The file an image of `media_type` with hash `sha256` is kept in; `None`
/// for a hash that is not 64 lowercase hex digits.
fn blob_path(session: &Path, sha256: &str, media_type: &str) -> Option<PathBuf> {
    let is_hash =
        sha256.len() == 64 && sha256.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    is_hash.then(|| blob_dir(session).join(format!("{sha256}.{}", extension(media_type))))
}

/// The extension a blob of `media_type` is named with.
pub(crate) fn extension(media_type: &str) -> &'static str {
    match media_type {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => "bin",
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The sha256 of the image whose base64 is `data` (what names its blob);
/// `None` when `data` is not base64.
pub(crate) fn sha256_of(data: &str) -> Option<String> {
    BASE64.decode(data).ok().map(|bytes| hex(&Sha256::digest(&bytes)))
}

/// The content parts of a `message` record that are images.
fn image_parts(record: &mut Value) -> impl Iterator<Item = &mut Value> {
    let is_message = record.get("type").and_then(Value::as_str) == Some("message");
    record
        .pointer_mut("/message/content")
        .filter(|_| is_message)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter(|part| part.get("type").and_then(Value::as_str) == Some("image"))
}

/// Moves each inline image of `record` (a record as JSON, before it is
/// written to the session file `session`) into the session's image
/// folder, leaving a reference in its place.
pub(crate) fn externalize(record: &mut Value, session: &Path) {
    for part in image_parts(record) {
        let (Some(media_type), Some(data)) = (
            part.get("media_type").and_then(Value::as_str),
            part.get("data").and_then(Value::as_str),
        ) else {
            continue;
        };
        // Not base64 (nothing axon makes): kept as it came.
        let Ok(bytes) = BASE64.decode(data) else { continue };
        let sha256 = hex(&Sha256::digest(&bytes));
        let Some(path) = blob_path(session, &sha256, media_type) else { continue };
        if store_blob(&path, &bytes).is_ok() {
            *part = json!({
                "type": "image",
                "media_type": media_type,
                "sha256": sha256,
                "bytes": bytes.len(),
            });
        }
    }
}

/// Writes `bytes` to `path` unless they are there already: a copy that was
/// damaged since is written again, so naming the image anew heals it.
fn store_blob(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let same_size =
        std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64);
    if same_size && std::fs::read(path).is_ok_and(|there| there == bytes) {
        return Ok(());
    }
    let Some(dir) = path.parent() else {
        return Err(std::io::Error::other("an image path without a folder"));
    };
    if !dir.is_dir() {
        private_dir(dir)?;
        // The new folder's name must reach the disk with the file in it.
        if let Some(sessions) = dir.parent() {
            std::fs::File::open(sessions)?.sync_all()?;
        }
    }
    axon_tools::atomic_write_private(path, bytes)
}

/// Puts back the image data of each reference in `record` (a line of the
/// session file `session`, parsed). What cannot be put back becomes a text
/// part saying so, and a sentence in the returned list.
pub(crate) fn internalize(record: &mut Value, session: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    for part in image_parts(record) {
        if part.get("data").is_some() {
            continue; // inline, as files before references hold it
        }
        let field = |name: &str| part.get(name).and_then(Value::as_str).map(str::to_string);
        let media_type = field("media_type").unwrap_or_else(|| "image".to_string());
        let sha256 = field("sha256").unwrap_or_default();
        let size = part.get("bytes").and_then(Value::as_u64);
        match read_blob(session, &sha256, &media_type, size) {
            Ok(bytes) => {
                *part = json!({
                    "type": "image",
                    "media_type": media_type,
                    "data": BASE64.encode(bytes),
                });
            }
            Err(reason) => {
                let short = sha256.get(..12).unwrap_or(&sha256);
                *part = json!({
                    "type": "text",
                    "text": format!(
                        "[an image ({media_type}, sha256 {short}…) was here; it is no longer \
                         available: {reason}]"
                    ),
                });
                problems.push(format!("image {short}… ({media_type}) {reason}"));
            }
        }
    }
    problems
}

/// The image with hash `sha256`, read and checked; why not, in words.
fn read_blob(
    session: &Path,
    sha256: &str,
    media_type: &str,
    size: Option<u64>,
) -> Result<Vec<u8>, String> {
    let path = blob_path(session, sha256, media_type)
        .ok_or_else(|| format!("its reference names no valid sha256 ('{sha256}')"))?;
    let file = std::fs::File::open(&path)
        .map_err(|e| format!("its copy {} cannot be read ({e})", path.display()))?;
    // Never more than the reference says (plus one byte, to notice more).
    let limit = size.map_or(u64::MAX, |n| n.saturating_add(1));
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("its copy {} cannot be read ({e})", path.display()))?;
    if hex(&Sha256::digest(&bytes)) != sha256 {
        return Err(format!(
            "its copy {} was changed or damaged (the sha256 does not match)",
            path.display()
        ));
    }
    Ok(bytes)
}

/// Removes the image folder of the session file `session`, if it has one.
pub(crate) fn remove_blobs(session: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(blob_dir(session)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}
