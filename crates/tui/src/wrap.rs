//! Word wrapping of styled lines to a column width, done once per entry and
//! width (see `transcript`) so a frame only copies the lines it shows.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Display columns of `text`.
pub fn width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// Wraps `spans` into lines of at most `width` columns, breaking after
/// spaces where it can and inside a word only when a word is longer than a
/// line. `first` starts the first line, `rest` every other one (list
/// markers and their indentation, quote bars); the text gets what is left.
pub fn wrap(
    spans: &[Span<'_>],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let chars: Vec<(char, Style)> = spans
        .iter()
        .flat_map(|span| {
            span.content.chars().map(move |c| (if c == '\t' { ' ' } else { c }, span.style))
        })
        .filter(|(c, _)| !c.is_control())
        .collect();
    let mut lines = Vec::new();
    let mut start = 0;
    loop {
        let prefix = if lines.is_empty() { first } else { rest };
        let room = width.saturating_sub(prefix_width(prefix)).max(1);
        let (end, next) = line_end(&chars[start..], room);
        let mut line: Vec<Span<'static>> = prefix.to_vec();
        line.extend(merge(&chars[start..start + end]));
        lines.push(Line::from(line));
        start += next;
        if start >= chars.len() {
            break;
        }
    }
    lines
}

fn prefix_width(prefix: &[Span<'_>]) -> usize {
    prefix.iter().map(|s| width(&s.content)).sum()
}

/// How many of `chars` fit on a line of `room` columns, and where the next
/// line starts (spaces at a break are dropped).
fn line_end(chars: &[(char, Style)], room: usize) -> (usize, usize) {
    let mut used = 0;
    let mut last_break = None;
    // Spaces before the first word (indentation) are not a place to break.
    let mut seen_word = false;
    for (i, (c, _)) in chars.iter().enumerate() {
        let w = c.width().unwrap_or(0);
        if used + w > room {
            if *c == ' ' {
                let next = skip_spaces(chars, i);
                return (i, next);
            }
            return match last_break {
                Some(end) => (end, skip_spaces(chars, end)),
                // One word longer than the line: cut it (at least one
                // character, so a very narrow area still makes progress).
                None => (i.max(1), i.max(1)),
            };
        }
        used += w;
        if *c == ' ' {
            if seen_word {
                last_break = Some(i);
            }
        } else {
            seen_word = true;
        }
    }
    (chars.len(), chars.len())
}

fn skip_spaces(chars: &[(char, Style)], mut i: usize) -> usize {
    while i < chars.len() && chars[i].0 == ' ' {
        i += 1;
    }
    i
}

/// Runs of characters with one style become one span each.
fn merge(chars: &[(char, Style)]) -> Vec<Span<'static>> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut text = String::new();
    let mut style = None;
    for &(c, s) in chars {
        if style != Some(s) {
            if let Some(style) = style {
                spans.push(Span::styled(std::mem::take(&mut text), style));
            }
            style = Some(s);
        }
        text.push(c);
    }
    if let Some(style) = style {
        spans.push(Span::styled(text, style));
    }
    spans
}

/// Cuts `text` to at most `max` columns, ending with `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    #[test]
    fn breaks_at_spaces_and_cuts_long_words() {
        let lines = wrap(&[Span::raw("the quick brown fox")], 10, &[], &[]);
        assert_eq!(texts(&lines), ["the quick", "brown fox"]);
        let lines = wrap(&[Span::raw("abcdefghijkl")], 5, &[], &[]);
        assert_eq!(texts(&lines), ["abcde", "fghij", "kl"]);
    }

    #[test]
    fn prefixes_take_their_columns() {
        let first = [Span::raw("• ")];
        let rest = [Span::raw("  ")];
        let lines = wrap(&[Span::raw("one two three")], 9, &first, &rest);
        assert_eq!(texts(&lines), ["• one two", "  three"]);
    }

    #[test]
    fn wide_characters_count_twice() {
        let lines = wrap(&[Span::raw("日本語のテキスト")], 6, &[], &[]);
        assert_eq!(texts(&lines), ["日本語", "のテキ", "スト"]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Wrapping never makes a line wider than asked (for widths that
        /// fit one character) and never loses a non-space character.
        #[test]
        fn wrapped_lines_fit_and_keep_every_character(text in "[a-z 日é]{0,80}", width in 2usize..30) {
            let lines = wrap(&[Span::raw(text.clone())], width, &[], &[]);
            for line in &lines {
                prop_assert!(line.width() <= width, "{line:?} wider than {width}");
            }
            let kept: String = texts(&lines).concat().chars().filter(|c| *c != ' ').collect();
            let given: String = text.chars().filter(|c| *c != ' ').collect();
            prop_assert_eq!(kept, given);
        }
    }
}
