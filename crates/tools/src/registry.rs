//! The tool registry: the one door through which every tool call passes.
//!
//! A call is looked up by name, its arguments are validated against the
//! tool's JSON Schema (compiled once, at registration), and only then does
//! the tool run. Unknown tools, invalid arguments and tool failures all come
//! back as a [`ToolOutput`] with `is_error` set, worded for the model.

use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axon_protocol::{AgentEvent, ContentPart, Preview, ToolAnnotations, ToolOutput, ToolSpec};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ToolError;
use crate::text::clip_line;
use crate::workspace::Workspace;

/// Text of one result, at most (a backstop: tools bound their own output
/// well below this).
pub const MAX_RESULT_TEXT_BYTES: usize = 256 * 1024;
/// Characters of one schema violation's message.
const MAX_VIOLATION_CHARS: usize = 300;
/// Violations listed for one call; the rest are counted.
const MAX_VIOLATIONS: usize = 10;

/// How far a running call has got: a message, and a count that only grows
/// (out of `total` when that is known).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub message: Option<String>,
    pub progress: f64,
    pub total: Option<f64>,
}

impl Progress {
    /// Just a message, with no count (the receiver counts messages).
    pub fn message(message: impl Into<String>) -> Self {
        Progress { message: Some(message.into()), progress: 0.0, total: None }
    }
}

/// Receives a running tool's progress: an MCP host that asked for
/// progress, or a front end showing what a long call is doing.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// Receives the events of work a call does on its own (a subagent's), for
/// the event stream of the agent that made the call.
pub type CallEvents = Arc<dyn Fn(AgentEvent) + Send + Sync>;

/// What an agent lends one call it makes: the call's id, where the events
/// of work the call does on its own go, and the caller itself (type-erased:
/// `axon-tools` does not know the agent; a tool that runs one, such as
/// `axon-core`'s subagents, downcasts it).
#[derive(Clone)]
struct CallLink {
    call_id: String,
    events: CallEvents,
    caller: Option<Arc<dyn Any + Send + Sync>>,
}

/// What a tool runs with.
#[derive(Clone)]
pub struct ToolContext {
    pub workspace: Arc<Workspace>,
    progress: Option<ProgressSink>,
    call: Option<CallLink>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("workspace", &self.workspace)
            .field("progress", &self.progress.is_some())
            .field("call_id", &self.call_id())
            .finish()
    }
}

impl ToolContext {
    pub fn new(workspace: Workspace) -> Self {
        ToolContext { workspace: Arc::new(workspace), progress: None, call: None }
    }

    /// The same context for one call whose progress goes to `sink`.
    pub fn with_progress(&self, sink: ProgressSink) -> Self {
        ToolContext { progress: Some(sink), ..self.clone() }
    }

    /// The same context for the call `call_id` of an agent: events the
    /// call's own work produces go to `events`, and `caller` is what the
    /// agent lends it (see [`ToolContext::caller`]).
    pub fn for_call(
        &self,
        call_id: impl Into<String>,
        events: CallEvents,
        caller: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Self {
        ToolContext {
            call: Some(CallLink { call_id: call_id.into(), events, caller }),
            ..self.clone()
        }
    }

    /// Where this call's progress goes, when someone watches it (a tool
    /// that passes progress on from elsewhere, such as an MCP server's).
    pub fn progress(&self) -> Option<ProgressSink> {
        self.progress.clone()
    }

    /// The id of the agent's call this context runs, when an agent made it.
    pub fn call_id(&self) -> Option<&str> {
        self.call.as_ref().map(|c| c.call_id.as_str())
    }

    /// What the calling agent lent this call, if it is a `T`.
    pub fn caller<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.call.as_ref()?.caller.as_deref()?.downcast_ref::<T>()
    }

    /// Adds `event` to the calling agent's event stream; nothing happens
    /// when no agent made the call.
    pub fn emit(&self, event: AgentEvent) {
        if let Some(call) = &self.call {
            (call.events)(event);
        }
    }

    /// Tells whoever watches this call how it is getting on; nothing happens
    /// when nobody does.
    pub fn report_progress(&self, message: impl Into<String>) {
        self.report(Progress::message(message));
    }

    /// Like [`ToolContext::report_progress`], with a count (an MCP server's
    /// progress notification, passed on).
    pub fn report(&self, progress: Progress) {
        if let Some(sink) = &self.progress {
            sink(progress);
        }
    }

