//! Sessions for people: Markdown with a heading per turn and tool calls as
//! fenced blocks; and the protocol's `Conversation` as JSON. Messages a
//! rewind took back are marked in both (a note before each run of them and
//! "(undone)" on their turns; `metadata.undone_messages` in JSON), never
//! shown as if the conversation still held them.

use std::fmt::Write;

use axon_protocol::{ContentPart, Role};

use crate::store::Session;

/// The whole session as one `Conversation` JSON document.
pub fn to_json(session: &Session) -> String {
    serde_json::to_string_pretty(&session.conversation()).unwrap_or_default()
}

/// The session as readable Markdown.
pub fn to_markdown(session: &Session) -> String {
    let conversation = session.conversation();
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", conversation.title);
    let _ = writeln!(
        out,
        "- session: `{}`\n- workspace: `{}`\n- model: {}\n- tokens: {}\n",
        conversation.id,
        session.header.workspace,
        conversation.metadata.model,
        conversation.metadata.total_tokens
    );
    let mut turn = 0;
    let undone = session.undone_messages();
    let mut in_undone = false;
    for (index, message) in conversation.messages.iter().enumerate() {
        let taken_back = undone.get(index).copied().unwrap_or(false);
        if taken_back && !in_undone {
            let _ = writeln!(
                out,
                "> **Undone by a rewind** (`axon rewind`): the messages below were taken back; \
                 the conversation goes on without them.\n"
            );
        } else if !taken_back && in_undone {
            let _ = writeln!(out, "> **End of the undone messages.**\n");
        }
        in_undone = taken_back;
        let mark = if taken_back { " (undone)" } else { "" };
        match message.role {
            Role::System => {
                let _ = writeln!(out, "## System\n\n{}\n", message.text());
            }
            Role::User => {
                turn += 1;
                let text = message.text();
                let _ = writeln!(out, "## Turn {turn}: user{mark}\n\n{}\n", text.trim_end());
            }
            Role::Assistant => {
                let _ = writeln!(out, "### Assistant{mark}\n");
                for part in &message.content {
                    match part {
                        ContentPart::Text { text } if !text.trim().is_empty() => {
                            let _ = writeln!(out, "{}\n", text.trim_end());
                        }
                        ContentPart::Thinking { text, .. } if !text.trim().is_empty() => {
                            for line in text.trim_end().lines() {
                                let _ = writeln!(out, "> {line}");
                            }
                            out.push('\n');
                        }
                        _ => {}
                    }
                }
                for call in &message.tool_calls {
                    let args = serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "**Tool call** `{}`\n\n{}\n",
                        call.name,
                        fenced("json", &args)
                    );
                }
            }
            Role::Tool => {
                let status = if message.is_error { "error" } else { "result" };
                let _ = writeln!(
                    out,
                    "**Tool {status}**\n\n{}\n",
                    fenced("text", message.text().trim_end())
                );
            }
        }
    }
    out
}

/// A fenced block whose fence is longer than any backtick run inside.
fn fenced(lang: &str, body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{body}\n{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outgrow_backticks_inside() {
        assert_eq!(fenced("text", "plain"), "```text\nplain\n```");
        assert!(fenced("md", "a ```rust\nb``` c").starts_with("````md\n"));
    }
}
