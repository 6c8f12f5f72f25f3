//! The processes axon starts, in one place: nothing axon started outlives
//! it, and none sees a secret it was not given.
//!
//! - `group`: every child runs in a process group of its own, dies with
//!   axon (`PR_SET_PDEATHSIG`), and is listed with the guardian, a small `sh`
//!   that kills every listed group when axon dies however it dies.
//!   [`kill_process_group`] is the one place that signals a group.
//! - `listing`: the child lists its group itself before it execs, so axon
//!   dying right after a spawn cannot leave a command unlisted.
//! - `orphans`: what left its group (`setsid`, a daemon) is re-parented
//!   to axon (a child subreaper), reaped while axon runs and killed when it
//!   leaves.
//! - `servers`: the groups of long-lived children (MCP servers, background
//!   commands), killed exactly once however they end.
//! - `capture`: a child's output read in the background, bounded (head
//!   and tail kept), never outliving the call.
//! - `env_policy`: the environment a child sees, built from scratch
//!   without axon's secrets.
//! - `scratch`: private temp folders removed on the way out, and those a
//!   killed axon left removed by the next one.
//! - [`kill_all`]: the one call for a front end that leaves with
//!   `process::exit` (which runs no destructors).

pub mod capture;
pub mod env_policy;
mod group;
mod listing;
mod orphans;
mod scratch;
mod servers;

pub use capture::{Capture, Captured, Keep};
pub use env_policy::EnvPolicy;
pub use group::{
    GroupChild, StdGroupChild, become_subreaper, die_with_parent, die_with_parent_std, guard_group,
    hide_environment, kill_process_group, release_group, start_guardian_early,
};
pub use listing::{Listing, spawn_listed, spawn_listed_std};
pub use orphans::kill_orphans;
pub use scratch::private_temp;
pub use servers::{kill_server_group, track_server_group};

/// Kills everything axon started that is still running: every server
/// group, then every orphan axon adopted; then removes its private temp
/// folders. For the moment axon leaves.
pub fn kill_all() {
    servers::kill_all_servers();
    orphans::kill_orphans();
    scratch::remove_all();
}
