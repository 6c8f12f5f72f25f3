//! The one table of providers axon knows by name.
//!
//! [`PROVIDERS`] is the single source of every built-in default: wire
//! format, base URL, key variable, default model, whether a key is needed,
//! whether the provider is detected from the environment, and the context
//! windows of its well-known models. [`preset`](crate::preset),
//! [`known_context_window`], [`key_variables`] and [`provider_names`] all
//! read it, so adding a provider is one entry here.
//!
//! A window pattern ending in `*` matches model names starting with the rest
//! (`"claude*"`); any other pattern matches the whole name only, so a new
//! model that merely shares a stem is not given a window it may not have.
//! Patterns are matched against the lowercased last path segment of the
//! model name (`deepseek/deepseek-chat` → `deepseek-chat`), which is how
//! routers such as OpenRouter name other providers' models. No two patterns
//! overlap, so the order of the table does not change an answer.

use crate::presets::ProviderKind;

/// One provider axon knows by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownProvider {
    pub name: &'static str,
    pub kind: ProviderKind,
    pub base_url: &'static str,
    /// The environment variable its API key is read from.
    pub key_var: &'static str,
    pub default_model: &'static str,
    /// Local servers need no key.
    pub requires_key: bool,
    /// Detected from the environment when no provider is chosen (its key is
    /// set). Ollama: false, since it needs no key and its variable proves
    /// nothing about a server running.
    pub detect: bool,
    /// Context windows of this provider's well-known models: (model name
    /// prefix ending in `*`, or exact name, tokens).
    pub windows: &'static [(&'static str, u64)],
}

/// The providers axon knows by name, in the order help texts list them and
/// detection tries them.
pub const PROVIDERS: &[KnownProvider] = &[
    KnownProvider {
        name: "openai",
        kind: ProviderKind::OpenAi,
        base_url: "https://api.openai.com/v1",
        key_var: "OPENAI_API_KEY",
        default_model: "gpt-4.1",
        requires_key: true,
        detect: true,
        windows: &[
            ("gpt-4.1*", 1_047_576),
            // gpt-4o and gpt-4o-mini (and their dated snapshots).
            ("gpt-4o*", 128_000),
            ("gpt-5*", 400_000),
            ("o3*", 200_000),
            ("o4*", 200_000),
        ],
    },
    KnownProvider {
        name: "deepseek",
        kind: ProviderKind::OpenAi,
        base_url: "https://api.deepseek.com",
        key_var: "DEEPSEEK_API_KEY",
        default_model: "deepseek-chat",
        requires_key: true,
        detect: true,
        // deepseek-chat and deepseek-reasoner (V3.1 and later); exact names,
        // since other DeepSeek models (coder, r1 elsewhere) differ.
        windows: &[("deepseek-chat", 128_000), ("deepseek-reasoner", 128_000)],
    },
    KnownProvider {
        name: "anthropic",
        kind: ProviderKind::Anthropic,
        base_url: "https://api.anthropic.com",
        key_var: "ANTHROPIC_API_KEY",
        default_model: "claude-sonnet-4-5",
        requires_key: true,
        detect: true,
        windows: &[("claude*", 200_000)],
    },
    KnownProvider {
        name: "ollama",
        kind: ProviderKind::OpenAi,
        base_url: "http://127.0.0.1:11434/v1",
        key_var: "OLLAMA_API_KEY",
        default_model: "llama3.1",
        requires_key: false,
        detect: false,
        // Local models' windows depend on how they were loaded; the server
        // is asked instead (see `discover`).
        windows: &[],
    },
    KnownProvider {
        name: "openrouter",
        kind: ProviderKind::OpenAi,
        base_url: "https://openrouter.ai/api/v1",
        key_var: "OPENROUTER_API_KEY",
        default_model: "deepseek/deepseek-chat",
        requires_key: true,
        detect: true,
        // It routes other providers' models (`vendor/model`), whose windows
        // the other entries already give through the last path segment.
        windows: &[],
    },
];

/// Windows of well-known models whose provider is not a preset (reached
/// through OpenRouter or a configured OpenAI-compatible endpoint).
pub const OTHER_WINDOWS: &[(&str, u64)] = &[("gemini*", 1_048_576)];

