//! What a compaction carries forward verbatim, outside the summary: the
//! state a summary may paraphrase away but the task cannot lose.
//!
//! Guarantees:
//! - Gathered from the messages themselves, so it holds for automatic and
//!   manual compaction alike and needs no state the history does not have:
//!   the user's latest request (when it is among the replaced messages; the
//!   current request is never replaced), the last checklist the model sent
//!   with its open items, the plan step being worked on (the plan with
//!   every step's status is in the step's request, which is kept), and
//!   every file changed by a successful edit or patch, with the first line
//!   of the last change's result, and the background commands started and
//!   not seen to end.
//! - Repeated compactions lose nothing: the block an earlier compaction
//!   carried is read back and the new state laid over it, and a request is
//!   known by its own words, without the lead a compaction put before it
//!   (so a plan step's request is still a step's, and tool results in the
//!   text protocol or a stop hook's nudge are never taken for the user's).
//! - Rules and skills are in the system prompt, which is never compacted.
//! - [`Carried::missing_from`] says which open items and which current step
//!   a summary fails to mention, so a summary that dropped them is redone
//!   or refused rather than used.

use axon_protocol::compaction::split_lead;
use axon_protocol::{Message, Role, TEXT_RESULTS_HEADER};
use serde_json::Value;

use crate::lifecycle::KEEP_GOING;
use crate::plan::step_of_prompt;

/// Tools whose successful call changes the file named by its `path`.
const EDITING_TOOLS: [&str; 4] = ["edit_file", "multi_edit", "write_file", "create_note"];
/// Characters kept of the result line that describes a file's last change.
const CHANGE_LINE: usize = 200;
/// Characters kept of the user's latest request when it is carried.
const REQUEST_CHARS: usize = 4000;

// The headings of the carried block's sections, in the order they come.
const REQUEST: &str = "The user's latest request, as written:\n";
const CHECKLIST: &str = "The checklist (open items still to do):\n";
const STEP: &str = "The plan step being carried out: step ";
const STEP_END: &str = " (the plan with every step's status is in the current request)";
const CHANGED: &str = "Files changed so far (last change of each):\n";
const RUNNING: &str = "Commands still running in the background (shell_output reads them):\n";

#[derive(Debug, Default, PartialEq)]
pub(crate) struct Carried {
    /// The last request the user typed, when the compaction replaces it.
    latest_request: Option<String>,
    /// The last checklist as the `todo` tool rendered it, with open items.
    checklist: Option<String>,
    /// The checklist's items not yet completed, as the model wrote them.
    open_items: Vec<String>,
    /// The plan step now being carried out: `(number, description)`.
    current_step: Option<(u32, String)>,
    /// Files changed so far, each with the first line of its last change.
    changed: Vec<(String, String)>,
    /// Background commands started and not seen to end: `(id, command)`.
    running: Vec<(String, String)>,
}

impl Carried {
    /// Gathers the state of `messages`, of which the first `replaced` are
    /// about to be summarised. What an earlier compaction carried (in the
    /// block leading the first message, which is among the replaced) is
    /// the base, and what the messages show is laid over it: the nth
    /// compaction carries all the (n-1)th did and what is new.
    pub(crate) fn gather(messages: &[Message], replaced: usize) -> Carried {
        let replaced = replaced.min(messages.len());
        let mut carried = messages
            .first()
            .filter(|_| replaced > 0)
            .and_then(|first| split_lead(first).0)
            .map(|block| Carried::parse(&block))
            .unwrap_or_default();
        let asked: Vec<(usize, Asked)> =
            messages.iter().enumerate().filter_map(|(i, m)| Some((i, asked(m)?))).collect();
        let typed = asked.iter().rev().find_map(|(i, a)| match a {
            Asked::Typed(text) => Some((*i, text)),
            Asked::Step(..) => None,
        });
        match typed {
            Some((last, text)) if last < replaced => {
                carried.latest_request = Some(clip(text.trim(), REQUEST_CHARS));
            }
            // Kept, so it is still there to read.
            Some(_) => carried.latest_request = None,
            // Only the earlier block still has it.
            None => {}
        }
        match asked.last() {
            Some((_, Asked::Step(number, description))) => {
                carried.current_step = Some((*number, description.clone()));
            }
            Some((_, Asked::Typed(_))) => carried.current_step = None,
            None => {}
        }
        let results = |id: &str| {
            messages.iter().find(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(id))
        };
        for call in messages.iter().flat_map(|m| &m.tool_calls) {
            let Some(result) = results(&call.id) else { continue };
            if result.is_error {
                continue;
            }
            let text = result.text();
            if call.name == "todo" {
                carried.checklist = Some(text.trim().to_string());
                carried.open_items = open_items(&call.arguments);
            } else if call.name == "shell"
                && call.arguments.get("background").and_then(Value::as_bool) == Some(true)
                && let Some(started) = started_in_background(&text)
            {
                // A call the last compaction kept is in its block and still
                // in the history: one entry per command.
                carried.running.retain(|(running, _)| running != &started.0);
                carried.running.push(started);
            } else if matches!(call.name.as_str(), "shell_output" | "shell_kill")
                && let Some(id) = ended_in_background(&text)
            {
                carried.running.retain(|(running, _)| running != id);
            } else if call.name == "apply_patch"
                && let Some(patch) = call.arguments.get("input").and_then(Value::as_str)
            {
                for path in axon_tools::patch_paths(patch) {
                    carried.file_changed(path, &text);
                }
            } else if EDITING_TOOLS.contains(&call.name.as_str())
                && let Some(path) = call.arguments.get("path").and_then(Value::as_str)
            {
                carried.file_changed(path.to_string(), &text);
            }
        }
        if carried.open_items.is_empty() {
            carried.checklist = None;
        }
        carried
    }

