//! The conversation as the user sees it: entries in order, each rendered
//! to wrapped lines once per width and kept until it changes, so a frame
//! costs the lines it shows, not the length of the session.

use axon_protocol::{ContentPart, Message};

use ratatui::text::{Line, Span};

use crate::card::ToolCard;
use crate::markdown;
use crate::theme::Theme;
use crate::wrap::wrap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

impl From<axon_protocol::Level> for Level {
    fn from(level: axon_protocol::Level) -> Self {
        match level {
            axon_protocol::Level::Info => Level::Info,
            axon_protocol::Level::Warning => Level::Warning,
            axon_protocol::Level::Error => Level::Error,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    User(String),
    /// The model's reply (Markdown); `streaming` while it comes in.
    Assistant {
        text: String,
        streaming: bool,
    },
    Reasoning {
        text: String,
        streaming: bool,
    },
    Tool(ToolCard),
    Notice {
        level: Level,
        text: String,
    },
}

#[derive(Debug)]
struct Item {
    entry: Entry,
    /// Lines at a width; `None` when the entry changed since.
    cache: Option<(usize, Vec<Line<'static>>)>,
}

#[derive(Debug)]
pub struct Transcript {
    items: Vec<Item>,
    theme: Theme,
    expand_tools: bool,
    expand_reasoning: bool,
    /// Advances while something runs; drives the spinners.
    pub tick: u64,
}

impl Transcript {
    pub fn new(theme: Theme) -> Self {
        Transcript {
            items: Vec::new(),
            theme,
            expand_tools: false,
            expand_reasoning: false,
            tick: 0,
        }
    }

    pub fn push(&mut self, entry: Entry) {
        self.items.push(Item { entry, cache: None });
    }

    pub fn entries(&self) -> impl DoubleEndedIterator<Item = &Entry> {
        self.items.iter().map(|i| &i.entry)
    }

    pub fn last(&self) -> Option<&Entry> {
        self.items.last().map(|i| &i.entry)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The last entry, to change it (its lines are drawn again).
    pub fn last_mut(&mut self) -> Option<&mut Entry> {
        let item = self.items.last_mut()?;
        item.cache = None;
        Some(&mut item.entry)
    }

    /// The last entry, to change it, if it is one `which` accepts.
    pub fn last_mut_if(&mut self, which: impl Fn(&Entry) -> bool) -> Option<&mut Entry> {
        if !self.last().is_some_and(which) {
            return None;
        }
        self.last_mut()
    }

    pub fn card_mut(&mut self, call_id: &str) -> Option<&mut ToolCard> {
        let item = self
            .items
            .iter_mut()
            .rev()
            .find(|i| matches!(&i.entry, Entry::Tool(card) if card.call.id == call_id))?;
        item.cache = None;
        match &mut item.entry {
            Entry::Tool(card) => Some(card),
            _ => None,
        }
    }

    /// Ends every card still running with `output` (a cancelled turn's,
    /// or a resumed session's calls without a result).
    pub fn stop_running(&mut self, output: &axon_protocol::ToolOutput) {
        for item in &mut self.items {
            if let Entry::Tool(card) = &mut item.entry
                && (card.is_running() || card.awaiting_approval)
            {
                card.state = crate::card::CardState::Done(output.clone());
                card.awaiting_approval = false;
                item.cache = None;
            }
        }
    }

    /// Removes entries from `index` on.
    pub fn truncate(&mut self, index: usize) {
        self.items.truncate(index);
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }

    pub fn expand_tools(&self) -> bool {
        self.expand_tools
    }

    pub fn set_expand_tools(&mut self, on: bool) {
        self.expand_tools = on;
        self.invalidate(|e| matches!(e, Entry::Tool(_)));
    }

    pub fn expand_reasoning(&self) -> bool {
        self.expand_reasoning
    }

    pub fn set_expand_reasoning(&mut self, on: bool) {
        self.expand_reasoning = on;
        self.invalidate(|e| matches!(e, Entry::Reasoning { .. }));
    }

    fn invalidate(&mut self, which: impl Fn(&Entry) -> bool) {
        for item in &mut self.items {
            if which(&item.entry) {
                item.cache = None;
            }
        }
    }

    /// Renders what changed since the last call; afterwards every entry
    /// has lines for `width`.
    fn refresh(&mut self, width: usize) {
        let (theme, tools, reasoning, tick) =
            (self.theme, self.expand_tools, self.expand_reasoning, self.tick);
        for item in &mut self.items {
            // Spinners move, so running cards are drawn every time.
            let live = matches!(&item.entry, Entry::Tool(card) if card.is_running());
            if live || item.cache.as_ref().is_none_or(|(w, _)| *w != width) {
                let lines = render(&item.entry, width, theme, tools, reasoning, tick);
                item.cache = Some((width, lines));
            }
        }
    }

    /// Lines of the whole transcript at `width`.
    pub fn line_count(&mut self, width: usize) -> usize {
        self.refresh(width);
        self.items.iter().map(|i| i.cache.as_ref().map_or(0, |(_, l)| l.len())).sum()
    }

    /// The `height` lines that end `scroll` lines above the bottom.
    pub fn visible(&mut self, width: usize, height: usize, scroll: usize) -> Vec<Line<'static>> {
        self.refresh(width);
        let mut skip_from_end = scroll;
        let mut shown: Vec<Line<'static>> = Vec::with_capacity(height);
        for item in self.items.iter().rev() {
            let Some((_, lines)) = &item.cache else { continue };
            let mut end = lines.len();
            if skip_from_end >= end {
                skip_from_end -= end;
                continue;
            }
            end -= skip_from_end;
            skip_from_end = 0;
            let start = end.saturating_sub(height - shown.len());
            shown.extend(lines[start..end].iter().rev().cloned());
            if shown.len() == height {
                break;
            }
        }
        shown.reverse();
        shown
    }
}

fn render(
    entry: &Entry,
    width: usize,
    theme: Theme,
    expand_tools: bool,
    expand_reasoning: bool,
    tick: u64,
) -> Vec<Line<'static>> {
    let mut lines = match entry {
        Entry::User(text) => {
            let first = [Span::styled("› ", theme.user())];
            let rest = [Span::raw("  ")];
            let mut lines = Vec::new();
            for (n, line) in text.lines().enumerate() {
                let head: &[Span<'static>] = if n == 0 { &first } else { &rest };
                lines.extend(wrap(
                    &[Span::styled(line.to_string(), theme.bold())],
                    width,
                    head,
                    &rest,
                ));
            }
            lines
        }
        Entry::Assistant { text, .. } => markdown::render(text, width, theme),
        Entry::Reasoning { text, streaming } => {
            reasoning(text, *streaming, width, theme, expand_reasoning)
        }
        Entry::Tool(card) => card.render(width, theme, expand_tools, tick),
        Entry::Notice { level, text } => {
            let (mark, style) = match level {
                Level::Info => ("· ", theme.dim()),
                Level::Warning => ("⚠ ", theme.warning()),
                Level::Error => ("✗ ", theme.error()),
            };
            let first = [Span::styled(mark, style)];
            let rest = [Span::raw("  ")];
            let body = if *level == Level::Info { ratatui::style::Style::new() } else { style };
            let mut lines = Vec::new();
            for (n, line) in text.lines().enumerate() {
                let head: &[Span<'static>] = if n == 0 { &first } else { &rest };
                lines.extend(wrap(&[Span::styled(line.to_string(), body)], width, head, &rest));
            }
            lines
        }
    };
    lines.push(Line::default());
    lines
}

/// Collapsed: one dim line with the latest thought. Expanded: all of it.
fn reasoning(
    text: &str,
    streaming: bool,
    width: usize,
    theme: Theme,
    expanded: bool,
) -> Vec<Line<'static>> {
    let style = theme.reasoning();
    let label = if streaming { "Thinking…" } else { "Thought" };
    if !expanded {
        let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        let count = text.lines().filter(|l| !l.trim().is_empty()).count();
        let head = format!("▸ {label} ({count} lines, Ctrl-T shows) ");
        let room = width.saturating_sub(crate::wrap::width(&head));
        return vec![Line::from(vec![
            Span::styled(head, style),
            Span::styled(crate::wrap::truncate(last, room), style),
        ])];
    }
    let mut lines = vec![Line::from(Span::styled(format!("▾ {label}"), style))];
    let indent = [Span::raw("  ")];
    for line in text.lines() {
        lines.extend(wrap(&[Span::styled(line.to_string(), style)], width, &indent, &indent));
    }
    lines
}

/// A replayed user message as the user sent it: the text typed, then the
/// names of what went with it (the runtime's replay keeps only those).
pub(crate) fn user_text(message: &Message) -> String {
    let mut typed = String::new();
    let mut names = Vec::new();
    for part in &message.content {
        match part {
            ContentPart::Text { text } => match axon_protocol::attachment::name_of(text) {
                Some(name) => names.push(name),
                None => typed.push_str(text),
            },
            ContentPart::Image { media_type, .. } | ContentPart::Audio { media_type, .. } => {
                names.push(media_type.clone())
            }
            ContentPart::Thinking { .. } => {}
        }
    }
    if !names.is_empty() {
        typed.push_str(&format!("\n📎 {}", names.join(", ")));
    }
    typed
}

#[cfg(test)]
mod replay_tests {
    use super::*;

    #[test]
    fn a_replayed_request_shows_its_attachments_by_name() {
        let mut message = Message::user("look at this");
        message.content.push(ContentPart::text(axon_protocol::attachment::quote("a.txt", "")));
        message
            .content
            .push(ContentPart::Image { media_type: "image/png".into(), data: "".into() });
        assert_eq!(user_text(&message), "look at this\n📎 a.txt, image/png");
    }
}
