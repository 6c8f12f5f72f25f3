//! Text helpers shared by the tools: binary detection and output limits.

/// How many leading bytes are checked for a NUL, as git and ripgrep do.
pub(crate) const BINARY_SNIFF_BYTES: usize = 8192;

/// A file whose first bytes contain a NUL is treated as binary.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

/// Cuts `line` to at most `max_chars` characters, saying how much was cut.
pub(crate) fn clip_line(line: &str, max_chars: usize) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(max_chars) {
        None => line.into(),
        Some((cut, _)) => {
            let rest = line[cut..].chars().count();
            format!("{}… [{rest} more characters]", &line[..cut]).into()
        }
    }
}

/// Splits text into lines the way editors number them: on `\n`, with a
/// trailing `\r` removed, and no phantom empty line after a final newline.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = &str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let empty = text.is_empty();
    body.split('\n').filter(move |_| !empty).map(|l| l.strip_suffix('\r').unwrap_or(l))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_match_editor_numbering() {
        assert_eq!(lines("").count(), 0);
        assert_eq!(lines("a").collect::<Vec<_>>(), ["a"]);
        assert_eq!(lines("a\n").collect::<Vec<_>>(), ["a"]);
        assert_eq!(lines("a\r\nb\r\n").collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(lines("\n\n").collect::<Vec<_>>(), ["", ""]);
    }

    #[test]
    fn clip_counts_characters_not_bytes() {
        assert_eq!(clip_line("héllo", 10), "héllo");
        assert_eq!(clip_line("héllo", 2), "hé… [3 more characters]");
    }
}
