//! From axon's events to ACP `session/update`s: one [`Mapper`] per
//! session, pure (no I/O), so every mapping is tested without a client.
//!
//! - Tool calls get the editor's vocabulary: a kind (read, edit, execute,
//!   search, fetch, think, other), a short title, absolute locations the
//!   editor can follow, the raw arguments, and for edits `diff` content
//!   (hunks of the approval preview when there was one, else the edit's own
//!   old and new text).
//! - A call is announced once: `pending` when it waits for permission,
//!   `in_progress` when it runs, then `completed` or `failed` with its
//!   result as text.
//! - `todo` is the editor's plan, not a tool card; so are plan mode's steps.
//! - A stored conversation replays as the same updates ([`Mapper::replay`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionUpdate, ToolCall as AcpToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind, UsageUpdate,
};
use axon_protocol::{
    AgentEvent, ContentPart, Message, Plan as AxonPlan, Preview, Role, StepStatus, ToolCall,
    ToolOutput,
};
use serde_json::Value;

/// Characters of a tool result shown on its card; the model gets it all.
const MAX_RESULT_CHARS: usize = 16_000;
/// A running subagent's latest steps shown on its call's card.
const MAX_STEPS_SHOWN: usize = 20;

/// Per-session mapping state.
pub struct Mapper {
    root: PathBuf,
    /// Calls announced to the editor and not ended, by the model's id.
    calls: HashMap<String, Live>,
    /// How often each of the model's call ids was announced: ids repeat
    /// (the text tool protocol numbers each reply's blocks from 1), the
    /// editor's must not.
    used: HashMap<String, u32>,
    /// `todo` calls whose list becomes the plan once they succeed.
    todos: HashMap<String, Value>,
    /// What the subagent a running call started has done, a line a step.
    steps: HashMap<String, Vec<String>>,
}

impl Mapper {
    /// For a session whose workspace is `root`.
    pub fn new(root: &Path) -> Self {
        Mapper {
            root: root.to_path_buf(),
            calls: HashMap::new(),
            used: HashMap::new(),
            todos: HashMap::new(),
            steps: HashMap::new(),
        }
    }

    /// The editor's id for a new call with the model's id `id`.
    fn fresh_id(&mut self, id: &str) -> String {
        let n = self.used.entry(id.to_string()).or_insert(0);
        *n += 1;
        if *n == 1 { id.to_string() } else { format!("{id}.{n}") }
    }

    /// The updates an event makes, in order. Events with nothing to show
    /// an editor (the session's own bookkeeping) make none.
    pub fn event(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        match event {
            AgentEvent::Token { text } => vec![message_chunk(text)],
            AgentEvent::Thought { text } => {
                vec![SessionUpdate::AgentThoughtChunk(ContentChunk::new(text.as_str().into()))]
            }
            AgentEvent::TurnRestarted { reason } => {
                vec![message_chunk(&format!(
                    "\n\n_(the reply broke off: {reason}; asking again)_\n\n"
                ))]
            }
            AgentEvent::Action { call, refused, preview } => {
                self.action(call, *refused, preview.as_ref())
            }
            AgentEvent::Observation { call_id, output, .. } => self.observation(call_id, output),
            AgentEvent::PlanProposed { plan } | AgentEvent::PlanChanged { plan } => {
                vec![SessionUpdate::Plan(plan_update(plan))]
            }
            AgentEvent::Subagent { call_id, agent, event } => self.subagent(call_id, agent, event),
            AgentEvent::ToolProgress { call_id, message, progress, total } => self.progress(
                call_id,
                &axon_protocol::progress_text(message.as_deref(), *progress, *total),
            ),
            _ => Vec::new(),
        }
    }

