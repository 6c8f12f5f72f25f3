//! A session's subagents: the definitions found in the workspace
//! (`.axon/agents`, `.claude/agents`, `.gemini/agents`, in that order of
//! precedence) and the user's config folder (`agents/`), made tools of the
//! session's registry (`agent_NAME`, and `task` in the code profile).
//!
//! Definitions are content, like rules and skills: a workspace's subagent
//! can do nothing its tools' own approval rules would not let the session
//! do. A definition's `model` is the session's provider with that model,
//! connected on first use and kept for the session; when that fails the
//! subagent says so and uses the session's model.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axon_core::subagents::{AgentDefinition, ConnectModel, SubagentSettings, register_subagents};
use axon_llm::{Provider, ProviderConfig};
use axon_tools::{Profile, ToolRegistry};

use crate::agent_files::{definition_roots, load_definitions};
use crate::config::Effective;
use crate::session_config::SessionConfig;

/// The session's subagent definitions, read once, and what their tools
/// share; registered again whenever the session's tools are rebuilt (an MCP
/// server joined), so that definitions can name any tool.
pub(crate) struct Subagents {
    definitions: Vec<AgentDefinition>,
    settings: SubagentSettings,
}

impl Subagents {
    /// Reads the definitions; returns them and the problems met reading
    /// them, for warnings.
    pub(crate) fn load(
        config: &SessionConfig,
        profile: Profile,
        provider: &ProviderConfig,
    ) -> (Subagents, Vec<String>) {
        let root = config.workspace.root();
        let roots = definition_roots(root, config.dirs.config_file.parent());
        let (definitions, problems) = load_definitions(&roots);
        let settings = SubagentSettings {
            connect: Some(connector(provider.clone(), config.config.clone())),
            // The generic helper searches code; the vault profile's notes
            // have no use for it.
            task: profile == Profile::Code,
            ..SubagentSettings::default()
        };
        (Subagents { definitions, settings }, problems)
    }

    /// Adds the subagent tools to `registry` (which holds every other tool
    /// by now, MCP servers' included); returns the problems met.
    pub(crate) fn register(&self, registry: &mut ToolRegistry) -> Vec<String> {
        register_subagents(self.definitions.clone(), self.settings.clone(), registry)
    }
}

/// Connects the session's provider with another model, once per model.
fn connector(provider: ProviderConfig, effective: Effective) -> ConnectModel {
    let connected: Arc<Mutex<HashMap<String, Arc<dyn Provider>>>> = Arc::default();
    let (provider, effective) = (Arc::new(provider), Arc::new(effective));
    Arc::new(move |model: &str| {
        let model = model.to_string();
        let connected = Arc::clone(&connected);
        let (provider, effective) = (Arc::clone(&provider), Arc::clone(&effective));
        Box::pin(async move {
            let known =
                connected.lock().unwrap_or_else(PoisonError::into_inner).get(&model).cloned();
            if let Some(known) = known {
                return Ok(known);
            }
            let mut config = (*provider).clone();
            config.model = model.clone();
            // A configured window is the configured model's.
            config.context_window = None;
            let made = crate::local_model::connect(&config, &effective)
                .await
                .map_err(|e| format!("{e:#}"))?;
            connected
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(model, Arc::clone(&made));
            Ok(made)
        })
    })
}
