//! Skills: reusable know-how in the `SKILL.md` format other agents share.
//!
//! A skill is a folder with a `SKILL.md` (YAML front matter `name` and
//! `description`, block scalars and continued lines included, then the
//! instructions), found in the folders the runtime names (the workspace's
//! `.axon/skills`, `.agents/skills` and `.claude/skills`, the user's
//! `<config>/skills` and `~/.claude/skills`), or a
//! git repository named in the config and cloned once (`git clone --depth 1`)
//! into `<cache>/skills/<hash of the URL>/<repo name>`. Loading never fails
//! as a whole: a skill that cannot be had is reported and skipped (seed 001,
//! property 2), and a cached clone is used without touching the network
//! (property 3).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest `name` and `description` the format allows.
pub const MAX_NAME: usize = 64;
pub const MAX_DESCRIPTION: usize = 1024;
/// How long one clone may take.
const CLONE_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The instructions (the content file without its front matter).
    pub content: String,
    /// Where it came from: a folder, or a repository URL.
    pub source: String,
}

/// A skill from a git repository (`[[skills]]` in the config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSkill {
    pub name: String,
    pub repo: String,
    /// The content file (or a folder holding it), relative to the repository.
    pub path: Option<String>,
}

/// A skill that could not be loaded, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFailure {
    pub name: String,
    pub source: String,
    pub reason: String,
}

/// Loads skills, cloning repositories into `cache`.
#[derive(Debug, Clone)]
pub struct SkillLoader {
    cache: PathBuf,
}

impl SkillLoader {
    pub fn new(cache_dir: &Path) -> Self {
        SkillLoader { cache: cache_dir.join("skills") }
    }

    /// Every skill folder under `roots` (folders that do not exist are
    /// simply empty), then every repository skill.
    pub fn load_all(
        &self,
        roots: &[PathBuf],
        repos: &[GitSkill],
    ) -> (Vec<Skill>, Vec<SkillFailure>) {
        let mut skills = Vec::new();
        let mut failures = Vec::new();
        for root in roots {
            let Ok(entries) = std::fs::read_dir(root) else { continue };
            // Real folders only: a symlinked one could lead anywhere.
            let mut folders: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect();
            folders.sort();
            for folder in folders {
                let fallback =
                    folder.file_name().and_then(|n| n.to_str()).unwrap_or("skill").to_string();
                match content_file(&folder, None).and_then(|file| read_skill(&file, &fallback)) {
                    Ok(mut skill) => {
                        skill.source = folder.display().to_string();
                        skills.push(skill);
                    }
                    Err(reason) => failures.push(SkillFailure {
                        name: fallback,
                        source: folder.display().to_string(),
                        reason,
                    }),
                }
            }
        }
        for spec in repos {
            match self.load_git(spec) {
                Ok(skill) => skills.push(skill),
                Err(reason) => failures.push(SkillFailure {
                    name: spec.name.clone(),
                    source: spec.repo.clone(),
                    reason,
                }),
            }
        }
        (skills, failures)
    }

    /// One repository skill: from the cache when it is there, else cloned.
    pub fn load_git(&self, spec: &GitSkill) -> Result<Skill, String> {
        let checkout = self.checkout_dir(&spec.repo);
        if !checkout.is_dir() {
            self.clone_repo(&spec.repo, &checkout)?;
        }
        let file = content_file(&checkout, spec.path.as_deref())?;
        let mut skill = read_skill(&file, &spec.name)?;
        skill.source = spec.repo.clone();
        Ok(skill)
    }

    /// Clones `spec`'s repository again (`axon skills update`).
    pub fn update(&self, spec: &GitSkill) -> Result<Skill, String> {
        let checkout = self.checkout_dir(&spec.repo);
        let fresh = checkout.with_extension("update");
        let _ = std::fs::remove_dir_all(&fresh);
        self.clone_repo(&spec.repo, &fresh)?;
        let _ = std::fs::remove_dir_all(&checkout);
        std::fs::rename(&fresh, &checkout)
            .map_err(|e| format!("cannot replace the cached clone {}: {e}", checkout.display()))?;
        self.load_git(spec)
    }

    /// `<cache>/skills/<hash of the URL>/<repo name>`.
    pub fn checkout_dir(&self, repo: &str) -> PathBuf {
        let name = repo
            .trim_end_matches('/')
            .rsplit(['/', ':'])
            .next()
            .unwrap_or("repo")
            .trim_end_matches(".git");
        let name = if name.is_empty() { "repo" } else { name };
        self.cache.join(format!("{:016x}", fnv1a(repo.as_bytes()))).join(name)
    }