    /// A call waiting for permission: the `tool_call` to announce it (or
    /// nothing when it already was) and the call as the permission request
    /// carries it.
    pub fn ask(
        &mut self,
        call: &ToolCall,
        preview: &Preview,
    ) -> (Vec<SessionUpdate>, ToolCallUpdate) {
        let diffs = self.diffs(call, Some(preview));
        let described = describe(&self.root, call, Some(preview));
        let mut content: Vec<ToolCallContent> =
            diffs.iter().cloned().map(ToolCallContent::Diff).collect();
        if let Some(text) = preview_text(preview) {
            content.push(text_content(&text));
        }
        let fields = ToolCallUpdateFields::new()
            .title(described.title.clone())
            .kind(described.kind)
            .status(ToolCallStatus::Pending)
            .locations(described.locations.clone())
            .raw_input(call.arguments.clone())
            .content(content.clone());
        if let Some(live) = self.calls.get(&call.id) {
            return (Vec::new(), ToolCallUpdate::new(live.acp_id.clone(), fields));
        }
        let acp_id = self.fresh_id(&call.id);
        let asked = ToolCallUpdate::new(acp_id.clone(), fields);
        self.calls.insert(call.id.clone(), Live { acp_id: acp_id.clone(), diffs });
        let announce = described
            .tool_call(&acp_id, call.arguments.clone())
            .status(ToolCallStatus::Pending)
            .content(content);
        (vec![SessionUpdate::ToolCall(announce)], asked)
    }