    /// What [`Carried::render`] wrote, read back. Sections are found from
    /// the last, so only a carried request holding the heading of a section
    /// that is absent could be misread (a part of it taken for that section).
    fn parse(block: &str) -> Carried {
        let mut carried = Carried::default();
        let mut rest = block;
        let mut section = |heading: &str| -> Option<String> {
            let marker = format!("\n\n{heading}");
            if let Some(at) = rest.rfind(&marker) {
                let body = rest[at + marker.len()..].to_string();
                rest = &rest[..at];
                Some(body)
            } else if let Some(body) = rest.strip_prefix(heading) {
                let body = body.to_string();
                rest = "";
                Some(body)
            } else {
                None
            }
        };
        let listed = |body: &str| -> Vec<(String, String)> {
            body.lines()
                .filter_map(|line| line.strip_prefix("- ")?.split_once(": "))
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        if let Some(body) = section(RUNNING) {
            carried.running = listed(&body);
        }
        if let Some(body) = section(CHANGED) {
            carried.changed = listed(&body);
        }
        if let Some(body) = section(STEP) {
            carried.current_step = body.split_once(STEP_END).and_then(|(step, _)| {
                let (number, description) = step.split_once(", ")?;
                Some((number.parse().ok()?, description.to_string()))
            });
        }
        if let Some(body) = section(CHECKLIST) {
            carried.open_items = body
                .lines()
                .filter_map(|line| line.strip_prefix("[ ] ").or_else(|| line.strip_prefix("[>] ")))
                .map(|item| item.trim().to_string())
                .collect();
            carried.checklist = Some(body);
        }
        if let Some(request) = section(REQUEST) {
            carried.latest_request = Some(request);
        }
        carried
    }

    /// `path` changed, as the first line of `result` says: its last change.
    fn file_changed(&mut self, path: String, result: &str) {
        let line = clip(result.lines().next().unwrap_or("").trim(), CHANGE_LINE);
        self.changed.retain(|(p, _)| *p != path);
        self.changed.push((path, line));
    }

    /// The block placed after the summary, or `None` when there is nothing
    /// to carry.
    pub(crate) fn render(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(request) = &self.latest_request {
            parts.push(format!("{REQUEST}{request}"));
        }
        if let Some(list) = &self.checklist {
            parts.push(format!("{CHECKLIST}{list}"));
        }
        if let Some((number, description)) = &self.current_step {
            parts.push(format!("{STEP}{number}, {description}{STEP_END}"));
        }
        if !self.changed.is_empty() {
            let files: Vec<String> =
                self.changed.iter().map(|(path, line)| format!("- {path}: {line}")).collect();
            parts.push(format!("{CHANGED}{}", files.join("\n")));
        }
        if !self.running.is_empty() {
            let commands: Vec<String> =
                self.running.iter().map(|(id, command)| format!("- {id}: {command}")).collect();
            parts.push(format!("{RUNNING}{}", commands.join("\n")));
        }
        if parts.is_empty() { None } else { Some(parts.join("\n\n")) }
    }

    /// What a summary must mention: the open items and the current step.
    pub(crate) fn required(&self) -> Vec<String> {
        let mut required = self.open_items.clone();
        if let Some((_, description)) = &self.current_step {
            required.push(description.clone());
        }
        required
    }

    /// The required items `summary` does not mention.
    pub(crate) fn missing_from(&self, summary: &str) -> Vec<String> {
        let summary = words(summary);
        self.required().into_iter().filter(|item| !mentioned(item, &summary)).collect()
    }
}

/// The items of a `todo` call's arguments that are not completed.
fn open_items(arguments: &Value) -> Vec<String> {
    let Some(items) = arguments.get("items").and_then(Value::as_array) else { return Vec::new() };
    items
        .iter()
        .filter(|item| item.get("status").and_then(Value::as_str) != Some("completed"))
        .filter_map(|item| item.get("content").and_then(Value::as_str))
        .map(|content| content.trim().to_string())
        .filter(|content| !content.is_empty())
        .collect()
}

/// `(id, command)` from the answer to `shell {background: true}`:
/// "Started in the background as bg1: `npm run dev`. …".
fn started_in_background(result: &str) -> Option<(String, String)> {
    let rest = result.strip_prefix("Started in the background as ")?;
    let (id, rest) = rest.split_once(": `")?;
    let (command, _) = rest.split_once("`. ")?;
    Some((id.to_string(), command.to_string()))
}

/// The id of a background command a report says has ended:
/// "[bg1] ended: …", or "bg1 had already ended; …".
fn ended_in_background(result: &str) -> Option<&str> {
    if let Some(rest) = result.strip_prefix('[')
        && let Some((id, state)) = rest.split_once("] ")
        && state.starts_with("ended")
    {
        return Some(id);
    }
    result.split_once(" had already ended").map(|(id, _)| id)
}

/// A request in the history, as the model was asked it.
enum Asked {
    /// Typed by the user.
    Typed(String),
    /// Axon's request to carry out a plan step: `(number, description)`.
    Step(u32, String),
}

/// What `message` asked, by its own words (without a compaction's lead):
/// `None` for anything but a request (results, a stop hook's nudge, a lead
/// standing alone).
fn asked(message: &Message) -> Option<Asked> {
    if message.role != Role::User || message.tool_call_id.is_some() {
        return None;
    }
    let (_, text) = split_lead(message);
    if text.trim().is_empty()
        || text.starts_with(TEXT_RESULTS_HEADER)
        || text.starts_with(KEEP_GOING)
    {
        return None;
    }
    match current_step(&text) {
        Some((number, description)) => Some(Asked::Step(number, description)),
        None if step_of_prompt(&text).is_some() => None,
        None => Some(Asked::Typed(text)),
    }
}

/// Where the last request is (the user's, or a plan step's): what a
/// compaction of everything before the current request keeps from.
pub(crate) fn last_request(messages: &[Message]) -> Option<usize> {
    messages.iter().rposition(|m| asked(m).is_some())
}

/// The step a plan's step request asks for: `(number, description)`.
fn current_step(request: &str) -> Option<(u32, String)> {
    let (number, _) = step_of_prompt(request)?;
    let (_, rest) = request.rsplit_once("\nNow do step ")?;
    let (_, description) = rest.split_once(" only: ")?;
    let description = description.lines().next()?.trim();
    Some((number, description.to_string()))
}

/// An item counts as mentioned when at least two thirds of its words (of
/// three letters or more; all of them for a shorter item) are in the
/// summary, inflected or not: a summary may reword, not drop the item.
fn mentioned(item: &str, summary: &[String]) -> bool {
    let all = words(item);
    let long: Vec<&String> = all.iter().filter(|w| w.chars().count() >= 3).collect();
    let wanted: Vec<&String> = if long.is_empty() { all.iter().collect() } else { long };
    if wanted.is_empty() {
        return true;
    }
    let found = wanted.iter().filter(|w| summary.iter().any(|s| same_word(w, s))).count();
    found * 3 >= wanted.len() * 2
}

/// Equal, or the same word inflected: a shared start of at least four
/// letters, missing at most three from the shorter ("rewrite" and
/// "rewrote", "test" and "tests"; not "parse" and "parts").
fn same_word(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let shared = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let shorter = a.chars().count().min(b.chars().count());
    shared >= 4 && shared + 3 >= shorter
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn clip(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        return text.to_string();
    }
    let kept: String = text.chars().take(chars).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axon_protocol::{TEXT_RESULTS_HEADER, ToolCall};
    use serde_json::json;

    fn call(id: &str, name: &str, arguments: Value) -> Message {
        let mut m = Message::assistant("");
        m.tool_calls.push(ToolCall { id: id.into(), name: name.into(), arguments });
        m
    }

    fn result(id: &str, text: &str, is_error: bool) -> Message {
        let mut m = Message::tool_result(id, axon_protocol::ToolOutput::text(text));
        m.is_error = is_error;
        m
    }

    #[test]
    fn the_last_checklist_and_every_changed_file_are_carried() {
        let messages = vec![
            Message::user("Port the parser to the new API"),
            call(
                "1",
                "todo",
                json!({"items": [
                {"content": "read the old parser", "status": "completed"},
                {"content": "rewrite tokenizer", "status": "in_progress"},
                {"content": "update the tests", "status": "pending"}]}),
            ),
            result("1", "Checklist (1/3 done):\n[x] read…", false),
            call("2", "edit_file", json!({"path": "src/lex.rs"})),
            result("2", "Edited src/lex.rs: 1 replacement\n-a\n+b", false),
            call("3", "write_file", json!({"path": "src/denied.rs"})),
            result("3", "refused", true),
            Message::user("go on"),
        ];
        let carried = Carried::gather(&messages, 7);
        assert_eq!(carried.open_items, ["rewrite tokenizer", "update the tests"]);
        assert_eq!(
            carried.changed,
            [("src/lex.rs".to_string(), "Edited src/lex.rs: 1 replacement".to_string())]
        );
        // "go on" is the latest request and is kept, so it is not carried.
        assert_eq!(carried.latest_request, None);
        let block = carried.render().unwrap();
        assert!(block.contains("Checklist (1/3 done)"), "{block}");
        assert!(block.contains("- src/lex.rs: Edited src/lex.rs"), "{block}");
        assert_eq!(
            carried.missing_from("They rewrote the tokenizer; the tests are to be updated."),
            Vec::<String>::new()
        );
        assert_eq!(carried.missing_from("Work on the parser went on."), carried.required());
    }

    #[test]
    fn a_plan_step_carries_the_typed_request_and_must_be_mentioned() {
        use crate::plan::{StepDraft, new_plan, step_prompt};
        let draft = |d: &str| StepDraft { description: d.into(), expected_outcome: "done".into() };
        let plan = new_plan("Port the lexer", vec![draft("read the lexer"), draft("rewrite it")]);
        let messages = vec![
            Message::user("Port the lexer to the new API, keeping the old one"),
            Message::assistant("Here is a plan."),
            Message::user(step_prompt(&plan, 0)),
            Message::assistant("Read it."),
            Message::user(step_prompt(&plan, 1)),
        ];
        let carried = Carried::gather(&messages, 4);
        assert_eq!(
            carried.latest_request.as_deref(),
            Some("Port the lexer to the new API, keeping the old one")
        );
        assert_eq!(carried.current_step, Some((2, "rewrite it".to_string())));
        assert_eq!(carried.missing_from("The lexer was read."), ["rewrite it"]);
        assert!(carried.missing_from("Next: rewrite it.").is_empty());
        assert!(carried.render().unwrap().contains("step 2, rewrite it"));
    }

    #[test]
    fn background_commands_are_carried_until_seen_to_end() {
        let started = |id: &str, command: &str| {
            format!(
                "Started in the background as {id}: `{command}`. Read its output with shell_output"
            )
        };
        let messages = vec![
            Message::user("serve and test"),
            call("1", "shell", json!({"command": "npm run dev", "background": true})),
            result("1", &started("bg1", "npm run dev"), false),
            call("2", "shell", json!({"command": "cargo watch", "background": true})),
            result("2", &started("bg2", "cargo watch"), false),
            call("3", "shell_kill", json!({"id": "bg2"})),
            result("3", "[bg2] ended: killed after 3.0s: `cargo watch`\n(no new output)", false),
            call(
                "4",
                "apply_patch",
                json!({"input": "*** Begin Patch\n*** Add File: a.rs\n+x\n*** End Patch"}),
            ),
            result("4", "Applied the patch: added a.rs", false),
        ];
        let carried = Carried::gather(&messages, 9);
        assert_eq!(carried.running, [("bg1".to_string(), "npm run dev".to_string())]);
        assert_eq!(
            carried.changed,
            [("a.rs".to_string(), "Applied the patch: added a.rs".to_string())]
        );
        assert!(carried.render().unwrap().contains("- bg1: npm run dev"));
    }

    /// Compacts `messages` as the agent does: the first `replaced` become
    /// a summary, with the carried block leading what is kept.
    fn compacted(messages: &[Message], replaced: usize) -> Vec<Message> {
        let carried = Carried::gather(messages, replaced);
        let mut rest = messages[replaced..].to_vec();
        axon_protocol::compaction::apply_summary(&mut rest, "summary", carried.render().as_deref());
        rest
    }

    #[test]
    fn a_background_command_the_last_compaction_kept_is_listed_once() {
        let started = "Started in the background as bg1: `npm run dev`. Read its output";
        let messages = vec![
            Message::user("Serve the site"),
            Message::assistant("Which port?"),
            Message::user("Any port"),
            call("1", "shell", json!({"command": "npm run dev", "background": true})),
            result("1", started, false),
            Message::assistant("It runs."),
        ];
        // The first compaction replaces the first two messages: the call
        // stays in the history as well as in the block.
        let first = compacted(&messages, 2);
        assert!(first.iter().any(|m| !m.tool_calls.is_empty()), "{first:?}");
        let again = Carried::gather(&first, 1);
        assert_eq!(again.running, [("bg1".to_string(), "npm run dev".to_string())]);
    }

    #[test]
    fn a_second_compaction_in_one_step_carries_all_the_first_did() {
        use crate::plan::{StepDraft, new_plan, step_prompt};
        let draft = |d: &str| StepDraft { description: d.into(), expected_outcome: "done".into() };
        let plan = new_plan("Port the lexer", vec![draft("read it"), draft("rewrite it")]);
        let started = "Started in the background as bg1: `cargo watch`. Read its output";
        let messages = vec![
            Message::user("Port the lexer, keeping the old one"),
            call(
                "1",
                "todo",
                json!({"items": [{"content": "rewrite tokenizer", "status": "pending"}]}),
            ),
            result("1", "Checklist (0/1 done):\n[ ] rewrite tokenizer", false),
            call("2", "edit_file", json!({"path": "src/lex.rs"})),
            result("2", "Edited src/lex.rs: 1 replacement", false),
            call("3", "shell", json!({"command": "cargo watch", "background": true})),
            result("3", started, false),
            Message::user(step_prompt(&plan, 0)),
            Message::assistant("Read it."),
            Message::user(step_prompt(&plan, 1)),
            call("4", "write_file", json!({"path": "src/new.rs"})),
            result("4", "Wrote src/new.rs", false),
            // The text protocol's results come as a user message.
            Message::user(format!("{TEXT_RESULTS_HEADER}\n[1] read_file: ok\nfn x() {{}}")),
        ];
        let first = compacted(&messages, 7);
        let once = Carried::gather(&first, 0);
        assert_eq!(once.current_step, Some((2, "rewrite it".to_string())));
        // The second compaction replaces the message the first one led.
        let second = compacted(&first, 2);
        let twice = Carried::gather(&second, 1);
        assert_eq!(
            twice.latest_request.as_deref(),
            Some("Port the lexer, keeping the old one"),
            "the typed request, not a step's or a block"
        );
        assert_eq!(twice.current_step, Some((2, "rewrite it".to_string())));
        assert_eq!(twice.open_items, ["rewrite tokenizer"]);
        let files: Vec<&str> = twice.changed.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(files, ["src/lex.rs", "src/new.rs"]);
        assert_eq!(twice.running, [("bg1".to_string(), "cargo watch".to_string())]);
        // A third carries the same: the block reads back as it was written.
        let third = compacted(&second, 1);
        assert_eq!(Carried::gather(&third, 1), twice);
        let block = twice.render().unwrap_or_default();
        assert!(!block.contains("[Summary") && !block.contains("[Carried"), "{block}");
    }

    #[test]
    fn a_finished_checklist_carries_nothing_to_mention() {
        let messages = vec![
            Message::user("do it"),
            call("1", "todo", json!({"items": [{"content": "a thing", "status": "completed"}]})),
            result("1", "Checklist (1/1 done)", false),
        ];
        let carried = Carried::gather(&messages, 3);
        assert!(carried.required().is_empty());
        assert_eq!(carried.latest_request.as_deref(), Some("do it"));
    }
}
