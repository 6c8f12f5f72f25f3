//! Skills: reusable know-how in the `SKILL.md` format other agents share,
//! as the system prompt and `load_skill` use them.
//!
//! A skill file is optional YAML front matter (`name` and `description`,
//! block scalars and continued lines included), then the instructions.
//! Pure: the runtime finds and reads skill folders and clones skill
//! repositories (`axon_runtime::skill_files`); [`parse_skill`] makes a
//! [`Skill`] of a file's text.

/// Longest `name` and `description` the format allows.
pub const MAX_NAME: usize = 64;
pub const MAX_DESCRIPTION: usize = 1024;

/// One skill as the prompt carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The instructions (the content file without its front matter).
    pub content: String,
    /// Where it came from: a folder, or a repository URL.
    pub source: String,
}

/// A skill file: optional front matter, then the instructions.
pub fn parse_skill(text: &str, fallback_name: &str) -> Result<Skill, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (mut name, mut description, body) = (None, None, text);
    let body = match text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) {
        Some(rest) => {
            let end = rest.find("\n---").ok_or("its front matter has no closing ---")?;
            for (key, value) in front_matter(&rest[..end]) {
                match key {
                    "name" => name = Some(value),
                    "description" => description = Some(value),
                    _ => {}
                }
            }
            rest[end + 4..].trim_start_matches(['-', '\r', '\n'])
        }
        None => body,
    };
    let name = name.filter(|n| !n.is_empty()).unwrap_or_else(|| fallback_name.to_string());
    if name.chars().count() > MAX_NAME {
        return Err(format!("its name is longer than {MAX_NAME} characters"));
    }
    let description = description.unwrap_or_else(|| {
        body.lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .unwrap_or("")
            .chars()
            .take(200)
            .collect()
    });
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(format!("its description is longer than {MAX_DESCRIPTION} characters"));
    }
    let content = body.trim().to_string();
    if content.is_empty() {
        return Err("it has no instructions".to_string());
    }
    Ok(Skill { name, description, content, source: String::new() })
}

/// The front matter's top-level `key: value` pairs, as YAML reads the
/// simple forms skills use (Claude Code's included): a value on its line
/// (quotes removed), a plain value continued on indented lines, or a
/// block scalar (`>` folded into one line, `|` kept as lines; `-`/`+`
/// chomping accepted).
fn front_matter(text: &str) -> Vec<(&str, String)> {
    let mut pairs: Vec<(&str, String)> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with([' ', '\t']) || line.trim_start().starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        let mut more = Vec::new();
        while let Some(next) = lines.peek() {
            if next.starts_with([' ', '\t']) || next.trim().is_empty() {
                more.push(next.trim());
                lines.next();
            } else {
                break;
            }
        }
        while more.last().is_some_and(|l| l.is_empty()) {
            more.pop();
        }
        let value = match value.chars().next() {
            Some('|') if value.len() <= 2 => more.join("\n"),
            Some('>') if value.len() <= 2 => fold(&more),
            _ => {
                let first = value.trim_matches(['"', '\'']);
                let mut all = vec![first];
                all.extend(more);
                fold(&all)
            }
        };
        pairs.push((key.trim(), value));
    }
    pairs
}

/// Lines folded as YAML folds them: joined by spaces, a blank line kept
/// as a line break.
fn fold(lines: &[&str]) -> String {
    let mut out = String::new();
    for line in lines {
        if line.is_empty() {
            out.push('\n');
        } else {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push(' ');
            }
            out.push_str(line);
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_names_and_describes_the_skill() {
        let skill = parse_skill(
            "---\nname: pdf\ndescription: \"Fill PDF forms\"\n---\n# PDF\nUse pdftk.\n",
            "x",
        )
        .unwrap();
        assert_eq!((skill.name.as_str(), skill.description.as_str()), ("pdf", "Fill PDF forms"));
        assert_eq!(skill.content, "# PDF\nUse pdftk.");
        let plain = parse_skill("# Title\n\nFirst line says what.\nMore.", "folder").unwrap();
        assert_eq!(
            (plain.name.as_str(), plain.description.as_str()),
            ("folder", "First line says what.")
        );
        assert!(parse_skill(&format!("---\nname: {}\n---\nx", "n".repeat(65)), "x").is_err());
        assert!(parse_skill("---\nname: a\n", "x").unwrap_err().contains("closing"));
        assert!(parse_skill("---\nname: a\n---\n", "x").unwrap_err().contains("no instructions"));
    }

    /// Claude Code's skills write long descriptions as YAML block scalars
    /// or continued lines, next to keys axon does not use.
    #[test]
    fn multi_line_yaml_descriptions_are_read_as_yaml_reads_them() {
        let folded = "---\nname: pdf\ndescription: >-\n  Fill in PDF forms\n  with pdftk.\nallowed-tools: Bash, Read\n---\nUse pdftk.\n";
        let skill = parse_skill(folded, "x").unwrap();
        assert_eq!(skill.description, "Fill in PDF forms with pdftk.");
        let literal = "---\nname: a\ndescription: |\n  one\n  two\n\n---\nx\n";
        assert_eq!(parse_skill(literal, "x").unwrap().description, "one\ntwo");
        let continued =
            "---\ndescription: Review code for\n  security problems\nname: review\n---\nx\n";
        let skill = parse_skill(continued, "x").unwrap();
        assert_eq!(
            (skill.name.as_str(), skill.description.as_str()),
            ("review", "Review code for security problems")
        );
    }
}
