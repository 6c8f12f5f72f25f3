//! `switch_model`: another model of the session's provider from the next
//! turn on. The name is checked against the models the provider's server
//! lists, when it lists them: a name it does not offer is refused with the
//! closest it does, before anything changes. Without a name, the model in
//! use is said and the list is sent (`models`) for a front end to offer.

use std::sync::Arc;

use axon_protocol::AgentEvent;

use crate::config::Overrides;
use crate::session::Task;

/// How many of the closest names a refusal suggests.
const SUGGESTED: usize = 5;

impl Task {
    pub(crate) async fn switch_model(&mut self, model: &str) {
        let info = self.agent.provider().info().clone();
        let model = model.trim();
        if model.is_empty() {
            self.events.emit(AgentEvent::Info {
                message: format!(
                    "model: {}/{} ({} token window)",
                    info.name, info.model, info.context_window
                ),
            });
            if let Some(models) = axon_llm::list_models(&self.models.1).await {
                self.events.emit(AgentEvent::Models {
                    provider: info.name,
                    current: info.model,
                    models,
                });
            }
            return;
        }
        let overrides = Overrides {
            provider: Some(self.models.1.name.clone()),
            model: Some(model.to_string()),
        };
        let config = match self.models.0.provider(&overrides) {
            Ok(config) => config,
            Err(e) => return self.cannot(&format!("{e:#}")),
        };
        if let Some(models) = axon_llm::list_models(&config).await
            && !models.iter().any(|m| m == model)
        {
            let closest = closest(model, &models);
            return self.cannot(&format!(
                "{} does not offer `{model}` (its server lists {} model{}{}); `/model` without a \
                 name lists them to pick from",
                config.name,
                models.len(),
                if models.len() == 1 { "" } else { "s" },
                if closest.is_empty() { String::new() } else { format!(", such as {closest}") },
            ));
        }
        match crate::local_model::connect(&config, &self.models.0).await {
            Ok(provider) => {
                let info = provider.info().clone();
                self.agent.set_provider(Arc::clone(&provider));
                self.mcp_host.set_provider(Arc::clone(&provider));
                self.plans.planner.set_provider(provider);
                self.models.1 = config;
                self.info.provider = info.name.clone();
                self.info.model = info.model.clone();
                self.info.context_window = info.context_window;
                self.events.emit(AgentEvent::ModelChanged {
                    provider: info.name,
                    model: info.model,
                    context_window: info.context_window,
                });
            }
            Err(e) => self.cannot(&format!("{e:#}")),
        }
    }

    fn cannot(&self, why: &str) {
        self.events.emit(AgentEvent::Error { message: format!("cannot switch the model: {why}") });
    }
}

/// The listed names most like `wanted`: those containing it (or it them),
/// then those sharing its longest start; at most [`SUGGESTED`], quoted.
fn closest(wanted: &str, models: &[String]) -> String {
    let wanted = wanted.to_lowercase();
    let mut ranked: Vec<(usize, &String)> = models
        .iter()
        .map(|m| {
            let lower = m.to_lowercase();
            let shared = lower.chars().zip(wanted.chars()).take_while(|(a, b)| a == b).count();
            let contains = lower.contains(&wanted) || wanted.contains(&lower);
            (if contains { usize::MAX } else { shared }, m)
        })
        .filter(|(score, _)| *score > 0)
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let names: Vec<String> =
        ranked.into_iter().take(SUGGESTED).map(|(_, m)| format!("`{m}`")).collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closest_names_come_first() {
        let models: Vec<String> = ["gpt-4.1", "gpt-4.1-mini", "gpt-4o", "o3", "text-embedding-3"]
            .map(String::from)
            .into();
        assert_eq!(closest("gpt-4.1-nano", &models), "`gpt-4.1`, `gpt-4.1-mini`, `gpt-4o`");
        assert_eq!(closest("zzz", &models), "");
    }
}
