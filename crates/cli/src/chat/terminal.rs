//! Taking the terminal over for the UI and giving it back: raw mode, the
//! alternate screen, bracketed paste and focus reports, restored on every way out
//! (including a panic, through ratatui's hook).

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, EnableBracketedPaste, EnableFocusChange,
};
use ratatui::crossterm::execute;

/// Whether the UI holds the terminal now (a signal may end axon mid-UI).
static ENTERED: AtomicBool = AtomicBool::new(false);

pub fn enter() -> io::Result<DefaultTerminal> {
    let terminal = ratatui::try_init()?;
    ENTERED.store(true, Ordering::SeqCst);
    // Focus reports tell the notifier whether the user is looking.
    execute!(io::stdout(), EnableBracketedPaste, EnableFocusChange)?;
    Ok(terminal)
}

/// Gives the terminal back as it was. Failing to is not worth an error:
/// there is nothing left to show it on.
pub fn leave() {
    ENTERED.store(false, Ordering::SeqCst);
    let _ = execute!(io::stdout(), DisableBracketedPaste, DisableFocusChange);
    ratatui::restore();
}

/// [`leave`], if the UI holds the terminal; for a signal that ends axon.
pub fn leave_if_entered() {
    if ENTERED.load(Ordering::SeqCst) {
        leave();
    }
}
