//! The UI's lines as ANSI text, for a terminal that is not a full-screen
//! UI (`axon run` at a terminal): the same Markdown rendering as the
//! transcript's, written with SGR escapes.
//!
//! Guarantees: a styled span is reset (`ESC[0m`) right after its text, so
//! no style leaks into the next span or line; a span without style is
//! written as bare text, so the plain theme (`NO_COLOR`) writes colour
//! escapes for nothing, only bold, dim, italic and the like.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use crate::markdown::render;
use crate::theme::Theme;

/// `text` (Markdown) as terminal text of at most `width` columns a line,
/// each line ended by `\n`.
pub fn markdown(text: &str, width: usize, theme: Theme) -> String {
    lines(&render(text, width, theme))
}

/// `lines` as terminal text, each ended by `\n`.
pub fn lines(lines: &[Line<'_>]) -> String {
    let mut out = String::new();
    for line in lines {
        for span in &line.spans {
            let codes = sgr(line.style.patch(span.style));
            if codes.is_empty() {
                out.push_str(&span.content);
            } else {
                out.push_str(&format!("\x1b[{codes}m{}\x1b[0m", span.content));
            }
        }
        out.push('\n');
    }
    out
}

/// The SGR parameters of `style` ("1;36"), empty for none.
fn sgr(style: Style) -> String {
    let mut codes: Vec<String> = Vec::new();
    let modifiers = style.add_modifier - style.sub_modifier;
    for (modifier, code) in [
        (Modifier::BOLD, "1"),
        (Modifier::DIM, "2"),
        (Modifier::ITALIC, "3"),
        (Modifier::UNDERLINED, "4"),
        (Modifier::REVERSED, "7"),
        (Modifier::CROSSED_OUT, "9"),
    ] {
        if modifiers.contains(modifier) {
            codes.push(code.to_string());
        }
    }
    if let Some(code) = style.fg.and_then(|c| colour(c, 30)) {
        codes.push(code);
    }
    if let Some(code) = style.bg.and_then(|c| colour(c, 40)) {
        codes.push(code);
    }
    codes.join(";")
}

/// A colour's SGR parameter: `base` 30 for the foreground, 40 for the
/// background.
fn colour(color: Color, base: u8) -> Option<String> {
    let basic = |n: u8| Some((base + n).to_string());
    let bright = |n: u8| Some((base + 60 + n).to_string());
    match color {
        Color::Reset => None,
        Color::Black => basic(0),
        Color::Red => basic(1),
        Color::Green => basic(2),
        Color::Yellow => basic(3),
        Color::Blue => basic(4),
        Color::Magenta => basic(5),
        Color::Cyan => basic(6),
        Color::Gray => basic(7),
        Color::DarkGray => bright(0),
        Color::LightRed => bright(1),
        Color::LightGreen => bright(2),
        Color::LightYellow => bright(3),
        Color::LightBlue => bright(4),
        Color::LightMagenta => bright(5),
        Color::LightCyan => bright(6),
        Color::White => bright(7),
        Color::Indexed(n) => Some(format!("{};5;{n}", base + 8)),
        Color::Rgb(r, g, b) => Some(format!("{};2;{r};{g};{b}", base + 8)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_styled_terminal_text_without_its_markup() {
        let text =
            markdown("# Title\n\nSome **bold** and `code`.\n\n- one\n- two\n", 40, Theme::COLOR);
        assert!(!text.contains("**") && !text.contains("# "), "{text:?}");
        assert!(text.contains("\x1b[1;"), "the heading is bold: {text:?}");
        assert!(text.contains("\x1b[1mbold\x1b[0m"), "{text:?}");
        assert!(text.contains("one\n") && text.contains("two\n"), "{text:?}");
        assert!(text.ends_with('\n'));
        // Every style is reset before its line ends.
        for line in text.lines().filter(|l| l.contains('\x1b')) {
            let after_last_reset = line.rsplit("\x1b[0m").next().unwrap_or("");
            assert!(!after_last_reset.contains('\x1b'), "{line:?}");
        }
    }

    #[test]
    fn the_plain_theme_writes_no_colour() {
        let text = markdown("# Title\n\n```rust\nfn main() {}\n```\n", 40, Theme::PLAIN);
        for escape in text.split('\x1b').skip(1) {
            let params = escape.trim_start_matches('[').split('m').next().unwrap_or("");
            for param in params.split(';').filter_map(|p| p.parse::<u32>().ok()) {
                assert!(!(30..=49).contains(&param) && param < 90, "colour {param} in {text:?}");
            }
        }
        assert!(text.contains("fn main() {}"), "{text:?}");
    }
}
