//! What a finished card shows of a call's result: the output's lines, a
//! failed command's stderr before its stdout (a collapsed card shows its
//! first lines, and the reason a command failed is on stderr), and a
//! submitted plan as its numbered steps rather than its JSON.

use axon_protocol::ToolOutput;
use ratatui::style::Style;
use ratatui::text::Span;
use serde_json::Value;

use crate::theme::Theme;

/// The lines of `output`; a failed command's (`shell`'s "stdout:" and
/// "stderr:" sections) with its stderr first and empty sections left out.
pub(crate) fn output_lines(output: &ToolOutput, theme: Theme) -> Vec<Vec<Span<'static>>> {
    let style = if output.is_error { theme.error() } else { Style::new() };
    let text = output.text_content();
    let text = match output.is_error.then(|| stderr_first(&text)).flatten() {
        Some(reordered) => reordered,
        None => text,
    };
    let mut lines: Vec<Vec<Span<'static>>> =
        text.lines().map(|l| vec![Span::styled(l.replace('\t', "    "), style)]).collect();
    while lines.last().is_some_and(|l| l.iter().all(|s| s.content.trim().is_empty())) {
        lines.pop();
    }
    let media = output.content.iter().filter(|p| p.as_text().is_none()).count();
    if media > 0 {
        lines.push(vec![Span::styled(format!("[{media} non-text part(s)]"), theme.dim())]);
    }
    lines
}

/// A command's result ("HEAD\nstdout:\nOUT\nstderr:\nERR[notes]") as HEAD,
/// then ERR, then OUT, each only if not "(empty)"; `None` for any other
/// text.
fn stderr_first(text: &str) -> Option<String> {
    let (head, rest) = text.split_once("\nstdout:\n")?;
    let (stdout, stderr) = rest.rsplit_once("\nstderr:\n")?;
    let mut out = vec![head.to_string()];
    let shown = |s: &str| s.trim() != "(empty)" && !s.trim().is_empty();
    if shown(stderr) {
        out.push(format!("stderr:\n{stderr}"));
    }
    if shown(stdout) {
        out.push(format!("stdout:\n{stdout}"));
    }
    Some(out.join("\n"))
}

/// A `submit_plan` call's steps, numbered, each with what it should
/// achieve; none when its arguments are not a plan.
pub(crate) fn plan_lines(arguments: &Value, theme: Theme) -> Vec<Vec<Span<'static>>> {
    let Some(Value::Array(steps)) = arguments.get("steps") else { return Vec::new() };
    let text = |step: &Value, key: &str| {
        step.get(key).and_then(Value::as_str).unwrap_or_default().replace('\n', " ")
    };
    let mut lines = Vec::new();
    for (n, step) in steps.iter().enumerate() {
        lines.push(vec![Span::raw(format!("{}. {}", n + 1, text(step, "description")))]);
        let expected = text(step, "expected_outcome");
        if !expected.is_empty() {
            lines.push(vec![Span::styled(format!("   → {expected}"), theme.dim())]);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Vec<Span<'static>>]) -> Vec<String> {
        lines.iter().map(|l| l.iter().map(|s| s.content.to_string()).collect()).collect()
    }

    #[test]
    fn a_failed_command_shows_its_stderr_first() {
        let output = ToolOutput::error(
            "exit code: 1 (0.0s)\nstdout:\n(empty)\nstderr:\ncargo: no such command: tset",
        );
        assert_eq!(
            text(&output_lines(&output, Theme::PLAIN)),
            ["exit code: 1 (0.0s)", "stderr:", "cargo: no such command: tset"]
        );
        let ok = ToolOutput::text("exit code: 0 (0.0s)\nstdout:\nhi\nstderr:\n(empty)");
        assert_eq!(text(&output_lines(&ok, Theme::PLAIN)).len(), 5, "a success is as it came");
    }
}
