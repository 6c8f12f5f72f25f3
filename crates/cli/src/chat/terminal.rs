//! Taking the terminal over for the UI and giving it back: raw mode, the
//! alternate screen and bracketed paste, restored on every way out
//! (including a panic, through ratatui's hook).

use std::io;

use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{DisableBracketedPaste, EnableBracketedPaste};
use ratatui::crossterm::execute;

pub fn enter() -> io::Result<DefaultTerminal> {
    let terminal = ratatui::try_init()?;
    execute!(io::stdout(), EnableBracketedPaste)?;
    Ok(terminal)
}

/// Gives the terminal back as it was. Failing to is not worth an error:
/// there is nothing left to show it on.
pub fn leave() {
    let _ = execute!(io::stdout(), DisableBracketedPaste);
    ratatui::restore();
}
