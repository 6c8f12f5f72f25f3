//! Names MCP tools get in front of the model.
//!
//! A tool `read` of server `files` becomes `mcp_files_read`. Model APIs
//! accept tool names of `[A-Za-z0-9_-]` up to 64 characters, so other
//! characters become `_`, and a name that is too long, or already taken
//! (two servers' names can sanitise alike), is shortened and given a short
//! stable hash of the original server and tool names. The mapping back is by
//! table (see [`ToolNames`]), never by splitting the name: server and tool
//! names may themselves contain `_`.

use std::collections::HashMap;

/// Longest tool name the model APIs accept.
pub const MAX_TOOL_NAME: usize = 64;
/// Longest server part kept, so `mcp_{server}_` always leaves room.
const MAX_SERVER_PART: usize = 40;
const HASH_LEN: usize = 8;

/// Every MCP tool name handed out, and what it stands for.
#[derive(Debug, Default, Clone)]
pub struct ToolNames {
    by_name: HashMap<String, (String, String)>,
}

impl ToolNames {
    pub fn new() -> Self {
        Self::default()
    }

    /// The model-facing name of `server`'s tool `tool`, unique among the
    /// names handed out so far and `reserved` (the built-in tools).
    pub fn assign(&mut self, server: &str, tool: &str, reserved: &dyn Fn(&str) -> bool) -> String {
        let taken = |name: &str| self.by_name.contains_key(name) || reserved(name);
        let plain =
            format!("mcp_{}_{}", sanitize(server, MAX_SERVER_PART), sanitize(tool, MAX_TOOL_NAME));
        let name = if plain.len() <= MAX_TOOL_NAME && !taken(&plain) {
            plain
        } else {
            let mut salt = 0u32;
            loop {
                let candidate = hashed(&plain, server, tool, salt);
                if !taken(&candidate) {
                    break candidate;
                }
                salt += 1;
            }
        };
        self.by_name.insert(name.clone(), (server.to_string(), tool.to_string()));
        name
    }

    /// The server and tool a model-facing name stands for.
    pub fn resolve(&self, name: &str) -> Option<(&str, &str)> {
        self.by_name.get(name).map(|(s, t)| (s.as_str(), t.as_str()))
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// `plain` cut to fit a `_` and a hash of the original names.
fn hashed(plain: &str, server: &str, tool: &str, salt: u32) -> String {
    let hash =
        format!("{:08x}", fnv1a(&[server.as_bytes(), &[0], tool.as_bytes(), &salt.to_le_bytes()]));
    let keep = MAX_TOOL_NAME - HASH_LEN - 1;
    // `plain` is ASCII after sanitising, so any byte index is a boundary.
    format!("{}_{}", &plain[..plain.len().min(keep)], &hash[..HASH_LEN])
}

/// Only `[A-Za-z0-9_-]`, at most `max` characters.
fn sanitize(name: &str, max: usize) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .take(max)
        .collect();
    if cleaned.is_empty() { "_".to_string() } else { cleaned }
}

/// 32-bit FNV-1a: stable across builds and platforms, unlike std's hasher.
fn fnv1a(parts: &[&[u8]]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in parts.iter().flat_map(|p| p.iter()) {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> bool {
        false
    }

    #[test]
    fn plain_names_stay_readable() {
        let mut names = ToolNames::new();
        assert_eq!(names.assign("files", "read_file", &none), "mcp_files_read_file");
        assert_eq!(names.resolve("mcp_files_read_file"), Some(("files", "read_file")));
    }

    #[test]
    fn odd_characters_are_replaced_and_long_names_hashed() {
        let mut names = ToolNames::new();
        assert_eq!(names.assign("my.server", "get/item", &none), "mcp_my_server_get_item");
        let long = names.assign("s", &"x".repeat(100), &none);
        assert_eq!(long.len(), MAX_TOOL_NAME);
        assert!(long.starts_with("mcp_s_xxx"));
        assert_eq!(names.resolve(&long), Some(("s", "x".repeat(100).as_str())));
    }

    #[test]
    fn collisions_get_distinct_names_that_map_back() {
        let mut names = ToolNames::new();
        let a = names.assign("a.b", "t", &none);
        let b = names.assign("a_b", "t", &none);
        assert_ne!(a, b);
        assert_eq!(names.resolve(&a), Some(("a.b", "t")));
        assert_eq!(names.resolve(&b), Some(("a_b", "t")));
        let reserved = |n: &str| n == "mcp_x_y";
        assert_ne!(names.assign("x", "y", &reserved), "mcp_x_y");
    }

    #[test]
    fn hashes_are_stable() {
        assert_eq!(fnv1a(&[b"a"]), 0xe40c_292c);
    }
}