    /// Runs blocking work (file I/O, directory walks) for `tool` on a
    /// blocking thread, so the async runtime's workers never stall.
    pub async fn blocking<T: Send + 'static>(
        &self,
        tool: &str,
        work: impl FnOnce(&Workspace) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        let workspace = Arc::clone(&self.workspace);
        tokio::task::spawn_blocking(move || work(&workspace))
            .await
            .map_err(|e| ToolError::failed(format!("{tool} stopped unexpectedly: {e}")))?
    }
}

pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;

/// A tool as the registry sees it. Built-in tools implement [`TypedTool`]
/// instead and get this for free; tools whose schema is only known at run
/// time (MCP servers') implement it directly.
pub trait Tool: Send + Sync + 'static {
    fn spec(&self) -> ToolSpec;
    /// Runs the tool. `args` has already been validated against the schema.
    fn call<'a>(&'a self, ctx: &'a ToolContext, args: Value) -> ToolFuture<'a>;
    /// What [`Tool::call`] would do with `args` (already validated), worked
    /// out without doing it: no writes, no folders created, files read only
    /// through `ctx.workspace`. `None` when the tool has nothing more to
    /// show than its arguments.
    fn preview(&self, ctx: &ToolContext, args: &Value) -> Option<Preview> {
        let _ = (ctx, args);
        None
    }
    /// Whether this call (`args` already validated) only reads, when that
    /// depends on its arguments (a subagent given writing tools); `None`:
    /// as the spec's annotations say.
    fn read_only_call(&self, args: &Value) -> Option<bool> {
        let _ = args;
        None
    }
}

/// A tool whose arguments are a Rust type: its schema is derived from that
/// type, so the schema the model sees and the parser can never disagree.
pub trait TypedTool: Send + Sync + 'static {
    type Args: DeserializeOwned + JsonSchema + Send;
    const NAME: &'static str;
    fn description(&self) -> String;
    fn annotations(&self) -> ToolAnnotations;
    fn run(
        &self,
        ctx: &ToolContext,
        args: Self::Args,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
    /// What [`TypedTool::run`] would do with `args`, worked out without
    /// doing it (see [`Tool::preview`]). `None`: nothing more to show than
    /// the arguments.
    fn preview(&self, ctx: &ToolContext, args: &Self::Args) -> Option<Preview> {
        let _ = (ctx, args);
        None
    }
}

/// `args` read as `T`'s arguments: one parser for running and previewing,
/// so both refuse the same arguments with the same words.
fn parse_args<T: TypedTool>(args: &Value) -> Result<T::Args, ToolError> {
    T::Args::deserialize(args).map_err(|e| {
        let details = clip_line(&e.to_string(), MAX_VIOLATION_CHARS).into_owned();
        ToolError::InvalidParams { tool: T::NAME.to_string(), details }
    })
}

impl<T: TypedTool> Tool for T {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: T::NAME.to_string(),
            description: self.description(),
            input_schema: schema_for::<T::Args>(),
            annotations: self.annotations(),
        }
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, args: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let args = parse_args::<T>(&args)?;
            self.run(ctx, args).await
        })
    }

    fn preview(&self, ctx: &ToolContext, args: &Value) -> Option<Preview> {
        match parse_args::<T>(args) {
            Ok(args) => TypedTool::preview(self, ctx, &args),
            Err(e) => Some(Preview::Invalid { message: e.to_string() }),
        }
    }
}

/// The JSON Schema of `A` as tools publish it: draft 7 (what every provider
/// accepts), all definitions inlined, no `$schema`/`title` noise.
fn schema_for<A: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
    }
    make_optionals_plain(&mut schema);
    schema
}

