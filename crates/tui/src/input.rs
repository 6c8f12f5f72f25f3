//! The prompt editor: multi-line text with a cursor, and the history of
//! what was sent (Up on the first line, Down on the last).

use unicode_width::UnicodeWidthChar;

#[derive(Debug, Default)]
pub struct Input {
    text: String,
    /// Byte offset, always on a character boundary.
    cursor: usize,
    history: Vec<String>,
    /// Which history entry is shown, while browsing it.
    browsing: Option<usize>,
    /// What was being typed before browsing started.
    draft: String,
}

impl Input {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub fn set(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
        self.browsing = None;
    }

    /// Takes the text to send and remembers it.
    pub fn take(&mut self) -> String {
        let text = std::mem::take(&mut self.text);
        self.cursor = 0;
        self.browsing = None;
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        text
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.browsing = None;
    }

    /// Typed or pasted text; pasted line ends become `\n`.
    pub fn insert(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let text: String =
            text.chars().filter(|c| matches!(c, '\n' | '\t') || !c.is_control()).collect();
        self.text.insert_str(self.cursor, &text);
        self.cursor += text.len();
    }

    pub fn backspace(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
        }
    }

    pub fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    pub fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    pub fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..].find('\n').map_or(self.text.len(), |i| self.cursor + i)
    }

    pub fn home(&mut self) {
        self.cursor = self.line_start();
    }

    pub fn end(&mut self) {
        self.cursor = self.line_end();
    }

    /// Deletes from the start of the line to the cursor (Ctrl-U).
    pub fn kill_to_start(&mut self) {
        let start = self.line_start();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Deletes from the cursor to the end of the line (Ctrl-K).
    pub fn kill_to_end(&mut self) {
        let end = self.line_end();
        self.text.replace_range(self.cursor..end, "");
    }

    /// Deletes the word before the cursor (Ctrl-W).
    pub fn delete_word(&mut self) {
        let before = &self.text[..self.cursor];
        if before.ends_with('\n') {
            self.backspace();
            return;
        }
        let trimmed = before.trim_end_matches([' ', '\t']);
        let start = trimmed.rfind([' ', '\t', '\n']).map_or(0, |i| i + 1);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    pub fn on_first_line(&self) -> bool {
        !self.text[..self.cursor].contains('\n')
    }

    pub fn on_last_line(&self) -> bool {
        !self.text[self.cursor..].contains('\n')
    }

    /// Up: the line above, or the previous entry of the history on the
    /// first line.
    pub fn up(&mut self) {
        if !self.on_first_line() {
            self.vertical(-1);
            return;
        }
        let index = match self.browsing {
            None if self.history.is_empty() => return,
            None => {
                self.draft = self.text.clone();
                self.history.len() - 1
            }
            Some(0) => return,
            Some(i) => i - 1,
        };
        self.browsing = Some(index);
        self.text = self.history[index].clone();
        self.cursor = self.text.len();
    }

    /// Down: the line below, or the next entry of the history (and finally
    /// the draft) on the last line.
    pub fn down(&mut self) {
        if !self.on_last_line() {
            self.vertical(1);
            return;
        }
        let Some(index) = self.browsing else { return };
        if index + 1 < self.history.len() {
            self.browsing = Some(index + 1);
            self.text = self.history[index + 1].clone();
        } else {
            self.browsing = None;
            self.text = std::mem::take(&mut self.draft);
        }
        self.cursor = self.text.len();
    }

    fn vertical(&mut self, direction: i32) {
        let column = self.text[self.line_start()..self.cursor].chars().count();
        let target_start = if direction < 0 {
            let start = self.line_start();
            self.text[..start - 1].rfind('\n').map_or(0, |i| i + 1)
        } else {
            self.line_end() + 1
        };
        let line = &self.text[target_start..];
        let line = &line[..line.find('\n').unwrap_or(line.len())];
        let offset: usize = line.chars().take(column).map(char::len_utf8).sum();
        self.cursor = target_start + offset;
    }

    /// Replaces bytes `range` with `with` and puts the cursor after it.
    pub fn replace(&mut self, range: std::ops::Range<usize>, with: &str) {
        let start = range.start;
        self.text.replace_range(range, with);
        self.cursor = start + with.len();
    }

    /// The text cut into rows of `width` columns, and the cursor's row and
    /// column among them.
    pub fn layout(&self, width: usize) -> (Vec<String>, (usize, usize)) {
        let width = width.max(2);
        let mut rows = vec![String::new()];
        let mut used = 0;
        let mut cursor = (0, 0);
        for (i, c) in self.text.char_indices().chain([(self.text.len(), '\0')]) {
            if i == self.cursor {
                if used >= width {
                    rows.push(String::new());
                    used = 0;
                }
                cursor = (rows.len() - 1, used);
            }
            if c == '\0' && i == self.text.len() {
                break;
            }
            if c == '\n' {
                rows.push(String::new());
                used = 0;
                continue;
            }
            // A tab stays a tab in the text and shows as four spaces.
            let (shown, w) = if c == '\t' { ("    ", 4) } else { ("", c.width().unwrap_or(0)) };
            if used + w > width {
                rows.push(String::new());
                used = 0;
            }
            if let Some(row) = rows.last_mut() {
                if shown.is_empty() {
                    row.push(c);
                } else {
                    row.push_str(shown);
                }
            }
            used += w;
        }
        (rows, cursor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editing_moves_by_characters() {
        let mut input = Input::new();
        input.insert("héllo");
        input.left();
        input.left();
        input.backspace();
        assert_eq!(input.text(), "hélo");
        input.home();
        input.delete();
        assert_eq!(input.text(), "élo");
        input.insert("x y");
        input.delete_word();
        assert_eq!(input.text(), "x élo");
    }

    #[test]
    fn up_and_down_move_lines_then_history() {
        let mut input = Input::new();
        input.insert("first");
        input.take();
        input.insert("line one\nline two");
        input.up();
        assert_eq!(input.cursor(), "line one".len());
        input.up();
        assert_eq!(input.text(), "first");
        input.down();
        assert_eq!(input.text(), "line one\nline two");
    }

    #[test]
    fn pasted_text_keeps_line_breaks_and_drops_controls() {
        let mut input = Input::new();
        input.insert("a\r\nb\x1b[31m");
        assert_eq!(input.text(), "a\nb[31m");
    }

    #[test]
    fn layout_wraps_rows_and_places_the_cursor() {
        let mut input = Input::new();
        input.insert("abcdef\ngh");
        let (rows, cursor) = input.layout(4);
        assert_eq!(rows, ["abcd", "ef", "gh"]);
        assert_eq!(cursor, (2, 2));
        input.set("abcd");
        assert_eq!(input.layout(4).1, (1, 0));
    }
}
