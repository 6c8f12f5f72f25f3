//! A command that asks first: the front end shows what it would do and
//! carries it out only on a yes (`y` or Enter); `n` or Esc leaves
//! everything as it was. Forms and approvals on screen come first.

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::{Action, App};
use crate::transcript::Level;

/// A command waiting for the user's yes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirm {
    /// The command (name without `/`) and its argument, as typed.
    pub name: String,
    pub argument: String,
    /// Said when the user answers no.
    pub declined: String,
}

impl App {
    /// Shows `question` (what the command would do) and waits for a yes
    /// before `/name argument` is carried out (as [`Action::Confirmed`]).
    pub fn ask_confirm(&mut self, question: impl Into<String>, confirm: Confirm) {
        self.notice(Level::Warning, question);
        self.hint =
            Some(format!("/{}: y or Enter goes ahead · n or Esc does nothing", confirm.name));
        self.scroll = 0;
        self.confirm = Some(confirm);
    }

    /// The answer to a waiting question; `None` when no question waits
    /// (the key is then the input's).
    pub(super) fn confirm_key(&mut self, key: KeyEvent) -> Option<Option<Action>> {
        let confirm = self.confirm.take()?;
        match key.code {
            KeyCode::Char('y' | 'Y') | KeyCode::Enter => {
                self.hint = None;
                Some(Some(Action::Confirmed { name: confirm.name, argument: confirm.argument }))
            }
            KeyCode::Char('n' | 'N') | KeyCode::Esc => {
                self.hint = None;
                self.notice(Level::Info, confirm.declined);
                Some(None)
            }
            _ => {
                self.confirm = Some(confirm);
                Some(None)
            }
        }
    }
}
