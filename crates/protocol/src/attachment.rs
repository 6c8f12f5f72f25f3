//! How an attachment travels inside a user message: one text part per
//! attached file or text, `"\n<attachment name=NAME>\nBODY\n</attachment>"`
//! with NAME written as a Rust string literal. The runtime writes it
//! ([`quote`]); every front end that replays a conversation reads the name
//! back with [`name_of`] and shows the name, never the quoted body.

/// An attachment as the model sees it.
pub fn quote(name: &str, body: &str) -> String {
    format!("\n<attachment name={name:?}>\n{body}\n</attachment>")
}

/// The name of the attachment `part` quotes when the text part is exactly
/// one [`quote`]; `None` for any other text (the user's own).
pub fn name_of(part: &str) -> Option<String> {
    let rest = part.strip_prefix("\n<attachment name=\"")?;
    if !part.ends_with("\n</attachment>") {
        return None;
    }
    let mut name = String::new();
    let mut chars = rest.char_indices();
    while let Some((_, c)) = chars.next() {
        match c {
            '"' => {
                let (at, _) = chars.next()?;
                return rest[at..].starts_with(">\n").then_some(name);
            }
            '\\' => match chars.next()?.1 {
                'n' => name.push('\n'),
                'r' => name.push('\r'),
                't' => name.push('\t'),
                '0' => name.push('\0'),
                'u' => {
                    let hex: String = chars
                        .by_ref()
                        .map(|(_, c)| c)
                        .skip_while(|c| *c == '{')
                        .take_while(|c| *c != '}')
                        .collect();
                    name.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                other => name.push(other),
            },
            c => name.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_name_reads_back_whatever_it_holds() {
        for name in ["a.txt", "src/my \"odd\" file.rs", "tab\there", "é\u{7}\\x", ""] {
            assert_eq!(name_of(&quote(name, "body\n</attachment> inside")).as_deref(), Some(name));
        }
        assert_eq!(name_of("what is in a.txt?"), None);
        assert_eq!(name_of("\n<attachment name=\"a\">\nno end"), None);
    }
}
