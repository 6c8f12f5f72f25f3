//! Here-document bodies: skipped as data, read line by line after the line
//! that opened them.
//!
//! Guarantees: a body ends at its delimiter line (tabs stripped for `<<-`)
//! or, as bash reads it, at the end of the input. A quoted delimiter makes
//! the body pure data; an unquoted one has its expansions scanned like a
//! word's (`$(...)` commands become parts, arithmetic and `${...}` are
//! judged), since bash performs them.

use super::{Scanner, Stop};

impl Scanner<'_> {
    /// Skips the bodies of the here-documents opened on the line just ended.
    pub(super) fn read_heredocs(&mut self) {
        for doc in std::mem::take(&mut self.heredocs) {
            while self.pos < self.chars.len() {
                let end = self.chars[self.pos..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |at| self.pos + at);
                let line: String = self.chars[self.pos..end].iter().collect();
                let candidate =
                    if doc.strip_tabs { line.trim_start_matches('\t') } else { line.as_str() };
                if candidate == doc.delimiter {
                    self.pos = end;
                    self.advance(1);
                    break;
                }
                if doc.expands {
                    self.heredoc_line();
                } else {
                    self.pos = end;
                }
                self.advance(1);
            }
        }
    }

    /// Scans one line of an expanding here-document body for expansions.
    fn heredoc_line(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                '\n' => return,
                '\\' => self.advance(2),
                '$' => self.dollar(&mut String::new()),
                '`' => {
                    self.advance(1);
                    self.substitution(Stop::Backtick, &mut String::new());
                }
                _ => self.advance(1),
            }
        }
    }
}
