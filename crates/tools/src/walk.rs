//! Walking the workspace through directory handles.
//!
//! Every folder is opened relative to the handle of the folder it was read
//! from, by one plain name, with `O_NOFOLLOW | O_DIRECTORY`; every file is
//! opened the same way with `O_NOFOLLOW`. A symlink is reported as one and
//! never entered or read, and a folder swapped for a symlink while the walk
//! runs fails to open instead of leading out: no path is looked up by name
//! from the ambient filesystem, so no race can take the walk outside the
//! workspace.
//!
//! Filtering follows ripgrep's defaults: `.git` is never entered; `.ignore`
//! rules beat `.gitignore` rules, which beat `.git/info/exclude`, and within
//! each kind the deepest file that matches decides (`!` re-includes); a
//! `.gitignore` above a folder holding `.git` does not apply below it. Only
//! the workspace's own ignore files count (none above its root, no global
//! git configuration: the walk reads nothing outside). An override glob,
//! when given, decides before the ignore rules, as `rg -g` does.
//!
//! [`walk`] visits in order (depth first, names sorted), for listings;
//! [`walk_parallel`] spreads folders over threads, for search.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::Override;

use crate::resolved::Resolved;

/// Ignore files larger than this are not read (a generated file would only
/// cost time).
const MAX_IGNORE_FILE_BYTES: u64 = 1024 * 1024;
/// Threads for a parallel walk, at most.
const MAX_THREADS: usize = 8;

/// What a walk leaves out.
#[derive(Debug, Clone, Default)]
pub(crate) struct WalkOptions {
    /// Leave out names starting with `.`.
    pub skip_hidden: bool,
    /// Deepest level visited; entries directly in the start folder are at 1.
    pub max_depth: Option<usize>,
    /// Globs that decide before the ignore rules (ripgrep's `-g`).
    pub overrides: Option<Override>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// One entry found by a walk.
pub(crate) struct Entry {
    pub place: Resolved,
    pub kind: Kind,
    /// 1 for entries directly in the start folder.
    pub depth: usize,
    /// The handle of the folder the entry was read from.
    parent: Arc<Dir>,
    name: OsString,
}

impl Entry {
    pub fn name(&self) -> &OsStr {
        &self.name
    }

    /// Opens this file by its name in the folder it was read from, without
    /// following a symlink; `None` if it is no longer a regular file.
    pub fn open_file(&self) -> io::Result<Option<File>> {
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
        let file = self.parent.open_with(&self.name, &options)?.into_std();
        Ok(file.metadata()?.is_file().then_some(file))
    }
}

/// Visits everything below `start` depth first, each folder's entries
/// sorted by name, calling `visit` before descending. Returns how many
/// entries could not be read.
pub(crate) fn walk(
    start: &Resolved,
    options: &WalkOptions,
    visit: &mut dyn FnMut(&Entry),
) -> io::Result<u64> {
    let (dir, ignores) = open_start(start)?;
    let errors = AtomicU64::new(0);
    let sorted = |dir: &Dir| {
        let mut entries = read_entries(dir, &errors);
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.into_iter()
    };
    let root = Folder { dir: Arc::new(dir), place: start.clone(), ignores, depth: 1 };
    let mut stack = vec![(sorted(&root.dir), root)];
    while let Some((entries, folder)) = stack.last_mut() {
        let Some((name, kind)) = entries.next() else {
            stack.pop();
            continue;
        };
        if let Some(sub) = step(folder, name, kind, options, visit).and_then(|s| s.open(&errors)) {
            stack.push((sorted(&sub.dir), sub));
        }
    }
    Ok(errors.into_inner())
}

/// Visits everything below `start` from several threads, in no particular
/// order. Returns how many entries could not be read.
pub(crate) fn walk_parallel(
    start: &Resolved,
    options: &WalkOptions,
    visit: &(dyn Fn(&Entry) + Sync),
) -> io::Result<u64> {
    walk_parallel_with(start, options, || (), &|(), entry| visit(entry))
}

/// [`walk_parallel`] with a state each thread makes once (`init`) and
/// passes to every `visit` it makes (a searcher and its buffers, say).
pub(crate) fn walk_parallel_with<S>(
    start: &Resolved,
    options: &WalkOptions,
    init: impl Fn() -> S + Sync,
    visit: &(dyn Fn(&mut S, &Entry) + Sync),
) -> io::Result<u64> {
    let (dir, ignores) = open_start(start)?;
    let queue = Queue {
        state: Mutex::new(QueueState {
            jobs: vec![Job::Open(Folder {
                dir: Arc::new(dir),
                place: start.clone(),
                ignores,
                depth: 1,
            })],
            busy: 0,
        }),
        ready: Condvar::new(),
    };
    let errors = AtomicU64::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(MAX_THREADS);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut state = init();
                while let Some(job) = queue.take() {
                    let found = match job.open(&errors) {
                        Some(folder) => {
                            expand(&folder, options, &mut |entry| visit(&mut state, entry), &errors)
                        }
                        None => Vec::new(),
                    };
                    queue.finish(found);
                }
            });
        }
    });
    Ok(errors.into_inner())
}

