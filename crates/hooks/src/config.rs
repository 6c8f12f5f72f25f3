//! Hook configuration: axon's `[hooks]` TOML and Claude Code's
//! `settings.json`, read into one model.
//!
//! Both are a map from event name to a list of matcher groups:
//!
//! ```toml
//! [[hooks.PreToolUse]]
//! matcher = "shell|write_file"
//! hooks = [{ type = "command", command = "./check.sh", timeout = 30 }]
//!
//! [[hooks.PostToolUse]]            # the flat shortcut: one command
//! matcher = "Edit|Write"
//! command = "cargo fmt"
//! ```
//!
//! Guarantees: an event axon does not have (`PermissionRequest`, `Setup`)
//! and a hook type other than `command` (`prompt`, `agent`, `http`) are
//! skipped with a warning in [`HooksConfig::warnings`], never silently and
//! never as an error, so a Claude settings file written for a newer Claude
//! still loads. A wrong shape (a group that is not a table, a command that
//! is not a string, a timeout that is not a positive number of seconds) is
//! an error naming the place (`hooks.PreToolUse[0].hooks[1].timeout`). In
//! axon's TOML a key axon does not know is an error too (a typo such as
//! `comand` would otherwise disable a hook); Claude's files may carry keys
//! axon ignores (`if`, `async`, `statusMessage`).

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::event::HookEvent;

/// Seconds a hook may run when it does not say.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The hooks one source configures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HooksConfig {
    /// Matcher groups in the order written, each with its event.
    pub groups: Vec<(HookEvent, MatcherGroup)>,
    /// What was skipped, and why; for the user, not an error.
    pub warnings: Vec<String>,
}

/// Commands that run when the matcher matches.
#[derive(Debug, Clone, PartialEq)]
pub struct MatcherGroup {
    /// `None`, empty or `*`: every tool (see [`crate::Matcher`]).
    pub matcher: Option<String>,
    pub hooks: Vec<CommandHook>,
}

/// One `type = "command"` hook.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandHook {
    /// Run with `sh -c`.
    pub command: String,
    /// Seconds before the hook and everything it started are killed;
    /// `None` for [`DEFAULT_TIMEOUT_SECS`].
    pub timeout: Option<u64>,
}

/// A configuration that cannot be used; the message names the place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// Which dialect a source is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Axon,
    Claude,
}

impl HooksConfig {
    /// The value of axon's `hooks` table (`[[hooks.PreToolUse]]`).
    pub fn from_toml_value(value: &toml::Value) -> Result<HooksConfig, ConfigError> {
        let json = serde_json::to_value(value)
            .map_err(|e| ConfigError(format!("hooks: cannot be read ({e})")))?;
        parse(&json, Dialect::Axon)
    }

    /// The `hooks` section of a Claude Code settings file.
    pub fn from_claude_json(value: &Value) -> Result<HooksConfig, ConfigError> {
        parse(value, Dialect::Claude)
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }
}

/// `hooks: Option<HooksConfig>` in a config struct reads axon's TOML shape
/// (strict about unknown keys).
impl<'de> Deserialize<'de> for HooksConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        parse(&value, Dialect::Axon).map_err(serde::de::Error::custom)
    }
}

fn parse(value: &Value, dialect: Dialect) -> Result<HooksConfig, ConfigError> {
    let Some(events) = value.as_object() else {
        return Err(ConfigError(format!(
            "hooks: expected a table of events (PreToolUse, PostToolUse, ...), found {}",
            kind(value)
        )));
    };
    let mut config = HooksConfig::default();
    for (name, groups) in events {
        let Some(event) = HookEvent::from_name(name) else {
            config.warnings.push(format!(
                "hooks.{name}: axon has no `{name}` event; skipped (axon runs {})",
                HookEvent::ALL.map(HookEvent::name).join(", ")
            ));
            continue;
        };
        let Some(groups) = groups.as_array() else {
            return Err(ConfigError(format!(
                "hooks.{name}: expected a list of matcher groups, found {}",
                kind(groups)
            )));
        };
        for (index, group) in groups.iter().enumerate() {
            let place = format!("hooks.{name}[{index}]");
            if let Some(group) = parse_group(group, &place, dialect, &mut config.warnings)? {
                config.groups.push((event, group));
            }
        }
    }
    Ok(config)
}

