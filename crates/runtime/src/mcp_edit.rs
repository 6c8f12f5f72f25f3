//! `axon mcp add | remove`: MCP servers written into a config file, for the
//! user (`--scope user`: the user's own config.toml) or the project
//! (`--scope project`: the workspace's .mcp.json, which Claude Code and
//! other hosts read too).
//!
//! Guarantees: a server is checked the way axon will read it before
//! anything is written, and a name already taken in that file is refused;
//! writes are atomic, and keys and text the file already had are kept (in
//! .mcp.json other hosts' keys in their order; in config.toml every byte,
//! the server appended as its own table). A user's server needs no trust;
//! a project server the user added from the command line is trusted by
//! that act, exactly as a yes to the trust prompt would record it
//! (`TrustStore::trust`: what it runs now, in the trust file under the data
//! folder), so the next session starts it without asking, and asks again
//! once the repository changes what it runs.

use std::path::Path;

use axon_mcp::config::TomlServer;
use serde_json::Value;

use crate::config::{Dirs, Effective};
use crate::servers::TrustStore;

/// Where `axon mcp add` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's config.toml: every workspace, trusted as the user's own.
    User,
    /// The workspace's .mcp.json: this workspace, shared with its users.
    Project,
}

/// A server as `axon mcp add` was given it.
#[derive(Debug, Clone, Default)]
pub struct NewServer {
    pub name: String,
    /// A remote server's streamable HTTP endpoint.
    pub url: Option<String>,
    /// `NAME=VALUE` HTTP headers (remote servers).
    pub headers: Vec<String>,
    /// `NAME=VALUE` environment variables (local servers).
    pub env: Vec<String>,
    /// The command that starts a local server, and its arguments.
    pub command: Vec<String>,
}

/// Adds `server` at `scope` for the workspace `dir`; answers what was done.
pub fn add(dirs: &Dirs, dir: &Path, scope: Scope, server: &NewServer) -> Result<String, String> {
    let entry = entry(server)?;
    match scope {
        Scope::Project => add_to_project(dirs, dir, &server.name, entry),
        Scope::User => add_to_user(dirs, &server.name, entry),
    }
}

/// The server as an .mcp.json entry.
fn entry(server: &NewServer) -> Result<Value, String> {
    if server.url.is_some() && !server.env.is_empty() {
        return Err("--env is for servers axon starts; a --url server takes --header".to_string());
    }
    match (&server.url, server.command.split_first()) {
        (Some(url), None) => {
            let mut entry = serde_json::json!({"type": "http", "url": url});
            if !server.headers.is_empty() {
                entry["headers"] = Value::Object(pairs(&server.headers, "header")?);
            }
            Ok(entry)
        }
        (None, Some((program, args))) => {
            let mut entry = serde_json::json!({"command": program, "args": args});
            if !server.env.is_empty() {
                entry["env"] = Value::Object(pairs(&server.env, "environment variable")?);
            }
            Ok(entry)
        }
        _ => Err("give the server's command after `--`, or its --url".to_string()),
    }
}

fn add_to_project(dirs: &Dirs, dir: &Path, name: &str, entry: Value) -> Result<String, String> {
    let path = dir.join(".mcp.json");
    let mut document = read_mcp_json(&path)?;
    // Checked the way axon will read it, before anything is written.
    let check = serde_json::json!({"mcpServers": {name: entry.clone()}}).to_string();
    axon_mcp::config::parse_mcp_json(&check, &path.display().to_string())
        .map_err(|e| e.to_string())?;
    let servers = document.entry("mcpServers").or_insert_with(|| Value::Object(Default::default()));
    let Value::Object(servers) = servers else {
        return Err(format!("\"mcpServers\" in {} is not an object", path.display()));
    };
    if servers.contains_key(name) {
        return Err(format!(
            "{} already has a server named '{name}'; remove it first (axon mcp remove {name})",
            path.display()
        ));
    }
    servers.insert(name.to_string(), entry);
    write_mcp_json(&path, document)?;
    let added = format!("Added MCP server '{name}' to {}", path.display());
    // Added by the user's own hand: trusted as the trust prompt would.
    let trusted = trust_added(dirs, dir, name);
    Ok(match trusted {
        Ok(()) => format!(
            "{added}; trusted for this workspace as it is now (asked again if what it runs \
             changes)"
        ),
        Err(e) => {
            format!("{added}; it could not be trusted ({e}): trust it with `axon mcp trust {name}`")
        }
    })
}

/// Records consent to the workspace server `name` as it is now configured.
fn trust_added(dirs: &Dirs, dir: &Path, name: &str) -> Result<(), String> {
    let root = std::fs::canonicalize(dir)
        .map_err(|e| format!("cannot open the workspace {}: {e}", dir.display()))?;
    let config = Effective::load(dirs, &root).map_err(|e| format!("{e:#}"))?;
    let server = config
        .workspace_servers
        .iter()
        .find(|server| server.name == name)
        .ok_or_else(|| format!("axon does not read a workspace server named '{name}'"))?;
    TrustStore { data: &dirs.data, workspace: &root }.trust(server)
}

