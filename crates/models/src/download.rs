//! Resumable downloads into `<store>/.partial/`. A download writes
//! `<name>.part` and, before its first byte, a sidecar `<name>.part.json`
//! with the URL and the server's validator (a strong ETag or
//! Last-Modified). A later download of the same URL asks only for the rest
//! (`Range: bytes=N-` with `If-Range: validator`); a `200` instead of `206`
//! means the file changed (or the server ignores ranges) and it starts
//! again from zero. Nothing here makes a model: the caller verifies the
//! finished file and moves it into the store.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{ModelError, Progress};

pub(crate) const DOWNLOADING: &str = "downloading";
pub(crate) const VERIFYING: &str = "verifying";

/// The HTTP client every pull uses; `follow` says whether redirects are
/// followed (metadata requests read the redirect itself).
pub(crate) fn client(follow: bool) -> Result<reqwest::Client, ModelError> {
    // rustls needs a process-wide crypto provider. Installing it again (or
    // after the embedding program chose one) fails harmlessly.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redirects = if follow {
        reqwest::redirect::Policy::limited(10)
    } else {
        reqwest::redirect::Policy::none()
    };
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(15))
        .read_timeout(Duration::from_secs(60))
        .redirect(redirects)
        .build()
        .map_err(|e| ModelError::Client(e.to_string()))
}

/// The error for a failed request, without query strings (they may hold
/// signed tokens).
pub(crate) fn network(url: &str, error: &reqwest::Error) -> ModelError {
    let mut detail = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        detail = format!("{detail}: {inner}");
        source = inner.source();
    }
    ModelError::Network { url: redact(url), detail }
}

/// `url` without its query: CDN redirects carry signatures there.
pub(crate) fn redact(url: &str) -> String {
    url.split_once('?').map_or(url, |(base, _)| base).to_string()
}

/// The error for a status that is not success, with a hint that fits it.
pub(crate) fn status_error(url: &str, status: StatusCode, auth_hint: &str) -> ModelError {
    let hint = match status.as_u16() {
        401 | 403 => format!(" (not allowed{auth_hint})"),
        404 => " (not found: check the name, and the revision or version)".to_string(),
        429 => " (too many requests: wait a little and pull again)".to_string(),
        500..=599 => " (a server error: pull again later)".to_string(),
        _ => String::new(),
    };
    ModelError::Http { url: redact(url), status: status.as_u16(), hint }
}

/// What a download needs beyond its URL.
pub(crate) struct Fetch<'a> {
    pub client: &'a reqwest::Client,
    pub url: String,
    /// Sent as `Authorization: Bearer`.
    pub bearer: Option<&'a str>,
    /// The file it goes to, `<store>/.partial/<name>.part`.
    pub part: PathBuf,
    /// Said in a 401/403 error: how to get access.
    pub auth_hint: &'a str,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Sidecar {
    url: String,
    validator: String,
}

pub(crate) fn sidecar_path(part: &Path) -> PathBuf {
    let mut name = part.as_os_str().to_os_string();
    name.push(".json");
    PathBuf::from(name)
}

/// Removes a partial download and its sidecar.
pub(crate) async fn discard(part: &Path) {
    let _ = tokio::fs::remove_file(part).await;
    let _ = tokio::fs::remove_file(sidecar_path(part)).await;
}

/// The bytes already on disk for this URL that the server can be asked to
/// continue, with the validator to ask with; anything else is discarded.
async fn resumable(fetch: &Fetch<'_>) -> Option<(u64, String)> {
    let sidecar = tokio::fs::read(sidecar_path(&fetch.part)).await.ok();
    let sidecar = sidecar.and_then(|bytes| serde_json::from_slice::<Sidecar>(&bytes).ok());
    let len = tokio::fs::metadata(&fetch.part).await.ok().map(|m| m.len());
    match (sidecar, len) {
        (Some(sidecar), Some(len)) if sidecar.url == fetch.url && len > 0 => {
            Some((len, sidecar.validator))
        }
        _ => {
            discard(&fetch.part).await;
            None
        }
    }
}

/// The validator `If-Range` may carry: a strong ETag, else Last-Modified.
fn validator(headers: &HeaderMap) -> Option<String> {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    text(header::ETAG)
        .filter(|etag| !etag.starts_with("W/"))
        .or_else(|| text(header::LAST_MODIFIED))
}

/// The start and total of a `Content-Range: bytes START-END/TOTAL`.
fn content_range(headers: &HeaderMap) -> Option<(u64, Option<u64>)> {
    let value = headers.get(header::CONTENT_RANGE)?.to_str().ok()?;
    let rest = value.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let (start, _) = range.split_once('-')?;
    Some((start.trim().parse().ok()?, total.trim().parse().ok()))
}