/// The table entry named `name`, exactly as written in [`PROVIDERS`].
pub fn known_provider(name: &str) -> Option<&'static KnownProvider> {
    PROVIDERS.iter().find(|p| p.name == name)
}

/// Every variable that may hold a provider key: `AXON_API_KEY` first, then
/// each provider's `key_var` (deduplicated, in table order).
pub fn key_variables() -> Vec<&'static str> {
    let mut vars = vec!["AXON_API_KEY"];
    for provider in PROVIDERS {
        if !vars.contains(&provider.key_var) {
            vars.push(provider.key_var);
        }
    }
    vars
}

/// `"openai, deepseek, anthropic, ollama, openrouter"` — for help texts and
/// errors.
pub fn provider_names() -> String {
    PROVIDERS.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

/// The context window of a model in the built-in tables ([`PROVIDERS`]'
/// windows and [`OTHER_WINDOWS`]), whichever provider serves it.
pub fn known_context_window(model: &str) -> Option<u64> {
    let model = model.to_lowercase();
    let model = model.rsplit('/').next().unwrap_or(&model);
    all_windows().find(|(pattern, _)| pattern_matches(pattern, model)).map(|(_, tokens)| tokens)
}

/// Every (pattern, tokens) pair of the built-in tables.
fn all_windows() -> impl Iterator<Item = (&'static str, u64)> {
    PROVIDERS.iter().flat_map(|p| p.windows.iter()).chain(OTHER_WINDOWS).copied()
}

/// Models known to take text only (patterns as in the windows), whatever
/// provider serves them; every other model is assumed to take images.
pub const TEXT_ONLY_MODELS: &[&str] = &["deepseek*", "gpt-3.5*", "o1-mini*", "o3-mini*"];

/// Whether `model` takes images in a prompt, as far as axon knows.
pub fn takes_images(model: &str) -> bool {
    let model = model.to_lowercase();
    let model = model.rsplit('/').next().unwrap_or(&model);
    !TEXT_ONLY_MODELS.iter().any(|pattern| pattern_matches(pattern, model))
}

/// `pattern*` matches by prefix, anything else the whole (lowercased) name.
fn pattern_matches(pattern: &str, model: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => model.starts_with(prefix),
        None => model == pattern,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset;

    #[test]
    fn text_only_models_are_known_by_name() {
        assert!(!takes_images("deepseek-chat"));
        assert!(!takes_images("deepseek/deepseek-chat"));
        assert!(takes_images("gpt-4.1"));
        assert!(takes_images("claude-sonnet-4-5"));
    }

    #[test]
    fn names_are_unique_and_listed() {
        for (i, provider) in PROVIDERS.iter().enumerate() {
            assert!(
                PROVIDERS[i + 1..].iter().all(|other| other.name != provider.name),
                "{} twice",
                provider.name
            );
            assert_eq!(known_provider(provider.name), Some(provider));
        }
        assert_eq!(provider_names(), "openai, deepseek, anthropic, ollama, openrouter");
        assert_eq!(known_provider("gemini"), None);
        assert_eq!(known_provider("OpenAI"), None, "names are exact");
    }

    #[test]
    fn every_preset_is_its_table_entry() {
        for known in PROVIDERS {
            let config = preset(known.name).unwrap();
            assert_eq!(config.name, known.name);
            assert_eq!(config.kind, known.kind, "{}", known.name);
            assert_eq!(config.base_url, known.base_url, "{}", known.name);
            assert_eq!(config.model, known.default_model, "{}", known.name);
            assert_eq!(config.api_key_env, known.key_var, "{}", known.name);
            assert_eq!(config.requires_key, known.requires_key, "{}", known.name);
            assert_eq!(config.api_key, None);
            assert_eq!(config.context_window, None);
        }
        assert_eq!(preset("gemini"), None);
    }

    #[test]
    fn the_defaults_are_unchanged() {
        let rows: Vec<_> = PROVIDERS
            .iter()
            .map(|p| (p.name, p.kind, p.base_url, p.default_model, p.key_var, p.requires_key))
            .collect();
        use ProviderKind::{Anthropic, OpenAi};
        assert_eq!(
            rows,
            [
                ("openai", OpenAi, "https://api.openai.com/v1", "gpt-4.1", "OPENAI_API_KEY", true),
                (
                    "deepseek",
                    OpenAi,
                    "https://api.deepseek.com",
                    "deepseek-chat",
                    "DEEPSEEK_API_KEY",
                    true
                ),
                (
                    "anthropic",
                    Anthropic,
                    "https://api.anthropic.com",
                    "claude-sonnet-4-5",
                    "ANTHROPIC_API_KEY",
                    true
                ),
                (
                    "ollama",
                    OpenAi,
                    "http://127.0.0.1:11434/v1",
                    "llama3.1",
                    "OLLAMA_API_KEY",
                    false
                ),
                (
                    "openrouter",
                    OpenAi,
                    "https://openrouter.ai/api/v1",
                    "deepseek/deepseek-chat",
                    "OPENROUTER_API_KEY",
                    true
                ),
            ]
        );
        let detected: Vec<_> = PROVIDERS.iter().filter(|p| p.detect).map(|p| p.name).collect();
        assert_eq!(detected, ["openai", "deepseek", "anthropic", "openrouter"]);
    }

    #[test]
    fn key_variables_name_each_once_axon_first() {
        let vars = key_variables();
        assert_eq!(vars.first(), Some(&"AXON_API_KEY"));
        for var in std::iter::once("AXON_API_KEY").chain(PROVIDERS.iter().map(|p| p.key_var)) {
            assert_eq!(vars.iter().filter(|v| **v == var).count(), 1, "{var}");
        }
        assert_eq!(vars.len(), PROVIDERS.len() + 1);
    }

    #[test]
    fn window_patterns_do_not_overlap() {
        // Each pattern's own text is matched by that pattern alone, so no
        // prefix swallows another entry and table order never matters.
        for (pattern, _) in all_windows() {
            let text = pattern.trim_end_matches('*');
            let matching = all_windows().filter(|(p, _)| pattern_matches(p, text)).count();
            assert_eq!(matching, 1, "{pattern}");
            assert_eq!(pattern, pattern.to_lowercase(), "names are compared lowercased");
        }
    }

    /// The answers `known_context_window` gave before the table existed.
    #[test]
    fn windows_are_unchanged() {
        let cases: &[(&str, Option<u64>)] = &[
            ("claude-sonnet-4-5", Some(200_000)),
            ("Claude-Opus-4", Some(200_000)),
            ("anthropic/claude-3.5", Some(200_000)),
            ("gpt-4.1", Some(1_047_576)),
            ("gpt-4.1-mini", Some(1_047_576)),
            ("openai/GPT-4.1-nano", Some(1_047_576)),
            ("gpt-5", Some(400_000)),
            ("gpt-5-mini", Some(400_000)),
            ("o3", Some(200_000)),
            ("o3-mini", Some(200_000)),
            ("o4-mini", Some(200_000)),
            ("openai/o4-mini", Some(200_000)),
            ("gemini-2.5-pro", Some(1_048_576)),
            ("google/gemini-2.0-flash", Some(1_048_576)),
            ("deepseek-chat", Some(128_000)),
            ("deepseek-reasoner", Some(128_000)),
            ("DeepSeek-Chat", Some(128_000)),
            ("deepseek/deepseek-chat", Some(128_000)),
            ("deepseek-chat-v2", None),
            ("deepseek-coder", None),
            ("deepseek/deepseek-r1", None),
            ("llama3.1", None),
            ("qwen/qwq-32b", None),
            // Added since: without them a server was probed for gpt-4o.
            ("gpt-4o", Some(128_000)),
            ("gpt-4o-mini", Some(128_000)),
            ("openai/gpt-4o-2024-08-06", Some(128_000)),
            ("gpt-4", None),
            ("o1", None),
            ("claude/", None),
            ("", None),
        ];
        for (model, want) in cases {
            assert_eq!(known_context_window(model), *want, "{model}");
        }
    }
}