    /// `git clone --depth 1` into a temporary folder, renamed into place
    /// only when complete, so a failed clone leaves no half a cache.
    fn clone_repo(&self, repo: &str, target: &Path) -> Result<(), String> {
        let parent = target.parent().unwrap_or(&self.cache);
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        let partial = target.with_extension("partial");
        let _ = std::fs::remove_dir_all(&partial);
        let mut child = Command::new("git")
            .args(["clone", "--depth", "1", "--quiet", "--", repo])
            .arg(&partial)
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run git (is it installed?): {e}"))?;
        let deadline = Instant::now() + CLONE_TIMEOUT;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    let _ = std::fs::remove_dir_all(&partial);
                    return Err(format!(
                        "git clone of {repo} took longer than {}s",
                        CLONE_TIMEOUT.as_secs()
                    ));
                }
                Err(e) => return Err(format!("git clone of {repo} failed: {e}")),
            }
        };
        if !status.success() {
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
            }
            let _ = std::fs::remove_dir_all(&partial);
            let detail = stderr.lines().last().unwrap_or("").trim().to_string();
            return Err(format!("git clone of {repo} failed: {detail}"));
        }
        std::fs::rename(&partial, target)
            .map_err(|e| format!("cannot move the clone into {}: {e}", target.display()))
    }
}

/// The configured path (a file, or a folder to look in), then SKILL.md,
/// README.md, then the first `.md` file by name.
fn content_file(dir: &Path, configured: Option<&str>) -> Result<PathBuf, String> {
    let mut dir = dir.to_path_buf();
    if let Some(path) = configured {
        let relative = Path::new(path);
        if relative.is_absolute()
            || relative.components().any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(format!("path '{path}' must stay inside the skill's repository"));
        }
        let candidate = dir.join(path);
        if is_regular_file(&candidate) {
            return Ok(candidate);
        }
        if !candidate.is_dir() {
            return Err(format!("{path} is not in {}", dir.display()));
        }
        dir = candidate;
    }
    for name in ["SKILL.md", "README.md"] {
        if is_regular_file(&dir.join(name)) {
            return Ok(dir.join(name));
        }
    }
    let mut markdown: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            is_regular_file(p) && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("md"))
        })
        .collect();
    markdown.sort();
    markdown
        .into_iter()
        .next()
        .ok_or_else(|| format!("no SKILL.md or other .md file in {}", dir.display()))
}

/// Bytes read of one skill file.
const MAX_SKILL_FILE_BYTES: u64 = 1024 * 1024;

fn read_skill(file: &Path, fallback_name: &str) -> Result<Skill, String> {
    // Not followed if a link was swapped in after the checks.
    let text = axon_tools::read_text_nofollow(file, MAX_SKILL_FILE_BYTES)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    parse_skill(&text, fallback_name).map_err(|e| format!("{}: {e}", file.display()))
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

/// A file that is not a symlink.
pub(crate) fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
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

    #[test]
    fn a_configured_path_cannot_leave_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("SKILL.md"), "x").unwrap();
        for path in ["/etc/passwd", "../outside.md", "a/../../b.md"] {
            assert!(content_file(dir.path(), Some(path)).unwrap_err().contains("inside"), "{path}");
        }
        #[cfg(unix)]
        {
            let skills = tempfile::tempdir().unwrap();
            std::fs::create_dir(skills.path().join("linked")).unwrap();
            std::os::unix::fs::symlink("/etc/hostname", skills.path().join("linked/SKILL.md"))
                .unwrap();
            std::os::unix::fs::symlink(dir.path(), skills.path().join("dirlink")).unwrap();
            let (found, failed) =
                SkillLoader::new(dir.path()).load_all(&[skills.path().to_path_buf()], &[]);
            assert!(found.is_empty(), "{found:?}");
            assert_eq!(
                failed.len(),
                1,
                "the symlinked file is refused, the symlinked folder not visited"
            );
        }
    }

    #[test]
    fn checkouts_are_keyed_by_the_url() {
        let loader = SkillLoader::new(Path::new("/cache"));
        let a = loader.checkout_dir("https://example.com/org/skills.git");
        assert!(a.starts_with("/cache/skills") && a.ends_with("skills"));
        assert_ne!(a, loader.checkout_dir("https://example.com/other/skills.git"));
    }
}
