//! The `fallback` list of the config (or the session's), as core's
//! [`axon_core::Fallbacks`]: each provider is built from the config by name,
//! with its own default model, and connected the first time a request needs
//! it (a local model is loaded only then).

use std::sync::Arc;

use axon_core::{Connecting, Fallbacks};
use axon_llm::Provider;
use tokio::sync::OnceCell;

use crate::config::Effective;

pub(crate) struct ConfiguredFallbacks {
    names: Vec<String>,
    config: Effective,
    connected: Vec<OnceCell<Arc<dyn Provider>>>,
}

impl ConfiguredFallbacks {
    /// The list `names` over the settings of `config`.
    pub(crate) fn new(names: Vec<String>, config: Effective) -> ConfiguredFallbacks {
        let connected = names.iter().map(|_| OnceCell::new()).collect();
        ConfiguredFallbacks { names, config, connected }
    }
}

impl Fallbacks for ConfiguredFallbacks {
    fn len(&self) -> usize {
        self.names.len()
    }

    fn name(&self, index: usize) -> String {
        self.names.get(index).cloned().unwrap_or_default()
    }

    fn connect(&self, index: usize) -> Connecting<'_> {
        Box::pin(async move {
            let (Some(name), Some(cell)) = (self.names.get(index), self.connected.get(index))
            else {
                return Err(format!("the fallback list has no entry {index}"));
            };
            let provider = cell
                .get_or_try_init(|| async {
                    let config =
                        self.config.fallback_provider(name).map_err(|e| format!("{e:#}"))?;
                    crate::local_model::connect(&config, &self.config)
                        .await
                        .map_err(|e| format!("{e:#}"))
                })
                .await?;
            Ok(Arc::clone(provider))
        })
    }
}
