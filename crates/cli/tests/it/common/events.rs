//! Reading `axon run --json` output the way a consumer of the public event
//! stream would: every line must be one JSON object that the published
//! schema, `docs/events.schema.json`, accepts. A line that is not panics
//! with its number, the line, and what the schema says is wrong with it,
//! so an e2e test fails the moment the CLI writes anything off-format.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::LazyLock;

use serde_json::Value;

/// The schema compiled once per test binary: the whole of it, and one
/// validator per event type so a failure names the fields at fault
/// rather than only "matches none of the `oneOf` branches".
struct EventSchema {
    whole: jsonschema::Validator,
    by_type: HashMap<String, jsonschema::Validator>,
}

static SCHEMA: LazyLock<EventSchema> = LazyLock::new(|| {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/events.schema.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the event schema {}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let whole = jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("{} does not compile: {e}", path.display()));
    let mut by_type = HashMap::new();
    for branch in schema["oneOf"].as_array().into_iter().flatten() {
        let Some(name) = branch["properties"]["type"]["const"].as_str() else { continue };
        // The branch on its own, with the definitions its `$ref`s point at.
        let mut single = branch.clone();
        single["$schema"] = schema["$schema"].clone();
        single["$defs"] = schema["$defs"].clone();
        let validator = jsonschema::validator_for(&single)
            .unwrap_or_else(|e| panic!("the `{name}` branch does not compile: {e}"));
        by_type.insert(name.to_string(), validator);
    }
    EventSchema { whole, by_type }
});

/// Why the schema refuses `value`, one problem a line (empty if it
/// accepts it).
fn problems(value: &Value) -> Vec<String> {
    let schema = &*SCHEMA;
    if schema.whole.is_valid(value) {
        return Vec::new();
    }
    let branch = value.get("type").and_then(Value::as_str).and_then(|t| schema.by_type.get(t));
    let validator = match branch {
        Some(validator) => validator,
        None => {
            let mut known: Vec<&str> = schema.by_type.keys().map(String::as_str).collect();
            known.sort_unstable();
            return vec![format!(
                "`type` is missing or not an event type of the schema ({})",
                known.join(", ")
            )];
        }
    };
    let found: Vec<String> = validator
        .iter_errors(value)
        .map(|e| {
            let at = e.instance_path().to_string();
            format!("at {}: {e}", if at.is_empty() { "/" } else { &at })
        })
        .collect();
    if found.is_empty() {
        // Cannot happen while the branches are the whole schema's only
        // alternatives; say so rather than report nothing.
        vec!["refused by the schema, though its own type's branch accepts it".to_string()]
    } else {
        found
    }
}

/// One line of `axon run --json` output, parsed and checked against the
/// published schema. `number` is 1-based, for the message.
pub fn event_line(number: usize, line: &str) -> Value {
    let value: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("stdout line {number} is not JSON ({e}):\n{line}"));
    let problems = problems(&value);
    assert!(
        problems.is_empty(),
        "stdout line {number} does not match docs/events.schema.json:\n{line}\n{}",
        problems.join("\n")
    );
    value
}

/// Every line of `axon run --json` output as an event, each checked
/// against the published schema.
pub fn events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout).lines().enumerate().map(|(i, l)| event_line(i + 1, l)).collect()
}
