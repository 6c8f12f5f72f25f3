//! Completion of slash commands (at the start of the input) and of
//! `@path` mentions of workspace files (anywhere).

use crate::input::Input;

/// A slash command: its name, its argument, what it does.
pub const COMMANDS: &[(&str, &str, &str)] = &[
    ("/help", "", "keys and commands"),
    ("/clear", "", "start a new session"),
    ("/plan", "[GOAL]", "plan first (toggles Plan mode without a goal)"),
    ("/compact", "", "summarise the older turns to free the context window"),
    ("/sessions", "", "pick a session to resume"),
    ("/resume", "ID", "continue a session"),
    ("/rewind", "[N]", "back to before turn N (add files|conversation); lists turns"),
    ("/mcp", "", "MCP servers and their state"),
    ("/ps", "", "background commands and their state"),
    ("/skills", "", "skills and how they reach the model"),
    ("/rules", "", "the numbered rules the model follows"),
    ("/permissions", "", "rules saved by \"always\" (and how to remove one)"),
    ("/model", "[NAME]", "show or switch the model"),
    ("/export", "[FILE]", "write the session as Markdown"),
    ("/quit", "", "leave axon"),
];

/// Candidates for what is being typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The bytes of the input the choice replaces.
    pub range: std::ops::Range<usize>,
    /// (replacement, description)
    pub items: Vec<(String, String)>,
    pub selected: usize,
    /// A picker's list ([`Completion::pick`]): accepting a choice also
    /// runs the command it completes.
    pub runs: bool,
}

const MAX_ITEMS: usize = 8;

impl Completion {
    /// Candidates for the word before the cursor, if it is a command or a
    /// mention.
    pub fn find(input: &Input, files: &[String]) -> Option<Completion> {
        let text = input.text();
        let cursor = input.cursor();
        let before = &text[..cursor];
        let start = before
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8());
        let word = &before[start..];
        let items: Vec<(String, String)> = if start == 0 && word.starts_with('/') {
            COMMANDS
                .iter()
                .filter(|(name, _, _)| name.starts_with(word) && *name != word)
                .map(|(name, arg, help)| {
                    let shown =
                        if arg.is_empty() { help.to_string() } else { format!("{arg}  {help}") };
                    (format!("{name} "), shown)
                })
                .collect()
        } else if let Some(fragment) = word.strip_prefix('@') {
            mentions(fragment, files)
                .into_iter()
                .map(|path| (format!("@{path} "), String::new()))
                .collect()
        } else {
            return None;
        };
        if items.is_empty() {
            return None;
        }
        let end = text[cursor..]
            .char_indices()
            .find(|(_, c)| c.is_whitespace())
            .map_or(text.len(), |(i, _)| cursor + i);
        Some(Completion { range: start..end, items, selected: 0, runs: false })
    }

    /// A picker: `command` (with its trailing space) put into `input`,
    /// and `items` (argument, description) offered for its argument; the
    /// one accepted runs at once. `None` when there is nothing to pick.
    pub fn pick(input: &mut Input, command: &str, items: Vec<(String, String)>) -> Option<Self> {
        if items.is_empty() {
            return None;
        }
        input.clear();
        input.insert(command);
        let at = command.len();
        Some(Completion { range: at..at, items, selected: 0, runs: true })
    }

    pub fn next(&mut self) {
        self.selected = (self.selected + 1) % self.items.len();
    }

    pub fn previous(&mut self) {
        self.selected = (self.selected + self.items.len() - 1) % self.items.len();
    }

    /// Puts the selected candidate into the input.
    pub fn accept(&self, input: &mut Input) {
        // The input may have changed since the candidates were found.
        if input.text().get(self.range.clone()).is_none() {
            return;
        }
        if let Some((replacement, _)) = self.items.get(self.selected) {
            // No second space before text that already follows.
            let spaced = input.text()[self.range.end..].starts_with(char::is_whitespace);
            let replacement = if spaced { replacement.trim_end() } else { replacement };
            input.replace(self.range.clone(), replacement);
        }
    }
}

/// Workspace files matching `fragment`: paths that start with it first,
/// then file names that start with it, then paths that contain it; shorter
/// paths first within each group.
pub fn mentions(fragment: &str, files: &[String]) -> Vec<String> {
    let needle = fragment.to_lowercase();
    let mut ranked: Vec<(u8, usize, &String)> = files
        .iter()
        .filter_map(|path| {
            let lower = path.to_lowercase();
            let name = lower.rsplit('/').next().unwrap_or(&lower);
            let rank = if lower.starts_with(&needle) {
                0
            } else if name.starts_with(&needle) {
                1
            } else if lower.contains(&needle) {
                2
            } else {
                return None;
            };
            Some((rank, path.len(), path))
        })
        .collect();
    ranked.sort();
    ranked.into_iter().take(MAX_ITEMS).map(|(_, _, p)| p.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<String> {
        ["src/main.rs", "src/lib.rs", "README.md", "docs/main-notes.md"].map(String::from).to_vec()
    }

    #[test]
    fn slash_commands_complete_at_the_start_only() {
        let mut input = Input::new();
        input.insert("/re");
        let found = Completion::find(&input, &[]).map(|c| c.items);
        let names: Vec<String> = found.unwrap_or_default().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["/resume ", "/rewind "]);
        input.set("say /re");
        assert_eq!(Completion::find(&input, &[]), None);
    }

    #[test]
    fn mentions_rank_prefixes_before_names_before_substrings() {
        assert_eq!(mentions("main", &files()), ["src/main.rs", "docs/main-notes.md"]);
        assert_eq!(mentions("src/", &files()), ["src/lib.rs", "src/main.rs"]);
        assert_eq!(mentions("ME", &files()), ["README.md"]);
    }

    #[test]
    fn accepting_replaces_the_mention() {
        let mut input = Input::new();
        input.insert("look at @lib please");
        for _ in 0.." please".len() {
            input.left();
        }
        let Some(completion) = Completion::find(&input, &files()) else { panic!("no completion") };
        completion.accept(&mut input);
        assert_eq!(input.text(), "look at @src/lib.rs please");
    }
}
