//! The trust file: round trip, its layout and header, private permissions,
//! a clash with another workspace, errors naming the file, and updates from
//! several threads at once losing nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use axon_permissions::{Trust, TrustError, trust_path};

fn sample(workspace: &Path) -> Trust {
    let mut trust = Trust::new(workspace);
    assert!(trust.add_allow(&["shell(cargo test:*)".into(), "edit_file(src/**)".into()]).unwrap());
    assert!(trust.trust_server("github", "npx -y @mcp/github"));
    trust
}

#[test]
fn the_path_is_named_after_the_workspace_under_data_trust() {
    let data = Path::new("/data");
    let path = trust_path(data, Path::new("/home/u/my proj"));
    assert_eq!(path.parent(), Some(Path::new("/data/trust")));
    let name = path.file_name().unwrap().to_str().unwrap();
    let (stem, hash) = name.strip_suffix(".toml").unwrap().rsplit_once('-').unwrap();
    assert_eq!(stem, "my_proj");
    assert_eq!(hash.len(), 16);
    assert!(hash.chars().all(|c| c.is_ascii_hexdigit()));
    assert_ne!(path, trust_path(data, Path::new("/other/my proj")));
    assert_eq!(path, trust_path(data, Path::new("/home/u/my proj")));
    let hidden = trust_path(data, Path::new("/home/u/.dotfiles"));
    assert!(hidden.file_name().unwrap().to_str().unwrap().starts_with("_dotfiles-"));
    let root = trust_path(data, Path::new("/"));
    assert!(root.file_name().unwrap().to_str().unwrap().starts_with("workspace-"));
}

#[test]
fn round_trip_with_header_and_layout() {
    let data = tempfile::tempdir().unwrap();
    let workspace = PathBuf::from("/home/u/proj");
    assert_eq!(Trust::load(data.path(), &workspace).unwrap(), Trust::new(&workspace));
    let trust = sample(&workspace);
    trust.save(data.path()).unwrap();
    assert_eq!(Trust::load(data.path(), &workspace).unwrap(), trust);

    let text = fs::read_to_string(trust_path(data.path(), &workspace)).unwrap();
    assert!(text.starts_with("# axon trust file, written by axon"), "{text}");
    assert!(text.contains("workspace = \"/home/u/proj\""), "{text}");
    assert!(text.contains("allow = ["), "{text}");
    assert!(text.contains("[mcp_servers]\ngithub = \"npx -y @mcp/github\""), "{text}");
    // Only the trust file is left: the temporary file was renamed.
    let names: Vec<_> = fs::read_dir(data.path().join("trust")).unwrap().collect();
    assert_eq!(names.len(), 1);
}

#[cfg(unix)]
#[test]
fn the_file_is_0600_and_its_folder_0700() {
    use std::os::unix::fs::PermissionsExt;
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("trust");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    let workspace = Path::new("/w");
    sample(workspace).save(data.path()).unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&trust_path(data.path(), workspace)), 0o600);
    assert_eq!(mode(&dir), 0o700);
}

#[test]
fn a_file_for_another_workspace_is_empty() {
    let data = tempfile::tempdir().unwrap();
    let asked = Path::new("/home/u/proj");
    // Another workspace's trust written where this one's would be (a hash clash).
    let other = sample(Path::new("/elsewhere/proj"));
    other.save(data.path()).unwrap();
    fs::rename(
        trust_path(data.path(), Path::new("/elsewhere/proj")),
        trust_path(data.path(), asked),
    )
    .unwrap();
    assert_eq!(Trust::load(data.path(), asked).unwrap(), Trust::new(asked));
}

#[test]
fn bad_files_are_errors_naming_the_file() {
    let data = tempfile::tempdir().unwrap();
    let workspace = Path::new("/w");
    let path = trust_path(data.path(), workspace);
    fs::create_dir_all(path.parent().unwrap()).unwrap();

    fs::write(&path, "workspace = \"/w\"\nallow = [\n").unwrap();
    let error = Trust::load(data.path(), workspace).unwrap_err();
    assert!(matches!(error, TrustError::Invalid { .. }), "{error:?}");
    assert!(error.to_string().contains(&path.display().to_string()), "{error}");

    fs::write(&path, "workspace = \"/w\"\nallow = [\"shell(ls > x)\"]\n").unwrap();
    let error = Trust::load(data.path(), workspace).unwrap_err().to_string();
    assert!(error.contains(&path.display().to_string()), "{error}");
    assert!(error.contains("`shell(ls > x)`"), "{error}");

    fs::write(&path, "allow = []\n").unwrap();
    let error = Trust::load(data.path(), workspace).unwrap_err().to_string();
    assert!(error.contains("workspace"), "{error}");

    // Saving never writes a rule that would not load.
    let mut trust = Trust::new(workspace);
    trust.allow.push("shell(".into());
    assert!(matches!(trust.save(data.path()), Err(TrustError::Rule(_))));
}

#[test]
fn add_allow_and_servers() {
    let mut trust = sample(Path::new("/w"));
    assert!(!trust.add_allow(&["shell(cargo test:*)".into()]).unwrap());
    assert!(trust.add_allow(&[" shell(git status) ".into()]).unwrap());
    assert_eq!(trust.allow.last().map(String::as_str), Some("shell(git status)"));
    let before = trust.clone();
    assert!(trust.add_allow(&["shell(ls:*)".into(), "bad rule".into()]).is_err());
    assert_eq!(trust, before);

    assert!(trust.trusts_server("github", "npx -y @mcp/github"));
    assert!(!trust.trusts_server("github", "npx -y @evil/github"));
    assert!(!trust.trusts_server("other", "npx -y @mcp/github"));
    assert!(!trust.trust_server("github", "npx -y @mcp/github"));
    assert!(trust.trust_server("github", "npx -y @mcp/github@2"));
    assert!(!trust.trusts_server("github", "npx -y @mcp/github"));
}

#[test]
fn concurrent_updates_lose_nothing() {
    let data = tempfile::tempdir().unwrap();
    let workspace = Path::new("/w");
    std::thread::scope(|scope| {
        for n in 0..8 {
            let data = data.path();
            scope.spawn(move || {
                for m in 0..5 {
                    let rule = format!("shell(tool{n} run{m}:*)");
                    Trust::update(data, workspace, |trust| trust.add_allow(&[rule]))
                        .unwrap()
                        .1
                        .unwrap();
                }
            });
        }
    });
    let trust = Trust::load(data.path(), workspace).unwrap();
    assert_eq!(trust.allow.len(), 40, "{:?}", trust.allow);
}
