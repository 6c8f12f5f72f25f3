//! What hooks said about one event, as one plain value.
//!
//! One hook's exit code and output are read as Claude Code reads them
//! ([`HookOutcome::from_exit`]); the outcomes of the hooks that ran for an
//! event are then combined ([`HookOutcome::merge`]): any block wins and
//! the reasons are joined, the most restrictive permission wins (deny, then
//! ask, then allow), context, messages and warnings are kept in order.
//! Nothing a hook says is lost and nothing is invented: an outcome with no
//! hooks is [`HookOutcome::default`], "go on".

use serde_json::{Map, Value};

use crate::event::HookEvent;

/// The combined say of the hooks that ran for one event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookOutcome {
    /// The step is refused, for this reason (reasons of several hooks are
    /// joined by newlines). From exit code 2 (the reason is stderr) or
    /// `"decision": "block"` with its `reason`. What it refuses depends
    /// on the event: PreToolUse, the call (its result is the reason);
    /// UserPromptSubmit, the prompt (never sent to the model; the reason
    /// is for the user); Stop and SubagentStop, the stop (the reason tells
    /// the model why to go on); PostToolUse, nothing (the tool ran; the
    /// reason is feedback for the model). SessionStart and PreCompact
    /// cannot be blocked: an exit 2 there is a warning.
    pub blocked: Option<String>,
    /// PreToolUse only: `hookSpecificOutput.permissionDecision` (or the
    /// older `decision: "approve" | "block"`), which overrides the
    /// approval policy.
    pub permission: Option<Permission>,
    /// Text for the model (`hookSpecificOutput.additionalContext`, and the
    /// plain stdout of UserPromptSubmit and SessionStart hooks), in the
    /// order the hooks are configured.
    pub additional_context: Vec<String>,
    /// `systemMessage`: shown to the user, not the model.
    pub system_messages: Vec<String>,
    /// `"continue": false`: the whole run should stop after this step, with
    /// `stopReason` for the user (this overrides `blocked`).
    pub stop: Option<String>,
    /// What went wrong running hooks (a non-zero exit other than 2, a
    /// timeout, a hook that could not start, output that was not the JSON
    /// it looked like). For the user; never stops anything.
    pub warnings: Vec<String>,
}

/// A hook's say on whether a tool call may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Permission {
    /// Run without asking the user.
    Allow,
    /// Refused, with this reason for the model.
    Deny(String),
    /// Ask the user even when the policy would not, with this reason.
    Ask(String),
}

impl Permission {
    fn rank(&self) -> u8 {
        match self {
            Permission::Allow => 0,
            Permission::Ask(_) => 1,
            Permission::Deny(_) => 2,
        }
    }
}

/// How one hook ended, for [`HookOutcome::from_exit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exit {
    /// The exit code; `None` when it was killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Bytes of stderr quoted in a warning.
const STDERR_TAIL: usize = 2000;

impl HookOutcome {
    /// No hook ran or every hook said go on.
    pub fn is_empty(&self) -> bool {
        *self == HookOutcome::default()
    }

    /// Adds `other`'s say to this one.
    pub fn merge(&mut self, other: HookOutcome) {
        self.blocked = join(self.blocked.take(), other.blocked);
        self.stop = join(self.stop.take(), other.stop);
        self.permission = match (self.permission.take(), other.permission) {
            (None, theirs) => theirs,
            (ours, None) => ours,
            (Some(ours), Some(theirs)) => Some(match (ours, theirs) {
                (Permission::Deny(a), Permission::Deny(b)) => Permission::Deny(join_text(a, b)),
                (Permission::Ask(a), Permission::Ask(b)) => Permission::Ask(join_text(a, b)),
                (ours, theirs) if theirs.rank() > ours.rank() => theirs,
                (ours, _) => ours,
            }),
        };
        self.additional_context.extend(other.additional_context);
        self.system_messages.extend(other.system_messages);
        self.warnings.extend(other.warnings);
    }

    /// A warning only.
    pub(crate) fn warning(message: String) -> HookOutcome {
        HookOutcome { warnings: vec![message], ..HookOutcome::default() }
    }