/// A folder of the walk, already open.
struct Folder {
    dir: Arc<Dir>,
    place: Resolved,
    ignores: Arc<Ignores>,
    depth: usize,
}

/// A folder waiting in the queue. Subfolders wait unopened, so a folder
/// with thousands of subfolders costs one descriptor (its own, shared by
/// them), not thousands.
enum Job {
    Open(Folder),
    Closed(Subfolder),
}

impl Job {
    fn open(self, errors: &AtomicU64) -> Option<Folder> {
        match self {
            Job::Open(folder) => Some(folder),
            Job::Closed(sub) => sub.open(errors),
        }
    }
}

/// A subfolder the walk goes into, not opened yet.
struct Subfolder {
    parent: Arc<Dir>,
    name: OsString,
    place: Resolved,
    /// The rules in force in the parent.
    ignores: Arc<Ignores>,
    depth: usize,
}

impl Subfolder {
    /// Opens it by name beneath the parent's handle, without following a
    /// link; a failure is counted.
    fn open(self, errors: &AtomicU64) -> Option<Folder> {
        match open_child_dir(&self.parent, &self.name) {
            Ok(dir) => Some(Folder {
                ignores: Ignores::below(&self.ignores, &dir, &self.place),
                dir: Arc::new(dir),
                place: self.place,
                depth: self.depth,
            }),
            Err(_) => {
                errors.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }
}

struct Queue {
    state: Mutex<QueueState>,
    ready: Condvar,
}

struct QueueState {
    jobs: Vec<Job>,
    /// Threads reading a folder, which may add jobs.
    busy: usize,
}

impl Queue {
    /// The next folder, or `None` once no folder is left and none is being
    /// read.
    fn take(&self) -> Option<Job> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(job) = state.jobs.pop() {
                state.busy += 1;
                return Some(job);
            }
            if state.busy == 0 {
                return None;
            }
            state = self.ready.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn finish(&self, found: Vec<Job>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.busy -= 1;
        state.jobs.extend(found);
        // Wake everyone: either there is work, or the walk is over.
        self.ready.notify_all();
    }
}

/// Reads one folder: visits its entries and returns its subfolders.
fn expand(
    folder: &Folder,
    options: &WalkOptions,
    visit: &mut dyn FnMut(&Entry),
    errors: &AtomicU64,
) -> Vec<Job> {
    read_entries(&folder.dir, errors)
        .into_iter()
        .filter_map(|(name, kind)| step(folder, name, kind, options, visit))
        .map(Job::Closed)
        .collect()
}

/// One entry of `folder`: filtered, visited, and returned as a subfolder
/// to open when the walk goes into it.
fn step(
    folder: &Folder,
    name: OsString,
    kind: Kind,
    options: &WalkOptions,
    visit: &mut dyn FnMut(&Entry),
) -> Option<Subfolder> {
    let place = folder.place.child(&name);
    if skip(options, &folder.ignores, &name, &place, kind) {
        return None;
    }
    let entry = Entry { place, kind, depth: folder.depth, parent: Arc::clone(&folder.dir), name };
    visit(&entry);
    if kind != Kind::Dir || options.max_depth.is_some_and(|max| entry.depth >= max) {
        return None;
    }
    Some(Subfolder {
        parent: entry.parent,
        name: entry.name,
        place: entry.place,
        ignores: Arc::clone(&folder.ignores),
        depth: entry.depth + 1,
    })
}

/// The start folder's handle and the ignore rules in force there: those of
/// every folder from the workspace root down to it, each read through a
/// handle opened beneath the root.
fn open_start(start: &Resolved) -> io::Result<(Dir, Arc<Ignores>)> {
    let mut chain = Vec::new();
    let mut at = Some(start.clone());
    while let Some(place) = at {
        at = place.split().map(|(parent, _)| parent);
        chain.push(place);
    }
    let mut ignores = Arc::new(Ignores::default());
    let mut dir = None;
    for place in chain.into_iter().rev() {
        let opened = place.open_dir()?;
        ignores = Ignores::below(&ignores, &opened, &place);
        dir = Some(opened);
    }
    match dir {
        Some(dir) => Ok((dir, ignores)),
        None => start.open_dir().map(|dir| (dir, ignores)),
    }
}

fn open_child_dir(parent: &Dir, name: &OsStr) -> io::Result<Dir> {
    let mut options = OpenOptions::new();
    options.read(true).custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY);
    Ok(Dir::from_std_file(parent.open_with(name, &options)?.into_std()))
}

/// A folder's entries with their types as the folder reports them (a
/// symlink is a symlink; nothing is followed).
fn read_entries(dir: &Dir, errors: &AtomicU64) -> Vec<(OsString, Kind)> {
    let Ok(entries) = dir.entries() else {
        errors.fetch_add(1, Ordering::Relaxed);
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries {
        let Ok(entry) = entry else {
            errors.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        let Ok(file_type) = entry.file_type() else {
            errors.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        let kind = if file_type.is_symlink() {
            Kind::Symlink
        } else if file_type.is_dir() {
            Kind::Dir
        } else if file_type.is_file() {
            Kind::File
        } else {
            Kind::Other
        };
        out.push((entry.file_name(), kind));
    }
    out
}

fn skip(
    options: &WalkOptions,
    ignores: &Ignores,
    name: &OsStr,
    place: &Resolved,
    kind: Kind,
) -> bool {
    if name == ".git" {
        return true;
    }
    let is_dir = kind == Kind::Dir;
    if let Some(overrides) = &options.overrides {
        match overrides.matched(place.path(), is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => {}
        }
    }
    match ignores.matched(place, is_dir) {
        Match::Ignore(()) => true,
        Match::Whitelist(()) => false,
        Match::None => options.skip_hidden && name.as_encoded_bytes().starts_with(b"."),
    }
}

/// The ignore rules of one folder, linked to its parent's.
#[derive(Default)]
struct Ignores {
    parent: Option<Arc<Ignores>>,
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
    /// This folder holds `.git`: `.gitignore`s above it do not apply.
    repo_root: bool,
}

impl Ignores {
    /// The rules below `parent` once `dir` (at `place`) adds its own.
    fn below(parent: &Arc<Ignores>, dir: &Dir, place: &Resolved) -> Arc<Ignores> {
        let ignore = read_rules(dir, OsStr::new(".ignore"), place);
        let gitignore = read_rules(dir, OsStr::new(".gitignore"), place);
        let repo_root = dir.symlink_metadata(".git").is_ok();
        let exclude = if repo_root {
            dir.open_dir(".git")
                .ok()
                .and_then(|git| git.open_dir("info").ok())
                .and_then(|info| read_rules(&info, OsStr::new("exclude"), place))
        } else {
            None
        };
        if ignore.is_none() && gitignore.is_none() && exclude.is_none() && !repo_root {
            return Arc::clone(parent);
        }
        Arc::new(Ignores {
            parent: Some(Arc::clone(parent)),
            ignore,
            gitignore,
            exclude,
            repo_root,
        })
    }

    fn levels(&self) -> impl Iterator<Item = &Ignores> {
        std::iter::successors(Some(self), |level| level.parent.as_deref())
    }

    fn matched(&self, place: &Resolved, is_dir: bool) -> Match<()> {
        let path = place.path();
        let deepest = |pick: &dyn Fn(&Ignores) -> Option<&Gitignore>, stop_at_repo: bool| {
            let mut seen_repo = false;
            for level in self.levels() {
                if stop_at_repo && seen_repo {
                    break;
                }
                seen_repo |= level.repo_root;
                if let Some(rules) = pick(level) {
                    match rules.matched(path, is_dir) {
                        Match::None => {}
                        Match::Ignore(_) => return Match::Ignore(()),
                        Match::Whitelist(_) => return Match::Whitelist(()),
                    }
                }
            }
            Match::None
        };
        let by_ignore = deepest(&|l| l.ignore.as_ref(), false);
        if !by_ignore.is_none() {
            return by_ignore;
        }
        let by_gitignore = deepest(&|l| l.gitignore.as_ref(), true);
        if !by_gitignore.is_none() {
            return by_gitignore;
        }
        deepest(&|l| l.exclude.as_ref(), true)
    }
}

/// The rules in `name` inside `dir`, read through the handle, applying to
/// the folder at `place`. Unreadable or oversized files count as absent and
/// unparsable lines are left out, as git does.
fn read_rules(dir: &Dir, name: &OsStr, place: &Resolved) -> Option<Gitignore> {
    let mut options = OpenOptions::new();
    options.read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    let file = dir.open_with(name, &options).ok()?.into_std();
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_IGNORE_FILE_BYTES).read_to_string(&mut text).ok()?;
    let mut builder = GitignoreBuilder::new(place.path());
    for line in text.lines() {
        let _ = builder.add_line(None, line);
    }
    builder.build().ok().filter(|rules| !rules.is_empty())
}
