//! Styles, with and without colour. `NO_COLOR` (set and not empty) keeps
//! bold, dim, italic and reverse, and drops every colour.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    pub const COLOR: Theme = Theme { color: true };
    pub const PLAIN: Theme = Theme { color: false };

    /// Colour unless `NO_COLOR` says otherwise (<https://no-color.org>).
    pub fn from_env() -> Self {
        let off = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme { color: !off }
    }

    pub fn fg(self, color: Color) -> Style {
        if self.color { Style::new().fg(color) } else { Style::new() }
    }

    pub fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }

    pub fn bold(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn user(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    pub fn accent(self) -> Style {
        self.fg(Color::Cyan)
    }

    pub fn ok(self) -> Style {
        self.fg(Color::Green)
    }

    pub fn error(self) -> Style {
        self.fg(Color::Red)
    }

    pub fn warning(self) -> Style {
        self.fg(Color::Yellow)
    }

    pub fn heading(self) -> Style {
        self.fg(Color::Magenta).add_modifier(Modifier::BOLD)
    }

    pub fn inline_code(self) -> Style {
        self.fg(Color::Yellow)
    }

    pub fn added(self) -> Style {
        self.fg(Color::Green)
    }

    pub fn removed(self) -> Style {
        self.fg(Color::Red)
    }

    pub fn reasoning(self) -> Style {
        self.dim().add_modifier(Modifier::ITALIC)
    }

    /// What asks the user for an answer now.
    pub fn prompt(self) -> Style {
        if self.color {
            Style::new().fg(Color::Black).bg(Color::Yellow).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }

    pub fn selected(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }
}