/// Downloads `fetch.url` into `fetch.part`, continuing a partial download
/// when the server allows. Returns the file's length. On a network error
/// the bytes received so far stay for the next try.
pub(crate) async fn download(
    fetch: &Fetch<'_>,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<u64, ModelError> {
    if let Some(parent) = fetch.part.parent() {
        tokio::fs::create_dir_all(parent).await.map_err(|e| ModelError::io("create", parent, e))?;
    }
    let mut resume = resumable(fetch).await;
    let response = loop {
        let mut request = fetch.client.get(&fetch.url);
        if let Some(token) = fetch.bearer {
            request = request.bearer_auth(token);
        }
        if let Some((offset, validator)) = &resume {
            request = request
                .header(header::RANGE, format!("bytes={offset}-"))
                .header(header::IF_RANGE, validator);
        }
        let response = request.send().await.map_err(|e| network(&fetch.url, &e))?;
        // The range asked for is past the end: the file on the server is
        // not the one that was partly downloaded. Start over.
        if response.status() == StatusCode::RANGE_NOT_SATISFIABLE && resume.is_some() {
            discard(&fetch.part).await;
            resume = None;
            continue;
        }
        if !response.status().is_success() {
            return Err(status_error(&fetch.url, response.status(), fetch.auth_hint));
        }
        break response;
    };

    let continued = match (&resume, response.status()) {
        (Some((offset, _)), StatusCode::PARTIAL_CONTENT) => {
            content_range(response.headers()).filter(|(start, _)| start == offset)
        }
        _ => None,
    };
    let (offset, total) = match continued {
        Some((start, total)) => (start, total),
        None => {
            if response.status() == StatusCode::PARTIAL_CONTENT {
                // A range that was not asked for cannot be appended.
                discard(&fetch.part).await;
                return Err(ModelError::Http {
                    url: redact(&fetch.url),
                    status: 206,
                    hint: " (a part of the file that was not asked for; pull again)".to_string(),
                });
            }
            (0, response.content_length())
        }
    };

    // The sidecar goes down before the first byte, so whatever lands in
    // the partial file can be continued.
    match validator(response.headers()).or_else(|| resume.as_ref().map(|(_, v)| v.clone())) {
        Some(validator) => {
            let sidecar = Sidecar { url: fetch.url.clone(), validator };
            let bytes =
                serde_json::to_vec(&sidecar).map_err(|e| ModelError::Client(e.to_string()))?;
            let path = sidecar_path(&fetch.part);
            tokio::fs::write(&path, bytes).await.map_err(|e| ModelError::io("write", &path, e))?;
        }
        None => {
            let _ = tokio::fs::remove_file(sidecar_path(&fetch.part)).await;
        }
    }

    let mut file = tokio::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(offset > 0)
        .truncate(offset == 0)
        .open(&fetch.part)
        .await
        .map_err(|e| ModelError::io("write", &fetch.part, e))?;
    let mut writer = tokio::io::BufWriter::with_capacity(1 << 20, &mut file);
    let mut done = offset;
    progress(Progress { done, total, resumed_from: offset, stage: DOWNLOADING });
    let mut response = response;
    let outcome = loop {
        match response.chunk().await {
            Ok(Some(bytes)) => {
                if let Err(e) = writer.write_all(&bytes).await {
                    break Err(ModelError::io("write", &fetch.part, e));
                }
                done += bytes.len() as u64;
                progress(Progress { done, total, resumed_from: offset, stage: DOWNLOADING });
            }
            Ok(None) => break Ok(()),
            Err(e) => {
                break Err(ModelError::Interrupted {
                    url: redact(&fetch.url),
                    done,
                    total: total.map_or("?".to_string(), |t| t.to_string()),
                    detail: network(&fetch.url, &e).to_string(),
                });
            }
        }
    };
    // What arrived is kept, interrupted or not: it is where the next try
    // continues.
    let flushed = writer.flush().await.map_err(|e| ModelError::io("write", &fetch.part, e));
    outcome?;
    flushed?;
    if let Some(total) = total
        && done != total
    {
        return Err(ModelError::Interrupted {
            url: redact(&fetch.url),
            done,
            total: total.to_string(),
            detail: "the connection ended early".to_string(),
        });
    }
    Ok(done)
}

/// The sha256 of a file, as lowercase hex, reported as the `verifying` stage.
pub(crate) async fn sha256_file(
    path: &Path,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<String, ModelError> {
    let mut file =
        tokio::fs::File::open(path).await.map_err(|e| ModelError::io("read", path, e))?;
    let total = file.metadata().await.map_err(|e| ModelError::io("read", path, e))?.len();
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut done = 0;
    progress(Progress { done, total: Some(total), resumed_from: 0, stage: VERIFYING });
    loop {
        let n = file.read(&mut buf).await.map_err(|e| ModelError::io("read", path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        done += n as u64;
        progress(Progress { done, total: Some(total), resumed_from: 0, stage: VERIFYING });
    }
    Ok(hex(&hasher.finalize()))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A sha256 as a server may publish it: 64 hex digits, perhaps quoted.
pub(crate) fn as_sha256(value: &str) -> Option<String> {
    let value = value.trim().trim_start_matches("W/").trim_matches('"').to_ascii_lowercase();
    (value.len() == 64 && value.bytes().all(|b| b.is_ascii_hexdigit())).then_some(value)
}