    /// A call taken up: running, or (`refused`) never to run, in which
    /// case it stays pending until its observation fails it.
    fn action(
        &mut self,
        call: &ToolCall,
        refused: bool,
        preview: Option<&Preview>,
    ) -> Vec<SessionUpdate> {
        if call.name == "todo" {
            self.todos.insert(call.id.clone(), call.arguments.clone());
            return Vec::new();
        }
        if let Some(live) = self.calls.get(&call.id) {
            if refused {
                return Vec::new();
            }
            let fields = ToolCallUpdateFields::new().status(ToolCallStatus::InProgress);
            return vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                live.acp_id.clone(),
                fields,
            ))];
        }
        let diffs = self.diffs(call, preview);
        let described = describe(&self.root, call, preview);
        let acp_id = self.fresh_id(&call.id);
        let content: Vec<ToolCallContent> =
            diffs.iter().cloned().map(ToolCallContent::Diff).collect();
        self.calls.insert(call.id.clone(), Live { acp_id: acp_id.clone(), diffs });
        let status = if refused { ToolCallStatus::Pending } else { ToolCallStatus::InProgress };
        let mut announce = described.tool_call(&acp_id, call.arguments.clone()).status(status);
        if !content.is_empty() {
            announce = announce.content(content);
        }
        vec![SessionUpdate::ToolCall(announce)]
    }

    /// A running call's latest progress: its content (after any diffs it
    /// shows) becomes that line.
    fn progress(&mut self, call_id: &str, text: &str) -> Vec<SessionUpdate> {
        let Some(live) = self.calls.get(call_id) else { return Vec::new() };
        if text.is_empty() {
            return Vec::new();
        }
        let mut content: Vec<ToolCallContent> =
            live.diffs.iter().cloned().map(ToolCallContent::Diff).collect();
        content.push(text_content(text));
        let fields =
            ToolCallUpdateFields::new().status(ToolCallStatus::InProgress).content(content);
        vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(live.acp_id.clone(), fields))]
    }

    /// A step of the subagent the call `call_id` started: the call's
    /// content becomes its latest steps as text (its result replaces them
    /// when it ends). A call of the subagent's that the editor was asked
    /// about got a card of its own; its result ends that card.
    fn subagent(&mut self, call_id: &str, agent: &str, event: &AgentEvent) -> Vec<SessionUpdate> {
        let mut updates = Vec::new();
        let (mut path, mut inner) = (agent.to_string(), event);
        while let AgentEvent::Subagent { agent, event, .. } = inner {
            path = format!("{path} › {agent}");
            inner = event;
        }
        let line = match inner {
            AgentEvent::Action { call, refused: false, .. } => {
                Some(format!("{path}: {} {}", call.name, compact(&call.arguments)))
            }
            AgentEvent::Observation { call_id: asked, name, output } => {
                if asked != call_id && self.calls.contains_key(asked) {
                    updates.extend(self.observation(asked, output));
                }
                let mark = if output.is_error { "✗" } else { "✓" };
                Some(format!("{path}: {mark} {name}"))
            }
            AgentEvent::Warning { message } | AgentEvent::Error { message } => {
                Some(format!("{path}: {message}"))
            }
            _ => None,
        };
        let (Some(line), Some(live)) = (line, self.calls.get(call_id)) else { return updates };
        let steps = self.steps.entry(call_id.to_string()).or_default();
        steps.push(line);
        let shown = &steps[steps.len().saturating_sub(MAX_STEPS_SHOWN)..];
        let fields = ToolCallUpdateFields::new().content(vec![text_content(&shown.join("\n"))]);
        updates
            .push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(live.acp_id.clone(), fields)));
        updates
    }

    fn observation(&mut self, call_id: &str, output: &ToolOutput) -> Vec<SessionUpdate> {
        self.steps.remove(call_id);
        if let Some(arguments) = self.todos.remove(call_id) {
            return match (output.is_error, todo_plan(&arguments)) {
                (false, Some(plan)) => vec![SessionUpdate::Plan(plan)],
                _ => Vec::new(),
            };
        }
        let Some(live) = self.calls.remove(call_id) else { return Vec::new() };
        vec![SessionUpdate::ToolCallUpdate(finished(&live.acp_id, output, live.diffs))]
    }

    /// The diffs of a call that changes files: the hunks of its preview
    /// when there is one, else what its arguments say.
    fn diffs(&self, call: &ToolCall, preview: Option<&Preview>) -> Vec<Diff> {
        if let Some(Preview::Diff { path, diff, created }) = preview {
            // A patch's preview holds one diff per file, each under its
            // own `+++ b/PATH` header.
            let diffs: Vec<Diff> = files_of(diff)
                .into_iter()
                .filter_map(|(file, text)| {
                    let file = file.unwrap_or(path.as_str());
                    let absolute = inside(&self.root, file)?;
                    let created = *created || text.contains("\n@@ -0,0 ");
                    Some(hunks(&absolute, text, created))
                })
                .flatten()
                .collect();
            if !diffs.is_empty() {
                return diffs;
            }
        }
        self.diffs_from_arguments(call)
    }

    /// Edits whose text the arguments carry: `edit_file`'s old and new
    /// text. (A write's old text is only known from its preview.)
    fn diffs_from_arguments(&self, call: &ToolCall) -> Vec<Diff> {
        let arg = |name: &str| call.arguments.get(name).and_then(Value::as_str);
        let Some(path) = arg("path").and_then(|p| inside(&self.root, p)) else {
            return Vec::new();
        };
        match (call.name.as_str(), arg("old_str"), arg("new_str")) {
            ("edit_file", Some(old), Some(new)) => {
                vec![Diff::new(path, new).old_text(old.to_string())]
            }
            _ => Vec::new(),
        }
    }

    /// A stored conversation as the updates that show it: the user's and
    /// the model's messages as chunks, each tool call with its result.
    pub fn replay(&mut self, messages: &[Message]) -> Vec<SessionUpdate> {
        let mut updates = Vec::new();
        for (index, message) in messages.iter().enumerate() {
            match message.role {
                // The text tool protocol's results, sent as a user message.
                Role::User if message.text().starts_with(axon_protocol::TEXT_RESULTS_HEADER) => {}
                // The runtime's replay leaves the user's words and the
                // names of what went with them.
                Role::User => {
                    for part in &message.content {
                        let ContentPart::Text { text } = part else { continue };
                        let text = match axon_protocol::attachment::name_of(text) {
                            Some(name) => format!("\n📎 {name}"),
                            None => text.clone(),
                        };
                        updates.push(SessionUpdate::UserMessageChunk(ContentChunk::new(
                            text.as_str().into(),
                        )));
                    }
                }
                Role::Assistant => {
                    for part in &message.content {
                        match part {
                            ContentPart::Text { text } if !text.is_empty() => {
                                updates.push(message_chunk(text));
                            }
                            ContentPart::Thinking { text, .. } if !text.is_empty() => {
                                updates.push(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                                    text.as_str().into(),
                                )));
                            }
                            _ => {}
                        }
                    }
                    // A call's result is among the tool messages right after it.
                    let results: HashMap<&str, &Message> = messages[index + 1..]
                        .iter()
                        .take_while(|m| m.role == Role::Tool)
                        .filter_map(|m| m.tool_call_id.as_deref().map(|id| (id, m)))
                        .collect();
                    for call in &message.tool_calls {
                        updates.extend(self.replay_call(call, results.get(call.id.as_str())));
                    }
                }
                Role::Tool | Role::System => {}
            }
        }
        updates
    }

    fn replay_call(&mut self, call: &ToolCall, result: Option<&&Message>) -> Vec<SessionUpdate> {
        let output =
            result.map(|m| ToolOutput { content: m.content.clone(), is_error: m.is_error });
        if call.name == "todo" {
            return match (&output, todo_plan(&call.arguments)) {
                (Some(output), Some(plan)) if !output.is_error => vec![SessionUpdate::Plan(plan)],
                _ => Vec::new(),
            };
        }
        let described = describe(&self.root, call, None);
        let acp_id = self.fresh_id(&call.id);
        let mut announce = described.tool_call(&acp_id, call.arguments.clone());
        let Some(output) = output else {
            // The call never got a result (the session stopped mid-call).
            return vec![SessionUpdate::ToolCall(announce.status(ToolCallStatus::Failed))];
        };
        let finished = finished(&acp_id, &output, self.diffs_from_arguments(call));
        announce.update(finished.fields);
        vec![SessionUpdate::ToolCall(announce)]
    }
}