fn parse_group(
    value: &Value,
    place: &str,
    dialect: Dialect,
    warnings: &mut Vec<String>,
) -> Result<Option<MatcherGroup>, ConfigError> {
    let Some(group) = value.as_object() else {
        return Err(ConfigError(format!(
            "{place}: expected a matcher group ({{ matcher, hooks }}), found {}",
            kind(value)
        )));
    };
    let matcher = match group.get("matcher") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(other) => {
            return Err(ConfigError(format!(
                "{place}.matcher: expected a string, found {}",
                kind(other)
            )));
        }
    };
    let mut hooks = Vec::new();
    match (group.get("hooks"), group.get("command")) {
        (Some(_), Some(_)) => {
            return Err(ConfigError(format!(
                "{place}: has both `hooks` and `command`; use one (`command` is the shortcut for \
                 a single hook)"
            )));
        }
        (Some(list), None) => {
            check_keys(group, &["matcher", "hooks"], place, dialect)?;
            let Some(list) = list.as_array() else {
                return Err(ConfigError(format!(
                    "{place}.hooks: expected a list of hooks, found {}",
                    kind(list)
                )));
            };
            for (index, hook) in list.iter().enumerate() {
                let place = format!("{place}.hooks[{index}]");
                let Some(object) = hook.as_object() else {
                    return Err(ConfigError(format!(
                        "{place}: expected a hook ({{ type, command, timeout }}), found {}",
                        kind(hook)
                    )));
                };
                check_keys(object, &["type", "command", "timeout"], &place, dialect)?;
                if let Some(hook) = parse_hook(object, &place, warnings)? {
                    hooks.push(hook);
                }
            }
        }
        (None, Some(_)) => {
            check_keys(group, &["matcher", "type", "command", "timeout"], place, dialect)?;
            if let Some(hook) = parse_hook(group, place, warnings)? {
                hooks.push(hook);
            }
        }
        (None, None) => {
            return Err(ConfigError(format!(
                "{place}: no `hooks` list and no `command`; nothing would run"
            )));
        }
    }
    Ok(if hooks.is_empty() { None } else { Some(MatcherGroup { matcher, hooks }) })
}