/// An optional argument is published as its plain type (`"integer"`, not
/// `["integer", "null"]` with `"default": null`): single-type schemas are
/// what every provider and MCP host accepts (Gemini's function declarations
/// reject type arrays). A `null` the model sends anyway is read as absent
/// by [`drop_null_optionals`].
fn make_optionals_plain(schema: &mut Value) {
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(String::from).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    for (name, property) in properties.iter_mut() {
        if required.contains(name) {
            continue;
        }
        let Some(property) = property.as_object_mut() else { continue };
        if property.get("default") == Some(&Value::Null) {
            property.remove("default");
        }
        if let Some(Value::Array(types)) = property.get("type") {
            let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            if kept.len() == 1 {
                property.insert("type".into(), kept[0].clone());
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = property.get_mut(key) {
                branches.retain(|b| b.get("type").and_then(Value::as_str) != Some("null"));
                if branches.len() == 1
                    && let Some(Value::Object(only)) = branches.pop()
                {
                    property.remove(key);
                    for (k, v) in only {
                        property.entry(k).or_insert(v);
                    }
                }
            }
        }
    }
}

/// Top-level `null`s for arguments the schema does not require, removed:
/// many models send `null` for "not given".
fn drop_null_optionals(schema: &Value, args: Value) -> Value {
    let Value::Object(mut object) = args else { return args };
    let required = schema.get("required").and_then(Value::as_array);
    object.retain(|key, value| {
        !value.is_null() || required.is_some_and(|r| r.iter().any(|k| k == key.as_str()))
    });
    Value::Object(object)
}

struct Entry {
    tool: Arc<dyn Tool>,
    spec: ToolSpec,
    validator: jsonschema::Validator,
}

/// Tools by name, in registration order.
#[derive(Default)]
pub struct ToolRegistry {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|e| &e.spec.name)).finish()
    }
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a built-in tool. Built-in schemas are derived from Rust types and
    /// names are unique, so a failure here is a programming error caught by
    /// the test suite; it is reported by [`ToolRegistry::try_register`].
    pub fn register(&mut self, tool: impl Tool) {
        let result = self.try_register(Arc::new(tool));
        // `profiles_register_cleanly` proves no built-in tool fails here;
        // release builds keep a usable registry rather than abort.
        debug_assert!(result.is_ok(), "{result:?}");
    }

    /// Adds a tool, refusing a duplicate name or a schema that does not
    /// compile.
    pub fn try_register(&mut self, tool: Arc<dyn Tool>) -> Result<(), ToolError> {
        let spec = tool.spec();
        if self.by_name.contains_key(&spec.name) {
            return Err(ToolError::failed(format!(
                "a tool named '{}' is already registered",
                spec.name
            )));
        }
        let validator = jsonschema::validator_for(&spec.input_schema).map_err(|e| {
            ToolError::failed(format!("tool '{}' has an invalid input schema: {e}", spec.name))
        })?;
        self.by_name.insert(spec.name.clone(), self.entries.len());
        self.entries.push(Entry { tool, spec, validator });
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.by_name.get(name).map(|&i| &self.entries[i].tool)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.by_name.get(name).map(|&i| &self.entries[i].spec)
    }

    /// Every tool's spec, in registration order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.entries.iter().map(|e| &e.spec)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.spec.name.as_str())
    }

    /// Keeps only the tools whose spec passes `keep` (e.g. the read-only
    /// ones for a server that must not change anything).
    pub fn retain(&mut self, keep: impl Fn(&ToolSpec) -> bool) {
        self.entries.retain(|e| keep(&e.spec));
        self.by_name =
            self.entries.iter().enumerate().map(|(i, e)| (e.spec.name.clone(), i)).collect();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether a call of `name` with `args` only reads: what the tool says
    /// of these arguments, else its annotations. An unknown tool does not.
    pub fn reads_only(&self, name: &str, args: &Value) -> bool {
        self.entry(name).is_ok_and(|entry| {
            entry.tool.read_only_call(args).unwrap_or(entry.spec.annotations.read_only)
        })
    }

    /// A registry of the tools named in `names` that this one has, in
    /// this one's order (a subagent's tool subset); the tools are shared.
    pub fn subset<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> ToolRegistry {
        let wanted: std::collections::HashSet<&str> = names.into_iter().collect();
        let mut subset = ToolRegistry::new();
        for entry in self.entries.iter().filter(|e| wanted.contains(e.spec.name.as_str())) {
            subset.by_name.insert(entry.spec.name.clone(), subset.entries.len());
            subset.entries.push(Entry {
                tool: Arc::clone(&entry.tool),
                spec: entry.spec.clone(),
                validator: entry.validator.clone(),
            });
        }
        subset
    }

    /// Checks `args` against `name`'s schema without running anything
    /// (a `null` for an optional argument is checked as [`ToolRegistry::call`]
    /// reads it: as absent).
    pub fn validate(&self, name: &str, args: &Value) -> Result<(), ToolError> {
        let entry = self.entry(name)?;
        let cleaned;
        let args = if args.as_object().is_some_and(|o| o.values().any(Value::is_null)) {
            cleaned = drop_null_optionals(&entry.spec.input_schema, args.clone());
            &cleaned
        } else {
            args
        };
        let mut problems: Vec<String> = Vec::new();
        let mut more = 0usize;
        for error in entry.validator.iter_errors(args) {
            if problems.len() < MAX_VIOLATIONS {
                problems.push(describe_violation(&error));
            } else {
                more += 1;
            }
        }
        if more > 0 {
            problems.push(format!("and {more} more problems"));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ToolError::InvalidParams { tool: name.to_string(), details: problems.join("; ") })
        }
    }

    /// Runs one call: lookup, validation, execution. Never fails: every
    /// problem is an error output the model can read.
    pub async fn call(&self, ctx: &ToolContext, name: &str, args: Value) -> ToolOutput {
        let output = match self.try_call(ctx, name, args).await {
            Ok(output) => output,
            Err(e) => ToolOutput::error(e.to_string()),
        };
        bound_output(output)
    }

    /// What a call would do, for the user approving it, worked out without
    /// doing it. Never fails: an unknown tool, arguments the schema or the
    /// tool's parser refuses, and a call the tool would refuse as it stands
    /// are all [`Preview::Invalid`], worded as the call's error would be; a
    /// tool with nothing more specific to show gives
    /// [`Preview::Arguments`]. Nothing is written and no folder is created;
    /// files are read only through the workspace handle, boundedly, but the
    /// reads block: async code calls this from a blocking thread.
    pub fn preview(&self, ctx: &ToolContext, name: &str, args: &Value) -> Preview {
        let entry = match self.entry(name) {
            Ok(entry) => entry,
            Err(e) => return Preview::Invalid { message: e.to_string() },
        };
        // The arguments as the call would see them.
        let cleaned = drop_null_optionals(&entry.spec.input_schema, args.clone());
        if let Err(e) = self.validate(name, &cleaned) {
            return Preview::Invalid { message: e.to_string() };
        }
        entry
            .tool
            .preview(ctx, &cleaned)
            .unwrap_or_else(|| Preview::Arguments { arguments: args.clone() })
    }

    /// [`ToolRegistry::preview`] from async code: its reads run on a
    /// blocking thread.
    pub async fn preview_async(
        self: &Arc<Self>,
        ctx: &ToolContext,
        name: &str,
        args: &Value,
    ) -> Preview {
        let (registry, ctx) = (Arc::clone(self), ctx.clone());
        let (name, args) = (name.to_string(), args.clone());
        let fallback = Preview::Arguments { arguments: args.clone() };
        tokio::task::spawn_blocking(move || registry.preview(&ctx, &name, &args))
            .await
            .unwrap_or(fallback)
    }

    async fn try_call(
        &self,
        ctx: &ToolContext,
        name: &str,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        let entry = self.entry(name)?;
        let args = drop_null_optionals(&entry.spec.input_schema, args);
        self.validate(name, &args)?;
        let tool = Arc::clone(&entry.tool);
        tool.call(ctx, args).await
    }

    fn entry(&self, name: &str) -> Result<&Entry, ToolError> {
        self.by_name
            .get(name)
            .map(|&i| &self.entries[i])
            .ok_or_else(|| ToolError::NotAvailable(name.to_string()))
    }
}

