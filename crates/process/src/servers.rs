//! The process groups of long-lived children (stdio servers, background
//! commands), so each is killed exactly once however axon ends: shutdown,
//! a dropped manager or set of tools, or a front end that must exit at once
//! ([`crate::kill_all`]).

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

static LIVE: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// Lists `group` (a server's) to be killed once, by
/// [`kill_server_group`] or [`crate::kill_all`].
pub fn track_server_group(group: u32) {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner).insert(group);
}

/// Kills `group` if it is still ours; a group killed before is left alone,
/// since its id may since belong to someone else.
pub fn kill_server_group(group: u32) {
    let ours = LIVE.lock().unwrap_or_else(PoisonError::into_inner).remove(&group);
    if ours {
        kill_group(group);
        crate::group::release_group(group);
    }
}

/// Kills every server process group still running.
pub(crate) fn kill_all_servers() {
    let groups = std::mem::take(&mut *LIVE.lock().unwrap_or_else(PoisonError::into_inner));
    for group in groups {
        kill_group(group);
    }
}

fn kill_group(group: u32) {
    // Never the init or session-wide groups, whatever the id says.
    if group > 1 {
        crate::group::kill_process_group(group);
    }
}
