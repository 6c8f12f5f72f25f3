//! Opening the provider a session talks to: an API through
//! [`axon_llm::connect`], or a GGUF model run in this process.
//!
//! Guarantees: a local model is checked (a GGUF file, complete) before
//! llama.cpp sees it, so a damaged file gets a message naming it instead of
//! a failure inside the C++ loader; it is loaded once per process and
//! settings and shared by every session that uses it (the web panel's and
//! the editor's sessions do not each hold a copy); loading runs off the
//! async runtime. In a build without the `local-model` feature (no
//! llama.cpp), asking for the local model is an error saying how to get it,
//! never a provider that is missing at the first turn.

#[cfg(feature = "local-model")]
use std::path::{Path, PathBuf};
use std::sync::Arc;
#[cfg(feature = "local-model")]
use std::sync::Weak;

#[cfg(feature = "local-model")]
use anyhow::Context;
use anyhow::{Result, bail};
use axon_llm::{Provider, ProviderConfig, ProviderKind};
#[cfg(feature = "local-model")]
use axon_local::{LocalConfig, LocalProvider};
#[cfg(feature = "local-model")]
use axon_models::{DEFAULT_SOURCE, ModelStore};

use crate::config::Effective;

pub use crate::config::{LOCAL_MODEL_IN_THIS_BUILD as IN_THIS_BUILD, LOCAL_PROVIDER};

/// What a user without the local model in their build can do instead.
const NOT_BUILT: &str = "this axon was built without the local model (cargo feature `local-model`). \
     Build it with the default features (`cargo build --release`; scripts/setup installs the cmake \
     and C++ compiler llama.cpp needs), install a release package, or use a provider over HTTP \
     (--provider openai, anthropic, deepseek, ...)";

/// The provider `config` describes, connected or loaded.
pub async fn connect(config: &ProviderConfig, effective: &Effective) -> Result<Arc<dyn Provider>> {
    if config.kind != ProviderKind::Local {
        return Ok(axon_llm::connect(config).await?);
    }
    load(config, effective).await
}

#[cfg(not(feature = "local-model"))]
async fn load(_config: &ProviderConfig, _effective: &Effective) -> Result<Arc<dyn Provider>> {
    bail!("{NOT_BUILT}")
}

#[cfg(feature = "local-model")]
async fn load(config: &ProviderConfig, effective: &Effective) -> Result<Arc<dyn Provider>> {
    let layer = effective.file.providers.get(&config.name).cloned().unwrap_or_default();
    let (model_path, model_name) = resolve(&effective.data, &config.model)?;
    let window = config.context_window.map(|w| u32::try_from(w).unwrap_or(u32::MAX));
    let local = LocalConfig {
        model_path,
        model_name,
        threads: layer.threads,
        context_window: window,
        gpu_layers: layer.gpu_layers.unwrap_or(0),
        seed: 0,
        temperature: layer.temperature,
        max_tokens: config.max_tokens,
    };
    let provider: Arc<LocalProvider> = load_shared(local).await?;
    Ok(provider)
}

/// Every local model this process has loaded and still uses. The lock is
/// held across a load, so two sessions opening at once load one copy.
#[cfg(feature = "local-model")]
static LOADED: tokio::sync::Mutex<Vec<(LocalConfig, Weak<LocalProvider>)>> =
    tokio::sync::Mutex::const_new(Vec::new());

#[cfg(feature = "local-model")]
async fn load_shared(local: LocalConfig) -> Result<Arc<LocalProvider>> {
    let mut loaded = LOADED.lock().await;
    loaded.retain(|(_, weak)| weak.strong_count() > 0);
    if let Some(live) = loaded.iter().find(|(c, _)| *c == local).and_then(|(_, w)| w.upgrade()) {
        return Ok(live);
    }
    let settings = local.clone();
    let provider = tokio::task::spawn_blocking(move || {
        // The header check reads the file: off the async runtime too.
        axon_models::check_gguf(&settings.model_path)?;
        Ok::<_, anyhow::Error>(LocalProvider::load(&settings)?)
    })
    .await
    .context("loading the local model stopped")??;
    let provider = Arc::new(provider);
    loaded.push((local, Arc::downgrade(&provider)));
    Ok(provider)
}

/// The file and display name of the configured model: a pulled model's
/// name, a `.gguf` path, or (empty) the default one.
#[cfg(feature = "local-model")]
fn resolve(data: &Path, model: &str) -> Result<(PathBuf, String)> {
    let store = ModelStore::new(data);
    if model.is_empty() {
        let pulled = store.list()?;
        let chosen = match pulled.as_slice() {
            [] => bail!(
                "no local model is pulled yet. `axon models pull` fetches SmolLM2-135M (about 100 MB); `axon models pull hf:OWNER/REPO/FILE.gguf` any GGUF from Hugging Face"
            ),
            [one] => one,
            several => match several.iter().find(|m| m.source == DEFAULT_SOURCE) {
                Some(default) => default,
                None => bail!(
                    "several local models are pulled ({}); choose one with --model NAME or `model` under [providers.local]",
                    several.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", ")
                ),
            },
        };
        return Ok((chosen.path.clone(), chosen.name.clone()));
    }
    if let Some(found) = store.find(model)? {
        return Ok((found.path, found.name));
    }
    if model.ends_with(".gguf") {
        let path = match model.strip_prefix("~/") {
            Some(rest) => PathBuf::from(crate::config::env("HOME").unwrap_or_default()).join(rest),
            None => PathBuf::from(model),
        };
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        return Ok((path, name));
    }
    bail!(
        "no local model named '{model}'. `axon models list` shows the pulled ones; `axon models pull` gets one, or name a .gguf file"
    )
}

/// The CPU level the local model was compiled for and whether this CPU has
/// it, in one line (`axon --version`, `axon doctor`).
#[cfg(feature = "local-model")]
pub fn cpu_summary() -> String {
    axon_local::cpu::summary()
}

/// What `axon --version` and `axon doctor` say in a build without it.
#[cfg(not(feature = "local-model"))]
pub fn cpu_summary() -> String {
    "no local model in this build (built without the `local-model` feature)".to_string()
}

/// Whether this CPU can run the local model in this build (never, in a
/// build without it).
pub fn cpu_supported() -> bool {
    #[cfg(feature = "local-model")]
    return axon_local::cpu::supported();
    #[cfg(not(feature = "local-model"))]
    return false;
}

/// [`NOT_BUILT`]'s advice, for `axon doctor`.
pub fn how_to_get_it() -> &'static str {
    NOT_BUILT
}

#[cfg(all(test, feature = "local-model"))]
mod tests {
    #[test]
    fn the_provider_name_is_the_local_crates() {
        assert_eq!(super::LOCAL_PROVIDER, axon_local::PROVIDER);
    }
}
