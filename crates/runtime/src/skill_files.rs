//! Skills read from disk for core: the skill folders the runtime names
//! (the workspace's `.axon/skills`, `.agents/skills` and `.claude/skills`,
//! the user's `<config>/skills` and `~/.claude/skills`: a folder per skill
//! holding a `SKILL.md`), and the git repositories named in the config,
//! cloned once (`skill_clone`) into `<cache>/skills/<hash of the URL>/<repo
//! name>`. Each becomes an `axon_core::skills::Skill` (parsed by
//! `axon_core::skills::parse_skill`).
//!
//! What it guarantees: loading never fails as a whole (a skill that cannot
//! be had is a [`SkillFailure`] saying why, and the others load: seed 001,
//! property 2); a cached clone is used without touching the network
//! (property 3); only real folders are visited and regular files read,
//! never through a symlink, at most 1 MiB each; a configured path cannot
//! leave its repository; folders are read in name order.

use std::path::{Component, Path, PathBuf};

use axon_core::skills::{Skill, parse_skill};
use axon_process::EnvPolicy;
use axon_process::env_policy::EnvPolicyConfig;

use crate::config::{Dirs, Effective};
use crate::guidance_files::is_regular_file;
use crate::skill_clone::clone_repo;

/// Bytes read of one skill file.
const MAX_SKILL_FILE_BYTES: u64 = 1024 * 1024;

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
    /// What `git clone` sees of axon's environment.
    env: EnvPolicy,
}

impl SkillLoader {
    /// Clones with axon's environment less every secret (by name, by the
    /// shape of its value, and the providers' key variables).
    pub fn new(cache_dir: &Path) -> Self {
        let env = EnvPolicy::new(&EnvPolicyConfig::default(), axon_llm::key_variables())
            .unwrap_or_default();
        SkillLoader { cache: cache_dir.join("skills"), env }
    }

    /// The loader a session uses: clones see what the config lets children
    /// see (`Effective::env_policy`, never a configured key); should that
    /// policy not compile, [`SkillLoader::new`]'s.
    pub fn for_config(config: &Effective, dirs: &Dirs) -> Self {
        let loader = SkillLoader::new(&dirs.cache);
        match config.env_policy(&[]) {
            Ok(env) => loader.with_env(env),
            Err(_) => loader,
        }
    }

    /// Clones with `env`'s environment.
    pub fn with_env(mut self, env: EnvPolicy) -> Self {
        self.env = env;
        self
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
            clone_repo(&spec.repo, &checkout, &self.cache, &self.env)?;
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
        clone_repo(&spec.repo, &fresh, &self.cache, &self.env)?;
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
}

/// The configured path (a file, or a folder to look in), then SKILL.md,
/// README.md, then the first `.md` file by name.
fn content_file(dir: &Path, configured: Option<&str>) -> Result<PathBuf, String> {
    let mut dir = dir.to_path_buf();
    if let Some(path) = configured {
        let relative = Path::new(path);
        if relative.is_absolute()
            || relative.components().any(|c| matches!(c, Component::ParentDir))
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

fn read_skill(file: &Path, fallback_name: &str) -> Result<Skill, String> {
    // Not followed if a link was swapped in after the checks.
    let text = axon_tools::read_text_nofollow(file, MAX_SKILL_FILE_BYTES)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    parse_skill(&text, fallback_name).map_err(|e| format!("{}: {e}", file.display()))
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
