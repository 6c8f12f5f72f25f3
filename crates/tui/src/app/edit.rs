//! Keys that edit the input (none of them answers a question): moving,
//! deleting, completing, history, sending with Enter, switching the mode;
//! and the keys that only change the view (expand, scroll).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{Action, App, Mode};
use crate::complete::COMMANDS;

impl App {
    /// Offers `items` (argument, description) as a picker for `command`
    /// ("/resume "): ↑/↓ choose, Enter runs the command with the choice,
    /// Esc closes it. False when there is nothing to pick.
    pub fn pick(&mut self, command: &str, items: Vec<(String, String)>) -> bool {
        self.completion = crate::complete::Completion::pick(&mut self.input, command, items);
        self.completion.is_some()
    }

    pub(super) fn edit(&mut self, key: KeyEvent, ctrl: bool) -> Option<Action> {
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Esc => {
                if self.completion.take().is_some() {
                    return None;
                }
                if self.is_busy() {
                    return Some(Action::Cancel);
                }
                self.scroll = 0;
            }
            KeyCode::BackTab => {
                self.mode = match self.mode {
                    Mode::React => Mode::Plan,
                    Mode::Plan => Mode::React,
                };
            }
            KeyCode::Tab => {
                if let Some(completion) = self.completion.take() {
                    completion.accept(&mut self.input);
                } else {
                    self.refresh_completion();
                }
            }
            KeyCode::Enter if alt || key.modifiers.contains(KeyModifiers::SHIFT) => {
                self.input.insert("\n");
                self.refresh_completion();
            }
            KeyCode::Enter => {
                if let Some(completion) = self.completion.take() {
                    let command = completion.range.start == 0 && self.input.text().starts_with('/');
                    completion.accept(&mut self.input);
                    if completion.runs {
                        return self.submit();
                    }
                    // A command that needs nothing more runs at once.
                    let name = self.input.text().trim();
                    let complete = COMMANDS.iter().any(|(n, arg, _)| {
                        *n == name && !arg.starts_with(|c: char| c.is_ascii_uppercase())
                    });
                    if !(command && complete) {
                        return None;
                    }
                }
                if self.input.text()[..self.input.cursor()].ends_with('\\') {
                    self.input.backspace();
                    self.input.insert("\n");
                    return None;
                }
                return self.submit();
            }
            KeyCode::Char('j') if ctrl => self.input.insert("\n"),
            KeyCode::Char('a') if ctrl => self.input.home(),
            KeyCode::Char('e') if ctrl => self.input.end(),
            KeyCode::Char('u') if ctrl => self.input.kill_to_start(),
            KeyCode::Char('k') if ctrl => self.input.kill_to_end(),
            KeyCode::Char('w') if ctrl => self.input.delete_word(),
            KeyCode::Char('l') if ctrl => self.scroll = 0,
            KeyCode::Char('v') if ctrl => return Some(Action::PasteImage),
            KeyCode::Char(c) if !ctrl => {
                let mut buffer = [0; 4];
                self.input.insert(c.encode_utf8(&mut buffer));
            }
            // With nothing typed, Backspace takes the last image off.
            KeyCode::Backspace if self.input.is_empty() && !self.images.is_empty() => {
                self.images.pop();
            }
            KeyCode::Backspace if alt || ctrl => self.input.delete_word(),
            KeyCode::Backspace => self.input.backspace(),
            KeyCode::Delete => self.input.delete(),
            KeyCode::Left => self.input.left(),
            KeyCode::Right => self.input.right(),
            KeyCode::Home => self.input.home(),
            KeyCode::End => self.input.end(),
            KeyCode::Up => match &mut self.completion {
                Some(completion) => completion.previous(),
                None => self.input.up(),
            },
            KeyCode::Down => match &mut self.completion {
                Some(completion) => completion.next(),
                None => self.input.down(),
            },
            _ => {}
        }
        None
    }

    /// Expands or collapses tool output and reasoning, or scrolls; true
    /// if `key` was one of those.
    pub(super) fn view_key(&mut self, key: KeyEvent, ctrl: bool) -> bool {
        match key.code {
            KeyCode::Char('o') if ctrl => {
                let on = !self.transcript.expand_tools();
                self.transcript.set_expand_tools(on);
            }
            KeyCode::Char('t') if ctrl => {
                let on = !self.transcript.expand_reasoning();
                self.transcript.set_expand_reasoning(on);
            }
            KeyCode::PageUp => {
                let max = self.last_total.saturating_sub(self.page);
                self.scroll = (self.scroll + self.page.max(2) / 2).min(max);
            }
            KeyCode::PageDown => self.scroll = self.scroll.saturating_sub(self.page.max(2) / 2),
            _ => return false,
        }
        true
    }
}
