//! axon's built-in tools and the machinery every tool call goes through.
//!
//! - [`Workspace`] is the path jail: every path a tool touches is resolved by
//!   [`Workspace::resolve`] into a [`Resolved`], whose operations all start
//!   from the workspace's directory handle, and nothing else joins user paths.
//! - [`atomic_write`] is the only way a tool writes a file on the disk.
//! - [`Buffers`], attached to the workspace, let the file tools read an
//!   editor's text of a file (unsaved changes included) and write through
//!   the editor, after the same jail checks.
//! - [`ToolRegistry`] holds tools, validates every call's arguments against
//!   the tool's JSON Schema before it runs, and turns every failure into a
//!   [`ToolOutput`](axon_protocol::ToolOutput) with `is_error` set: a tool
//!   failure is data for the model, never a panic. [`ToolRegistry::preview`]
//!   says what a call would do, for the user approving it, without doing it.
//!
//! Tools come in two profiles: [`Profile::Code`] for a code workspace and
//! [`Profile::Vault`] for a notes vault (seed 000's Obsidian tools).

mod atomic;
mod background;
mod buffers;
mod edit;
mod error;
mod glob;
mod images;
mod list_dir;
mod multi_edit;
mod notes;
mod patch;
pub mod pdf;
mod placeholder;
mod preview;
mod read;
mod registry;
mod resolved;
mod search;
pub mod secret_mask;
mod shell;
mod text;
mod walk;
mod workspace;
mod write;

pub use atomic::{atomic_replace, atomic_write, atomic_write_path, atomic_write_private};
pub use background::Jobs;
pub use buffers::Buffers;
pub use error::{PathError, ToolError};
pub use images::{
    MAX_ENCODED_BYTES, MAX_IMAGE_FILE_BYTES, MAX_LONG_EDGE, PreparedImage, prepare_image,
    sniff_image, too_large as image_too_large,
};
pub use notes::normalize_note_path;
pub use patch::patch_paths;
pub use registry::{
    CallEvents, Progress, ProgressSink, Tool, ToolContext, ToolFuture, ToolRegistry, TypedTool,
};
pub use resolved::{Opened, Resolved, is_escape, read_text_nofollow};
pub use search::{FileMatches, SearchMatch, SearchOptions, SearchResults, search_workspace};
pub use shell::CommandSandbox;
pub use workspace::{ReadDenied, Workspace};

/// Which set of built-in tools an agent gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// A code workspace: files, search, glob and shell.
    Code,
    /// A notes vault: notes, folders and search; no shell.
    Vault,
}

impl Profile {
    /// The registry of built-in tools for this profile; `shell` commands
    /// get the default environment policy (everything but secrets).
    pub fn registry(self) -> ToolRegistry {
        self.registry_with_env(axon_process::EnvPolicy::default())
    }

    /// The registry of built-in tools for this profile, `shell` commands
    /// getting the environment `env` allows.
    pub fn registry_with_env(self, env: axon_process::EnvPolicy) -> ToolRegistry {
        self.registry_with(env, None)
    }

    /// The registry of built-in tools for this profile, `shell` commands
    /// getting the environment `env` allows, inside `sandbox` if given.
    pub fn registry_with(
        self,
        env: axon_process::EnvPolicy,
        sandbox: Option<std::sync::Arc<shell::CommandSandbox>>,
    ) -> ToolRegistry {
        self.registry_with_jobs(env, sandbox, std::sync::Arc::default())
    }

    /// [`Profile::registry_with`], its background commands kept in `jobs`,
    /// which the caller holds to list them (`/ps`).
    pub fn registry_with_jobs(
        self,
        env: axon_process::EnvPolicy,
        sandbox: Option<std::sync::Arc<shell::CommandSandbox>>,
        jobs: std::sync::Arc<background::Jobs>,
    ) -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        match self {
            Profile::Code => {
                registry.register(read::ReadFile);
                registry.register(write::WriteFile);
                registry.register(edit::EditFile);
                registry.register(multi_edit::MultiEdit);
                registry.register(patch::ApplyPatch);
                registry.register(list_dir::ListDir);
                registry.register(search::Search);
                registry.register(glob::Glob);
                registry.register(shell::Shell {
                    env: std::sync::Arc::new(env),
                    sandbox,
                    jobs: std::sync::Arc::clone(&jobs),
                });
                registry.register(background::ShellOutput { jobs: std::sync::Arc::clone(&jobs) });
                registry.register(background::ShellKill { jobs });
            }
            Profile::Vault => {
                registry.register(notes::ReadNote);
                registry.register(notes::CreateNote);
                registry.register(notes::ListFolder);
                registry.register(search::Search);
                registry.register(glob::Glob);
            }
        }
        registry
    }
}