    /// What one hook of `event`, called `label` in messages, said by
    /// exiting as `exit` did.
    pub(crate) fn from_exit(event: HookEvent, label: &str, exit: Exit) -> HookOutcome {
        match exit.code {
            Some(0) => from_stdout(event, label, exit.stdout.trim()),
            Some(2) => {
                let reason = exit.stderr.trim();
                let reason = if reason.is_empty() {
                    format!("blocked by hook {label}")
                } else {
                    reason.to_string()
                };
                if event.can_block() {
                    HookOutcome { blocked: Some(reason), ..HookOutcome::default() }
                } else {
                    HookOutcome::warning(format!(
                        "hook {label} exited with code 2 ({event} cannot be blocked): {reason}"
                    ))
                }
            }
            code => {
                let how = match code {
                    Some(code) => format!("exited with code {code}"),
                    None => "was killed by a signal".to_string(),
                };
                let tail = tail(exit.stderr.trim(), STDERR_TAIL);
                let message = if tail.is_empty() {
                    format!("hook {label} {how}")
                } else {
                    format!("hook {label} {how}: {tail}")
                };
                HookOutcome::warning(message)
            }
        }
    }
}

/// Exit 0: JSON when stdout is a JSON object; else plain text, which is
/// context for UserPromptSubmit and SessionStart and ignored elsewhere.
fn from_stdout(event: HookEvent, label: &str, stdout: &str) -> HookOutcome {
    if stdout.starts_with('{') {
        return match serde_json::from_str::<Value>(stdout) {
            Ok(Value::Object(reply)) => from_json(event, label, &reply),
            _ => HookOutcome::warning(format!(
                "hook {label} printed output that looks like JSON but is not valid JSON; ignored"
            )),
        };
    }
    let mut outcome = HookOutcome::default();
    if !stdout.is_empty() && matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
    {
        outcome.additional_context.push(stdout.to_string());
    }
    outcome
}

fn from_json(event: HookEvent, label: &str, reply: &Map<String, Value>) -> HookOutcome {
    let text = |object: &Map<String, Value>, key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    let mut outcome = HookOutcome::default();
    if reply.get("continue") == Some(&Value::Bool(false)) {
        outcome.stop =
            Some(text(reply, "stopReason").unwrap_or_else(|| format!("stopped by hook {label}")));
    }
    if let Some(message) = text(reply, "systemMessage") {
        outcome.system_messages.push(message);
    }
    let reason = text(reply, "reason");
    match reply.get("decision").and_then(Value::as_str) {
        Some("block") if event == HookEvent::PreToolUse => {
            outcome.permission = Some(Permission::Deny(
                reason.clone().unwrap_or_else(|| format!("denied by hook {label}")),
            ));
        }
        Some("approve") if event == HookEvent::PreToolUse => {
            outcome.permission = Some(Permission::Allow);
        }
        Some("block") if !event.can_block() => outcome
            .warnings
            .push(format!("hook {label} asked to block {event}, which cannot be blocked")),
        Some("block") => {
            outcome.blocked =
                Some(reason.clone().unwrap_or_else(|| format!("blocked by hook {label}")))
        }
        _ => {}
    }
    if let Some(Value::Object(specific)) = reply.get("hookSpecificOutput") {
        if let Some(context) = text(specific, "additionalContext") {
            outcome.additional_context.push(context);
        }
        if event == HookEvent::PreToolUse {
            let why = text(specific, "permissionDecisionReason");
            match specific.get("permissionDecision").and_then(Value::as_str) {
                Some("allow") => outcome.permission = Some(Permission::Allow),
                Some("deny") => {
                    outcome.permission = Some(Permission::Deny(
                        why.unwrap_or_else(|| format!("denied by hook {label}")),
                    ))
                }
                Some("ask") => {
                    outcome.permission = Some(Permission::Ask(
                        why.unwrap_or_else(|| format!("hook {label} asks for approval")),
                    ))
                }
                Some(other) => outcome.warnings.push(format!(
                    "hook {label}: unknown permissionDecision `{other}` (expected allow, deny \
                     or ask); ignored"
                )),
                None => {}
            }
        }
    }
    outcome
}