/// A command hook, or `None` (with a warning) for a type axon does not run.
fn parse_hook(
    object: &Map<String, Value>,
    place: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<CommandHook>, ConfigError> {
    match object.get("type") {
        None => {}
        Some(Value::String(kind)) if kind == "command" => {}
        Some(Value::String(other)) => {
            warnings.push(format!(
                "{place}: axon runs only `command` hooks; this `{other}` hook is skipped"
            ));
            return Ok(None);
        }
        Some(other) => {
            return Err(ConfigError(format!(
                "{place}.type: expected \"command\", found {}",
                kind(other)
            )));
        }
    }
    let command = match object.get("command") {
        Some(Value::String(command)) if !command.trim().is_empty() => command.clone(),
        Some(Value::String(_)) => {
            return Err(ConfigError(format!("{place}.command: is empty")));
        }
        Some(other) => {
            return Err(ConfigError(format!(
                "{place}.command: expected a string, found {}",
                kind(other)
            )));
        }
        None => return Err(ConfigError(format!("{place}: has no `command`"))),
    };
    let timeout = match object.get("timeout") {
        None | Some(Value::Null) => None,
        Some(Value::Number(number)) => match number.as_f64() {
            // Fractions round up: a hook never gets less than it asked for.
            Some(seconds) if seconds > 0.0 && seconds <= 86_400.0 => Some(seconds.ceil() as u64),
            _ => {
                return Err(ConfigError(format!(
                    "{place}.timeout: expected seconds between 1 and 86400, found {number}"
                )));
            }
        },
        Some(other) => {
            return Err(ConfigError(format!(
                "{place}.timeout: expected a number of seconds, found {}",
                kind(other)
            )));
        }
    };
    Ok(Some(CommandHook { command, timeout }))
}

/// In axon's TOML, a key outside `known` is an error.
fn check_keys(
    object: &Map<String, Value>,
    known: &[&str],
    place: &str,
    dialect: Dialect,
) -> Result<(), ConfigError> {
    if dialect == Dialect::Claude {
        return Ok(());
    }
    match object.keys().find(|key| !known.contains(&key.as_str())) {
        Some(key) => Err(ConfigError(format!(
            "{place}: unknown key `{key}` (expected {})",
            known.join(", ")
        ))),
        None => Ok(()),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a table",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn toml_hooks(text: &str) -> Result<HooksConfig, ConfigError> {
        let value: toml::Value = toml::from_str(text).map_err(|e| ConfigError(e.to_string()))?;
        let hooks = value.get("hooks").cloned().unwrap_or(toml::Value::Table(Default::default()));
        HooksConfig::from_toml_value(&hooks)
    }

    #[test]
    fn toml_reads_groups_and_the_flat_shortcut() {
        let config = toml_hooks(
            r#"
            [[hooks.PreToolUse]]
            matcher = "shell|write_file"
            hooks = [{ type = "command", command = "a.sh", timeout = 30 }, { command = "b.sh" }]

            [[hooks.PreToolUse]]
            matcher = "edit_file"
            command = "c.sh"
            timeout = 5

            [[hooks.Stop]]
            command = "d.sh"
            "#,
        )
        .unwrap();
        assert!(config.warnings.is_empty());
        assert_eq!(config.groups.len(), 3);
        let (event, group) = &config.groups[0];
        assert_eq!(*event, HookEvent::PreToolUse);
        assert_eq!(group.matcher.as_deref(), Some("shell|write_file"));
        assert_eq!(
            group.hooks,
            vec![
                CommandHook { command: "a.sh".into(), timeout: Some(30) },
                CommandHook { command: "b.sh".into(), timeout: None }
            ]
        );
        assert_eq!(
            config.groups[1].1.hooks[0],
            CommandHook { command: "c.sh".into(), timeout: Some(5) }
        );
        assert_eq!(config.groups[2].0, HookEvent::Stop);
        assert_eq!(config.groups[2].1.matcher, None);
    }

    #[test]
    fn toml_typos_are_errors_naming_the_place() {
        let error = toml_hooks("[[hooks.PreToolUse]]\ncomand = \"x\"\n").unwrap_err();
        assert!(error.0.contains("hooks.PreToolUse[0]"), "{error}");
        let error = toml_hooks("[[hooks.PreToolUse]]\nhooks = [{ command = \"x\", timout = 3 }]\n")
            .unwrap_err();
        assert!(error.0.contains("hooks.PreToolUse[0].hooks[0]: unknown key `timout`"), "{error}");
        let error = toml_hooks("[[hooks.Stop]]\ncommand = \"x\"\ntimeout = 0\n").unwrap_err();
        assert!(error.0.contains("hooks.Stop[0].timeout"), "{error}");
        let error = toml_hooks("[[hooks.Stop]]\ncommand = 3\n").unwrap_err();
        assert!(error.0.contains("hooks.Stop[0].command: expected a string"), "{error}");
    }

    #[test]
    fn deserialize_reads_the_toml_shape() {
        #[derive(Deserialize)]
        struct Config {
            hooks: Option<HooksConfig>,
        }
        let config: Config = toml::from_str("[[hooks.Stop]]\ncommand = \"x\"\n").unwrap();
        assert_eq!(config.hooks.map(|h| h.groups.len()), Some(1));
        let bad = toml::from_str::<Config>("[[hooks.Stop]]\ncomand = \"x\"\n");
        assert!(bad.is_err());
    }

    #[test]
    fn claude_json_skips_what_axon_lacks_with_warnings() {
        let config = HooksConfig::from_claude_json(&json!({
            "PreToolUse": [{ "matcher": "Bash", "hooks": [
                { "type": "command", "command": "x.sh", "timeout": 60, "statusMessage": "hi" },
                { "type": "prompt", "prompt": "is this ok?" }
            ]}],
            "PermissionRequest": [{ "hooks": [{ "type": "command", "command": "notify" }] }],
            "Notification": [{ "matcher": "permission_prompt", "hooks": [{ "type": "command", "command": "notify" }] }]
        }))
        .unwrap();
        assert_eq!(config.groups.len(), 2);
        assert_eq!(config.groups[0].1.hooks.len(), 1);
        assert_eq!(config.warnings.len(), 2, "{:?}", config.warnings);
        assert!(config.warnings.iter().any(|w| w.contains("PermissionRequest")));
        assert!(config.warnings.iter().any(|w| w.contains("`prompt`")));
    }

    #[test]
    fn claude_json_wrong_shapes_are_errors() {
        let error = HooksConfig::from_claude_json(&json!({ "PreToolUse": { "matcher": "Bash" } }))
            .unwrap_err();
        assert!(error.0.contains("hooks.PreToolUse: expected a list"), "{error}");
        let error = HooksConfig::from_claude_json(&json!([])).unwrap_err();
        assert!(error.0.contains("expected a table of events"), "{error}");
    }
}
