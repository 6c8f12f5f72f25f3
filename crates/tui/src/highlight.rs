//! Syntax highlighting of code blocks with syntect's bundled grammars.
//!
//! Colours are the terminal's own 16 (a theme built here maps scopes to
//! ANSI colours), so code looks right on light and dark terminals alike and
//! `NO_COLOR` simply skips this module. The grammars take a few tens of
//! milliseconds to load, so they load once, on first use or in the
//! background from [`warm_up`].

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use ratatui::style::{Color, Style};
use ratatui::text::Span;
use syntect::highlighting::{
    Color as SynColor, HighlightState, Highlighter, RangedHighlightIterator, ScopeSelectors,
    StyleModifier, Theme as SynTheme, ThemeItem, ThemeSettings,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// ANSI colour `index` in a syntect colour: alpha 0 marks "palette index in
/// `r`", as no real theme colour is fully transparent.
const fn ansi(index: u8) -> SynColor {
    SynColor { r: index, g: 0, b: 0, a: 0 }
}

/// The terminal's default foreground.
const DEFAULT: SynColor = SynColor { r: 0, g: 0, b: 0, a: 1 };

fn theme() -> &'static SynTheme {
    static THEME: OnceLock<SynTheme> = OnceLock::new();
    THEME.get_or_init(|| {
        let scopes = [
            ("comment, punctuation.definition.comment", 8),
            ("string, punctuation.definition.string", 2),
            ("constant.numeric, constant.language, constant.character", 3),
            ("keyword, storage.modifier, keyword.operator.word", 5),
            ("storage.type, entity.name.type, support.type, support.class", 6),
            ("entity.name.function, support.function, meta.function-call", 4),
            ("entity.name.tag, markup.heading", 1),
            ("variable.other.constant, constant.other", 3),
        ]
        .into_iter()
        .filter_map(|(selector, colour)| {
            Some(ThemeItem {
                scope: ScopeSelectors::from_str(selector).ok()?,
                style: StyleModifier {
                    foreground: Some(ansi(colour)),
                    background: None,
                    font_style: None,
                },
            })
        })
        .collect();
        SynTheme {
            settings: ThemeSettings { foreground: Some(DEFAULT), ..ThemeSettings::default() },
            scopes,
            ..SynTheme::default()
        }
    })
}

/// Loads the grammars on a background thread so the first code block
/// does not wait for them.
pub fn warm_up() {
    std::thread::spawn(|| {
        syntaxes();
        theme();
    });
}

/// The grammar for a fence's language (`rust`, `py`, `sh`…), if known.
fn grammar(lang: &str) -> Option<&'static SyntaxReference> {
    let set = syntaxes();
    let lang = match lang.to_ascii_lowercase().as_str() {
        "ts" | "typescript" | "tsx" | "jsx" | "mjs" => "js".to_string(),
        "shell" | "zsh" | "console" => "sh".to_string(),
        "toml" | "ini" | "cfg" => "ini".to_string(),
        other => other.to_string(),
    };
    set.find_syntax_by_token(&lang)
}

/// Highlighted blocks kept across renders: a resize re-wraps every entry,
/// and highlighting, not wrapping, is what costs.
type Cache = HashMap<u64, Arc<Vec<Vec<Span<'static>>>>>;
const CACHE_BLOCKS: usize = 4_096;

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// `code` as one list of spans per line. Unknown languages, and anything
/// the grammar fails on, come back as plain text in `base`.
pub fn highlight(code: &str, lang: &str, base: Style) -> Arc<Vec<Vec<Span<'static>>>> {
    let mut hasher = std::hash::DefaultHasher::new();
    (code, lang, base).hash(&mut hasher);
    let key = hasher.finish();
    if let Some(found) = cache().lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
        return Arc::clone(found);
    }
    let lines = Arc::new(highlight_uncached(code, lang, base));
    let mut cache = cache().lock().unwrap_or_else(PoisonError::into_inner);
    if cache.len() >= CACHE_BLOCKS {
        // Mostly the partial blocks of replies that streamed: start over.
        cache.clear();
    }
    cache.insert(key, Arc::clone(&lines));
    lines
}

fn highlight_uncached(code: &str, lang: &str, base: Style) -> Vec<Vec<Span<'static>>> {
    let plain = || code.lines().map(|l| vec![Span::styled(l.to_string(), base)]).collect();
    let Some(syntax) = grammar(lang) else { return plain() };
    let set = syntaxes();
    let highlighter = Highlighter::new(theme());
    let mut parse = ParseState::new(syntax);
    let mut state = HighlightState::new(&highlighter, ScopeStack::new());
    let mut out = Vec::new();
    for line in code.split_inclusive('\n') {
        let Ok(ops) = parse.parse_line(line, set) else { return plain() };
        let spans = RangedHighlightIterator::new(&mut state, &ops, line, &highlighter)
            .filter_map(|(style, text, _)| {
                let text = text.trim_end_matches(['\n', '\r']);
                (!text.is_empty())
                    .then(|| Span::styled(text.to_string(), base.patch(to_style(style.foreground))))
            })
            .collect();
        out.push(spans);
    }
    out
}

fn to_style(colour: SynColor) -> Style {
    if colour.a != 0 {
        return Style::new();
    }
    let colour = match colour.r {
        1 => Color::Red,
        2 => Color::Green,
        3 => Color::Yellow,
        4 => Color::Blue,
        5 => Color::Magenta,
        6 => Color::Cyan,
        8 => Color::DarkGray,
        n => Color::Indexed(n),
    };
    Style::new().fg(colour)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_strings_and_comments_get_colours() {
        let lines =
            highlight("fn main() {\n    let s = \"hi\"; // note\n}\n", "rust", Style::new());
        assert_eq!(lines.len(), 3);
        let find = |text: &str| {
            lines.iter().flatten().find(|s| s.content.contains(text)).map(|s| s.style.fg)
        };
        assert_eq!(find("main"), Some(Some(Color::Blue)));
        assert_eq!(find("hi"), Some(Some(Color::Green)));
        assert_eq!(find("note"), Some(Some(Color::DarkGray)));
    }

    #[test]
    fn unknown_languages_stay_plain() {
        let lines = highlight("a b\nc", "no-such-language", Style::new());
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().flatten().all(|s| s.style.fg.is_none()));
    }
}