fn join(ours: Option<String>, theirs: Option<String>) -> Option<String> {
    match (ours, theirs) {
        (Some(a), Some(b)) => Some(join_text(a, b)),
        (a, b) => a.or(b),
    }
}

fn join_text(a: String, b: String) -> String {
    if a == b { a } else { format!("{a}\n{b}") }
}

/// The last `max` bytes of `text`, cut at a character boundary.
fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(code: i32, stdout: &str, stderr: &str) -> Exit {
        Exit { code: Some(code), stdout: stdout.into(), stderr: stderr.into() }
    }

    #[test]
    fn exit_two_blocks_with_stderr_except_where_nothing_can_be_blocked() {
        let outcome = HookOutcome::from_exit(HookEvent::Stop, "`x`", exit(2, "", "go on\n"));
        assert_eq!(outcome.blocked.as_deref(), Some("go on"));
        let outcome = HookOutcome::from_exit(HookEvent::PreCompact, "`x`", exit(2, "", "no"));
        assert_eq!(outcome.blocked, None);
        assert_eq!(outcome.warnings.len(), 1);
    }

    #[test]
    fn json_replies_are_read_by_event() {
        let reply = r#"{"decision":"block","reason":"tests fail","continue":false,"stopReason":"halt","systemMessage":"careful","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"ctx"}}"#;
        let outcome = HookOutcome::from_exit(HookEvent::PostToolUse, "`x`", exit(0, reply, ""));
        assert_eq!(outcome.blocked.as_deref(), Some("tests fail"));
        assert_eq!(outcome.stop.as_deref(), Some("halt"));
        assert_eq!(outcome.system_messages, vec!["careful"]);
        assert_eq!(outcome.additional_context, vec!["ctx"]);

        let legacy = HookOutcome::from_exit(
            HookEvent::PreToolUse,
            "`x`",
            exit(0, r#"{"decision":"block","reason":"no"}"#, ""),
        );
        assert_eq!(legacy.permission, Some(Permission::Deny("no".into())));
        assert_eq!(legacy.blocked, None);
    }

    #[test]
    fn plain_stdout_is_context_only_where_claude_makes_it_so() {
        let prompt = HookOutcome::from_exit(
            HookEvent::UserPromptSubmit,
            "`x`",
            exit(0, "date: today\n", ""),
        );
        assert_eq!(prompt.additional_context, vec!["date: today"]);
        let tool = HookOutcome::from_exit(HookEvent::PostToolUse, "`x`", exit(0, "formatted", ""));
        assert!(tool.is_empty());
        let broken =
            HookOutcome::from_exit(HookEvent::UserPromptSubmit, "`x`", exit(0, "{oops", ""));
        assert!(broken.additional_context.is_empty());
        assert_eq!(broken.warnings.len(), 1);
    }

    #[test]
    fn merging_keeps_every_say_and_the_strictest_permission() {
        let mut all = HookOutcome { permission: Some(Permission::Allow), ..Default::default() };
        all.merge(HookOutcome {
            blocked: Some("a".into()),
            permission: Some(Permission::Ask("check".into())),
            additional_context: vec!["one".into()],
            ..Default::default()
        });
        all.merge(HookOutcome {
            blocked: Some("b".into()),
            permission: Some(Permission::Deny("no".into())),
            additional_context: vec!["two".into()],
            warnings: vec!["w".into()],
            ..Default::default()
        });
        all.merge(HookOutcome { permission: Some(Permission::Allow), ..Default::default() });
        assert_eq!(all.blocked.as_deref(), Some("a\nb"));
        assert_eq!(all.permission, Some(Permission::Deny("no".into())));
        assert_eq!(all.additional_context, vec!["one", "two"]);
        assert_eq!(all.warnings, vec!["w"]);
    }

    #[test]
    fn other_codes_warn_with_the_stderr_tail() {
        let long = format!("{}END", "x".repeat(5000));
        let outcome = HookOutcome::from_exit(HookEvent::PreToolUse, "`x`", exit(1, "", &long));
        assert!(outcome.blocked.is_none() && outcome.permission.is_none());
        assert!(outcome.warnings[0].contains("exited with code 1"));
        assert!(outcome.warnings[0].ends_with("END"));
        assert!(outcome.warnings[0].len() < 2200);
    }
}
