//! Markdown to terminal lines: headings, emphasis, lists, quotes, links,
//! rules and highlighted code blocks, wrapped to a width.
//!
//! A reply is rendered again as it streams; an unfinished code fence is
//! simply a code block that runs to the end, so half a reply looks like
//! the start of the whole one.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::highlight::highlight;
use crate::theme::Theme;
use crate::wrap::{width as text_width, wrap};

/// `text` as lines of at most `width` columns.
pub fn render(text: &str, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut writer = Writer::new(width, theme);
    let options = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(text, options) {
        writer.event(event);
    }
    writer.flush();
    while writer.lines.last().is_some_and(|l| l.width() == 0) {
        writer.lines.pop();
    }
    writer.lines
}

struct Writer {
    width: usize,
    theme: Theme,
    lines: Vec<Line<'static>>,
    current: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// One per open list: the next number, or `None` for bullets.
    lists: Vec<Option<u64>>,
    /// The marker of a list item whose first line is not written yet.
    marker: Option<String>,
    quotes: usize,
    /// Inside a code block: its language and text so far.
    code: Option<(String, String)>,
    link: Option<String>,
}

impl Writer {
    fn new(width: usize, theme: Theme) -> Self {
        Writer {
            width: width.max(8),
            theme,
            lines: Vec::new(),
            current: Vec::new(),
            styles: vec![Style::new()],
            lists: Vec::new(),
            marker: None,
            quotes: 0,
            code: None,
            link: None,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, patch: Style) {
        let style = self.style().patch(patch);
        self.styles.push(style);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    /// A blank line between blocks, never two, never first.
    fn gap(&mut self) {
        if self.lists.is_empty() && self.lines.last().is_some_and(|l| l.width() > 0) {
            self.lines.push(Line::default());
        }
    }

    /// The prefixes of the current block's first and following lines.
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        for _ in 0..self.quotes {
            first.push(Span::styled("│ ", self.theme.dim()));
        }
        let mut rest = first.clone();
        if !self.lists.is_empty() {
            let indent = "  ".repeat(self.lists.len() - 1);
            let marker = self.marker.take().unwrap_or_default();
            let pad = " ".repeat(text_width(&marker));
            if marker.is_empty() {
                // A later paragraph of the same item lines up with its text.
                let item = format!("{indent}  ");
                first.push(Span::raw(item.clone()));
                rest.push(Span::raw(item));
            } else {
                first.push(Span::raw(indent.clone()));
                first.push(Span::styled(marker, self.theme.accent()));
                rest.push(Span::raw(format!("{indent}{pad}")));
            }
        }
        (first, rest)
    }

    fn flush(&mut self) {
        if self.current.is_empty() && self.marker.is_none() {
            return;
        }
        let spans = std::mem::take(&mut self.current);
        let (first, rest) = self.prefixes();
        self.lines.extend(wrap(&spans, self.width, &first, &rest));
    }

    fn text(&mut self, text: &str) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        let style = self.style();
        self.current.push(Span::styled(text.to_string(), style));
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(code) => {
                let style = self.style().patch(self.theme.inline_code());
                self.current.push(Span::styled(code.to_string(), style));
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.flush();
                self.gap();
                let rule = "─".repeat(self.width.min(40));
                self.lines.push(Line::from(Span::styled(rule, self.theme.dim())));
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.current.push(Span::styled(mark, self.theme.accent()));
            }
            Event::Html(html) | Event::InlineHtml(html) => self.text(&html),
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]")),
            Event::InlineMath(m) | Event::DisplayMath(m) => self.text(&m),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.gap(),
            Tag::Heading { level, .. } => {
                self.gap();
                let mut style = self.theme.heading();
                if level == HeadingLevel::H1 {
                    style = style.add_modifier(Modifier::UNDERLINED);
                }
                self.push_style(style);
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.gap();
                self.quotes += 1;
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                self.gap();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split([' ', ',', '{']).next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.gap();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    _ => "• ".to_string(),
                };
                self.marker = Some(marker);
            }
            Tag::Emphasis => self.push_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.link = Some(dest_url.to_string());
                self.push_style(self.theme.accent().add_modifier(Modifier::UNDERLINED));
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.flush(),
            TagEnd::Heading(_) => {
                self.flush();
                self.pop_style();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quotes = self.quotes.saturating_sub(1);
            }
            TagEnd::CodeBlock => self.code_block(),
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.lines.push(Line::default());
                }
            }
            TagEnd::Item => self.flush(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                if let Some(url) = self.link.take() {
                    let shown: String =
                        self.current.iter().map(|s| s.content.as_ref()).collect::<String>();
                    if !shown.ends_with(url.as_str()) {
                        self.current.push(Span::styled(format!(" ({url})"), self.theme.dim()));
                    }
                }
            }
            _ => {}
        }
    }

    /// Code keeps its line breaks and indentation; lines too long for the
    /// width continue on the next line rather than being cut.
    fn code_block(&mut self) {
        let Some((lang, code)) = self.code.take() else { return };
        let (mut first, _) = self.prefixes();
        first.push(Span::raw("  "));
        let base = Style::new();
        let lines = if self.theme.color {
            highlight(&code, &lang, base)
        } else {
            std::sync::Arc::new(code.lines().map(|l| vec![Span::raw(l.to_string())]).collect())
        };
        for spans in lines.iter() {
            let spans: Vec<Span<'static>> = spans
                .iter()
                .map(|s| Span::styled(s.content.replace('\t', "    "), s.style))
                .collect();
            self.lines.extend(crate::wrap::wrap(&spans, self.width, &first, &first));
        }
        self.lines.push(Line::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str, width: usize) -> Vec<String> {
        render(text, width, Theme::PLAIN)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn blocks_are_separated_and_lists_indented() {
        let text = "# Title\n\nSome *text* here.\n\n- one\n- two\n  1. inner\n\n```rust\nfn x() {}\n```\n\n> quoted";
        assert_eq!(
            texts(text, 40),
            [
                "Title",
                "",
                "Some text here.",
                "",
                "• one",
                "• two",
                "  1. inner",
                "",
                "  fn x() {}",
                "",
                "│ quoted"
            ]
        );
    }

    #[test]
    fn list_items_wrap_under_their_text() {
        assert_eq!(texts("- alpha beta gamma delta", 14), ["• alpha beta", "  gamma delta"]);
    }

    #[test]
    fn an_unclosed_fence_is_a_code_block_so_far() {
        assert_eq!(texts("Look:\n\n```py\nprint(1)\n", 40), ["Look:", "", "  print(1)"]);
    }

    #[test]
    fn links_show_their_address() {
        assert_eq!(texts("see [docs](https://x.dev)", 60), ["see docs (https://x.dev)"]);
    }
}