fn add_to_user(dirs: &Dirs, name: &str, entry: Value) -> Result<String, String> {
    let path = &dirs.config_file;
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let document: toml::Table = toml::from_str(&text).map_err(|e| {
        format!("{} is not valid TOML ({}); fix it by hand first", path.display(), e.message())
    })?;
    if document.get("mcp_servers").and_then(|s| s.get(name)).is_some() {
        return Err(format!(
            "{} already has [mcp_servers.{name}]; edit or remove it there first",
            path.display()
        ));
    }
    // .mcp.json's `type` is implied by `url` in axon's TOML.
    let mut server = entry;
    if let Value::Object(map) = &mut server {
        map.remove("type");
    }
    let parsed: TomlServer = serde_json::from_value(server.clone()).map_err(|e| e.to_string())?;
    parsed.into_config(name, &path.display().to_string()).map_err(|e| e.to_string())?;
    let table: toml::Table =
        serde_json::from_value(serde_json::json!({"mcp_servers": {name: server}}))
            .map_err(|e| e.to_string())?;
    let snippet = toml::to_string(&table).map_err(|e| e.to_string())?;
    let mut updated = text.clone();
    if !updated.is_empty() && !updated.ends_with('\n') {
        updated.push('\n');
    }
    if !updated.is_empty() {
        updated.push('\n');
    }
    updated.push_str(&snippet);
    // The file as axon will read it: still valid, with the server in it.
    let check: toml::Table = toml::from_str(&updated).map_err(|e| {
        format!(
            "adding [mcp_servers.{name}] to {} would not be valid TOML ({}); add it by hand",
            path.display(),
            e.message()
        )
    })?;
    if check.get("mcp_servers").and_then(|s| s.get(name)).is_none() {
        return Err(format!("could not add [mcp_servers.{name}] to {}", path.display()));
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    axon_tools::atomic_write_path(path, updated.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(format!(
        "Added MCP server '{name}' to {} (your own config: every workspace, no trust needed)",
        path.display()
    ))
}

/// Removes the server `name` from the workspace's .mcp.json.
pub fn remove(dir: &Path, name: &str) -> Result<String, String> {
    let path = dir.join(".mcp.json");
    let mut document = read_mcp_json(&path)?;
    let removed = document
        .get_mut("mcpServers")
        .and_then(Value::as_object_mut)
        .and_then(|servers| servers.shift_remove(name));
    if removed.is_none() {
        return Err(format!("{} has no server named '{name}'", path.display()));
    }
    write_mcp_json(&path, document)?;
    Ok(format!("Removed MCP server '{name}' from {}", path.display()))
}

fn pairs(items: &[String], what: &str) -> Result<serde_json::Map<String, Value>, String> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            Some((name, value)) if !name.is_empty() => {
                Ok((name.to_string(), Value::String(value.to_string())))
            }
            _ => Err(format!("{what} '{item}' is not NAME=VALUE")),
        })
        .collect()
}

/// The workspace's .mcp.json as JSON, or an empty one; keys other hosts
/// wrote are kept, in their order.
fn read_mcp_json(path: &Path) -> Result<serde_json::Map<String, Value>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(format!("{} is not a JSON object", path.display())),
            Err(e) => {
                Err(format!("{} is not valid JSON ({e}); fix it by hand first", path.display()))
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(serde_json::Map::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

fn write_mcp_json(path: &Path, document: serde_json::Map<String, Value>) -> Result<(), String> {
    let mut text =
        serde_json::to_string_pretty(&Value::Object(document)).map_err(|e| e.to_string())?;
    text.push('\n');
    axon_tools::atomic_write_path(path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(home: &Path) -> Dirs {
        Dirs {
            config_file: home.join("config.toml"),
            data: home.join("data"),
            cache: home.join("cache"),
        }
    }

    #[test]
    fn a_user_server_is_appended_after_the_last_table_and_read_back_as_written() {
        let home = tempfile::tempdir().unwrap();
        let dirs = dirs(home.path());
        let before = "model = \"m\"\n\n[sandbox]\nnetwork = false # keep this\n";
        std::fs::write(&dirs.config_file, before).unwrap();
        let remote = NewServer {
            name: "remote".into(),
            url: Some("https://example.com/mcp".into()),
            headers: vec!["X-Team=core".into()],
            ..NewServer::default()
        };
        add(&dirs, home.path(), Scope::User, &remote).unwrap();
        let text = std::fs::read_to_string(&dirs.config_file).unwrap();
        assert!(text.starts_with(before), "{text}");
        let table: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(table["sandbox"]["network"].as_bool(), Some(false));
        let server: TomlServer = table["mcp_servers"]["remote"].clone().try_into().unwrap();
        assert_eq!(server.url.as_deref(), Some("https://example.com/mcp"));
        assert_eq!(server.headers.get("X-Team").map(String::as_str), Some("core"));
    }

    #[test]
    fn a_user_config_that_cannot_take_the_table_is_left_as_it_was() {
        let home = tempfile::tempdir().unwrap();
        let dirs = dirs(home.path());
        let inline = "mcp_servers = { other = { command = \"x\" } }\n";
        std::fs::write(&dirs.config_file, inline).unwrap();
        let local = NewServer {
            name: "files".into(),
            command: vec!["npx".into(), "server".into()],
            ..NewServer::default()
        };
        let error = add(&dirs, home.path(), Scope::User, &local).unwrap_err();
        assert!(
            error.contains("would not be valid TOML (") && error.contains("by hand"),
            "{error}"
        );
        assert_eq!(std::fs::read_to_string(&dirs.config_file).unwrap(), inline);
    }
}