/// One schema violation as a sentence naming the field.
/// One schema violation, named by field. The validator's message quotes
/// the offending value, which may be huge: it is clipped.
fn describe_violation(error: &jsonschema::ValidationError<'_>) -> String {
    let pointer = error.instance_path().to_string();
    let message = clip_line(&error.to_string(), MAX_VIOLATION_CHARS).into_owned();
    if pointer.is_empty() {
        // Missing required fields and wrong top-level types are reported at
        // the root; the message itself names the field.
        message
    } else {
        let field = clip_line(&pointer.trim_start_matches('/').replace('/', "."), 200).into_owned();
        format!("field '{field}': {message}")
    }
}

/// Every result a model or host gets is bounded, whatever produced it (a
/// built-in tool bounds its own output; an MCP server's tool may not): text
/// beyond [`MAX_RESULT_TEXT_BYTES`] in all is cut with a note saying so.
fn bound_output(mut output: ToolOutput) -> ToolOutput {
    let mut room = MAX_RESULT_TEXT_BYTES;
    let mut cut = 0usize;
    for part in &mut output.content {
        if let ContentPart::Text { text } = part {
            if text.len() <= room {
                room -= text.len();
                continue;
            }
            let mut keep = room;
            while !text.is_char_boundary(keep) {
                keep -= 1;
            }
            cut += text.len() - keep;
            text.truncate(keep);
            room -= keep;
        }
    }
    if cut > 0 {
        output.content.push(ContentPart::text(format!(
            "\n[… {cut} more bytes cut: a tool result is limited to {} KiB; ask for less, \
             e.g. a smaller range or a narrower query]",
            MAX_RESULT_TEXT_BYTES / 1024
        )));
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Profile;

    #[test]
    fn every_result_is_bounded() {
        let big = "é".repeat(MAX_RESULT_TEXT_BYTES);
        let output = ToolOutput {
            content: vec![ContentPart::text("head"), ContentPart::text(big)],
            is_error: false,
        };
        let bounded = bound_output(output);
        let text = bounded.text_content();
        assert!(text.len() <= MAX_RESULT_TEXT_BYTES + 200, "{}", text.len());
        assert!(text.starts_with("head"));
        assert!(text.contains("more bytes cut"), "no note");
        let small = bound_output(ToolOutput::text("fine"));
        assert_eq!(small.text_content(), "fine");
    }

    #[test]
    fn profiles_register_cleanly() {
        for (profile, expected) in [(Profile::Code, 11), (Profile::Vault, 5)] {
            let registry = profile.registry();
            assert_eq!(registry.len(), expected, "{profile:?}: {registry:?}");
            for spec in registry.specs() {
                assert_eq!(spec.input_schema["type"], "object", "{}", spec.name);
                assert!(spec.input_schema.get("$schema").is_none());
                assert!(!spec.description.is_empty());
            }
        }
    }

    #[test]
    fn duplicate_names_are_refused() {
        let mut registry = Profile::Code.registry();
        let err = registry.try_register(Arc::new(crate::read::ReadFile)).unwrap_err();
        assert!(err.to_string().contains("already registered"));
    }

    #[test]
    fn optional_arguments_have_one_type_and_accept_null() {
        for profile in [Profile::Code, Profile::Vault] {
            for spec in profile.registry().specs() {
                for (name, property) in spec.input_schema["properties"].as_object().unwrap() {
                    assert!(!property["type"].is_array(), "{}.{name}: {property}", spec.name);
                    assert!(property.get("default") != Some(&Value::Null), "{}.{name}", spec.name);
                    let text = property.to_string();
                    assert!(!text.contains("\"null\""), "{}.{name}: {text}", spec.name);
                }
            }
        }
        let registry = Profile::Code.registry();
        let args = serde_json::json!({"path": "a.txt", "start_line": null});
        assert!(registry.validate("read_file", &args).is_ok());
        let args = serde_json::json!({"path": null});
        assert!(registry.validate("read_file", &args).is_err());
        assert!(
            registry
                .validate("read_file", &serde_json::json!({"path": "a", "start_line": "x"}))
                .is_err()
        );
    }

    #[tokio::test]
    async fn a_tools_preview_refuses_unparsable_arguments_as_its_call_does() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(Workspace::new(dir.path()).unwrap());
        // Past the schema (a tool called directly): the parser is the judge.
        let args = serde_json::json!({"path": 7, "content": "x"});
        let preview = Tool::preview(&crate::write::WriteFile, &ctx, &args);
        let error = Tool::call(&crate::write::WriteFile, &ctx, args).await.unwrap_err();
        assert_eq!(preview, Some(Preview::Invalid { message: error.to_string() }));
        assert!(error.to_string().starts_with("Invalid parameters for write_file: "), "{error}");
        // A tool without a preview of its own still refuses them.
        let args = serde_json::json!({"path": 7});
        let preview = Tool::preview(&crate::read::ReadFile, &ctx, &args);
        assert!(matches!(preview, Some(Preview::Invalid { .. })), "{preview:?}");
        let args = serde_json::json!({"path": "a.txt"});
        assert_eq!(Tool::preview(&crate::read::ReadFile, &ctx, &args), None);
    }

    #[test]
    fn retain_keeps_lookups_consistent() {
        let mut registry = Profile::Code.registry();
        registry.retain(|spec| spec.annotations.read_only);
        let names: Vec<&str> = registry.names().collect();
        assert_eq!(names, ["read_file", "list_dir", "search", "glob", "shell_output"]);
        assert!(!registry.contains("shell"));
        assert_eq!(registry.spec("glob").map(|s| s.name.as_str()), Some("glob"));
    }
}