/// A call announced to the editor: its id there, and the diffs to show
/// when it ends.
struct Live {
    acp_id: String,
    diffs: Vec<Diff>,
}

/// The usage update at the end of a turn, with the session's cost so far
/// when it is known.
pub fn context_usage(used: u64, size: u64, cost_usd: Option<f64>) -> SessionUpdate {
    let cost = cost_usd.map(|usd| agent_client_protocol_schema::v1::Cost::new(usd, "USD"));
    SessionUpdate::UsageUpdate(UsageUpdate::new(used, size).cost(cost))
}

pub fn message_chunk(text: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text)))
}

fn text_content(text: &str) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::from(text))
}

/// The `tool_call_update` of a call that ended.
fn finished(call_id: &str, output: &ToolOutput, diffs: Vec<Diff>) -> ToolCallUpdate {
    let status = if output.is_error { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
    let mut content: Vec<ToolCallContent> = Vec::new();
    if !output.is_error {
        content.extend(diffs.into_iter().map(ToolCallContent::Diff));
    }
    let text = output.text_content();
    if !text.is_empty() {
        content.push(text_content(&clip(&text)));
    }
    let fields = ToolCallUpdateFields::new().status(status).content(content);
    ToolCallUpdate::new(call_id.to_string(), fields)
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_RESULT_CHARS) {
        Some((cut, _)) => {
            format!("{}\n… ({} more characters)", &text[..cut], text[cut..].chars().count())
        }
        None => text.to_string(),
    }
}

/// What the approval card says besides a diff: the command, the server.
fn preview_text(preview: &Preview) -> Option<String> {
    match preview {
        Preview::Command { command, workdir, sandbox } => {
            let mut text = format!("```sh\n{command}\n```\n");
            if !workdir.is_empty() && workdir != "." {
                text.push_str(&format!("in {workdir} · "));
            }
            text.push_str(&match sandbox {
                Some(sandbox) => format!("sandboxed: {sandbox}"),
                None => "not sandboxed: runs with your full rights".to_string(),
            });
            Some(text)
        }
        Preview::Invalid { message } => Some(format!("This call would fail: {message}")),
        Preview::Sampling { .. } => preview.sampling_text(),
        Preview::Diff { .. } | Preview::Mcp { .. } | Preview::Arguments { .. } => None,
    }
}

/// A tool call's title, kind and locations.
struct Described {
    title: String,
    kind: ToolKind,
    locations: Vec<ToolCallLocation>,
}

impl Described {
    fn tool_call(&self, id: &str, arguments: Value) -> AcpToolCall {
        AcpToolCall::new(id.to_string(), self.title.clone())
            .kind(self.kind)
            .locations(self.locations.clone())
            .raw_input(arguments)
    }
}

fn describe(root: &Path, call: &ToolCall, preview: Option<&Preview>) -> Described {
    let arg = |name: &str| call.arguments.get(name).and_then(Value::as_str);
    let number = |name: &str| call.arguments.get(name).and_then(Value::as_u64);
    let at = |path: &str, line: Option<u64>| {
        // Only places in the workspace: an editor following along opens them.
        let Some(path) = inside(root, path) else { return Vec::new() };
        let location = ToolCallLocation::new(path);
        vec![match line.and_then(|l| u32::try_from(l).ok()) {
            Some(line) => location.line(line),
            None => location,
        }]
    };
    let path = arg("path").unwrap_or(".");
    let (title, kind, locations) = match call.name.as_str() {
        "read_file" => {
            let line = number("start_line");
            let title = match (line, number("end_line")) {
                (Some(from), Some(to)) => format!("Read {path} (lines {from}-{to})"),
                (Some(from), None) => format!("Read {path} (from line {from})"),
                (None, Some(to)) => format!("Read {path} (to line {to})"),
                (None, None) => format!("Read {path}"),
            };
            (title, ToolKind::Read, at(path, line))
        }
        "read_note" => (format!("Read {path}"), ToolKind::Read, at(path, None)),
        "list_dir" | "list_folder" => (format!("List {path}"), ToolKind::Read, at(path, None)),
        "search" => {
            let pattern = arg("query").or(arg("pattern")).unwrap_or("");
            let title = match arg("path") {
                Some(path) => format!("Search `{pattern}` in {path}"),
                None => format!("Search `{pattern}`"),
            };
            let locations = arg("path").map(|p| at(p, None)).unwrap_or_default();
            (title, ToolKind::Search, locations)
        }
        "glob" => {
            (format!("Find `{}`", arg("pattern").unwrap_or("")), ToolKind::Search, Vec::new())
        }
        "write_file" => {
            let verb = if arg("mode") == Some("append") { "Append to" } else { "Write" };
            (format!("{verb} {path}"), ToolKind::Edit, at(path, first_changed_line(preview)))
        }
        "edit_file" | "multi_edit" => {
            (format!("Edit {path}"), ToolKind::Edit, at(path, first_changed_line(preview)))
        }
        "create_note" => (format!("Create {path}"), ToolKind::Edit, at(path, None)),
        "apply_patch" => {
            let files = axon_runtime::patch_paths(arg("input").unwrap_or(""));
            let title = match files.as_slice() {
                [only] => format!("Patch {only}"),
                many => format!("Patch {} files", many.len()),
            };
            let locations = files.iter().flat_map(|file| at(file, None)).collect();
            (title, ToolKind::Edit, locations)
        }
        "shell" => {
            let command = arg("command").unwrap_or("");
            let first = command.lines().next().unwrap_or("");
            let shown: String = first.chars().take(80).collect();
            let more = if shown.len() < command.len() { " …" } else { "" };
            let background = call.arguments.get("background").and_then(Value::as_bool);
            let how = if background == Some(true) { " in the background" } else { "" };
            (format!("`{shown}{more}`{how}"), ToolKind::Execute, Vec::new())
        }
        "shell_output" => {
            (format!("Output of {}", arg("id").unwrap_or("?")), ToolKind::Execute, Vec::new())
        }
        "shell_kill" => {
            (format!("Stop {}", arg("id").unwrap_or("?")), ToolKind::Execute, Vec::new())
        }
        "load_skill" => {
            (format!("Load skill {}", arg("name").unwrap_or("")), ToolKind::Read, Vec::new())
        }
        "submit_plan" => ("Propose a plan".to_string(), ToolKind::Think, Vec::new()),
        "web_fetch" => {
            let url: String = arg("url").unwrap_or("").chars().take(120).collect();
            (format!("Fetch {url}"), ToolKind::Fetch, Vec::new())
        }
        "web_search" => {
            let query: String = arg("query").unwrap_or("").chars().take(120).collect();
            (format!("Search the web for `{query}`"), ToolKind::Search, Vec::new())
        }
        name => match preview {
            Some(Preview::Mcp { server, tool, .. }) => {
                let kind = if tool.contains("fetch") { ToolKind::Fetch } else { ToolKind::Other };
                (format!("{server}: {tool}"), kind, Vec::new())
            }
            _ => {
                let kind = if name.contains("fetch") { ToolKind::Fetch } else { ToolKind::Other };
                (name.to_string(), kind, Vec::new())
            }
        },
    };
    Described { title, kind, locations }
}

/// `path` (relative to the workspace) as an absolute path under `root`;
/// `None` for one that is absolute or climbs out.
fn inside(root: &Path, path: &str) -> Option<PathBuf> {
    let path = Path::new(path);
    let plain = path
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
    plain.then(|| root.join(path))
}

/// The first line a diff preview changes, for the editor to jump to.
fn first_changed_line(preview: Option<&Preview>) -> Option<u64> {
    let Some(Preview::Diff { diff, .. }) = preview else { return None };
    diff.lines().find_map(|line| {
        let rest = line.strip_prefix("@@ ")?;
        let new = rest.split_whitespace().find(|part| part.starts_with('+'))?;
        new.trim_start_matches('+').split(',').next()?.parse().ok()
    })
}

/// A diff preview cut at its files: each `--- …` header starts one, named
/// by its `+++ b/PATH` line (`None` before any header: a single file's
/// notes and diff, named by the preview).
fn files_of(diff: &str) -> Vec<(Option<&str>, &str)> {
    let mut starts: Vec<(usize, Option<&str>)> = vec![(0, None)];
    let mut offset = 0;
    let mut previous = "";
    for line in diff.split_inclusive('\n') {
        let text = line.trim_end_matches('\n');
        if previous.starts_with("--- ")
            && let Some(name) = text.strip_prefix("+++ b/")
        {
            starts.push((offset - previous.len() - 1, Some(name)));
        }
        previous = text;
        offset += line.len();
    }
    let mut out = Vec::new();
    for (index, &(start, name)) in starts.iter().enumerate() {
        let end = starts.get(index + 1).map_or(diff.len(), |next| next.0);
        if index == 0 && starts.len() > 1 {
            continue;
        }
        out.push((name, &diff[start..end]));
    }
    out
}

/// A unified diff as the editor's diff content: one per hunk, each with the
/// hunk's old lines (context and removed) and new lines (context and added).
/// A new file is one diff with no old text.
fn hunks(path: &Path, diff: &str, created: bool) -> Vec<Diff> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in diff.lines() {
        if line.starts_with("@@") {
            if let Some((old, new)) = current.take() {
                out.push((old, new));
            }
            current = Some((String::new(), String::new()));
            continue;
        }
        let Some((old, new)) = current.as_mut() else { continue };
        if let Some(added) = line.strip_prefix('+') {
            new.push_str(added);
            new.push('\n');
        } else if let Some(removed) = line.strip_prefix('-') {
            old.push_str(removed);
            old.push('\n');
        } else if let Some(context) = line.strip_prefix(' ') {
            old.push_str(context);
            old.push('\n');
            new.push_str(context);
            new.push('\n');
        }
    }
    out.extend(current);
    if created {
        let text: String = out.into_iter().map(|(_, new)| new).collect();
        return vec![Diff::new(path, text)];
    }
    out.into_iter().map(|(old, new)| Diff::new(path, new).old_text(old)).collect()
}

fn plan_update(plan: &AxonPlan) -> Plan {
    let entries = plan
        .steps
        .iter()
        .map(|step| {
            let status = match step.status {
                StepStatus::Pending => PlanEntryStatus::Pending,
                StepStatus::Running => PlanEntryStatus::InProgress,
                StepStatus::Completed | StepStatus::Failed | StepStatus::Skipped => {
                    PlanEntryStatus::Completed
                }
            };
            let content = match step.status {
                StepStatus::Failed => format!("{} (failed)", step.description),
                StepStatus::Skipped => format!("{} (skipped)", step.description),
                _ => step.description.clone(),
            };
            PlanEntry::new(content, PlanEntryPriority::Medium, status)
        })
        .collect();
    Plan::new(entries)
}

/// The `todo` tool's list as a plan.
fn todo_plan(arguments: &Value) -> Option<Plan> {
    let items = arguments.get("items")?.as_array()?;
    let entries = items
        .iter()
        .filter_map(|item| {
            let content = item.get("content")?.as_str()?;
            let status = match item.get("status")?.as_str()? {
                "in_progress" => PlanEntryStatus::InProgress,
                "completed" => PlanEntryStatus::Completed,
                _ => PlanEntryStatus::Pending,
            };
            Some(PlanEntry::new(content, PlanEntryPriority::Medium, status))
        })
        .collect();
    Some(Plan::new(entries))
}

#[cfg(test)]
#[path = "updates_tests.rs"]
mod tests;

/// A call's arguments on one line, cut short.
fn compact(arguments: &Value) -> String {
    let text = match arguments {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    };
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > 100 {
        format!("{}…", line.chars().take(100).collect::<String>())
    } else {
        line.to_string()
    }
}
