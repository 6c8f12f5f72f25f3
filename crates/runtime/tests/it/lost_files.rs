//! Issue 36 §2: a turn whose command deletes many files is shown to the
//! user with the list, and the turn's checkpoint holds them, ignored ones
//! (a `.env.local`) included, so a rewind puts them back.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{Rig, opened, runtime, until_turn_end, user};
use axon_core::ApprovalPolicy;
use axon_protocol::AgentEvent;
use axon_testkit::Reply;
use serde_json::json;

#[test]
fn a_turn_that_deletes_many_files_names_them_and_the_checkpoint_holds_them() {
    runtime().block_on(async {
        let rig = Rig::new(vec![
            Reply::tool("shell", json!({"command": "rm -f notes/*.md .env.local"})),
            Reply::text("cleaned up"),
        ])
        .await;
        let ws = rig.workspace.path();
        std::fs::create_dir(ws.join("notes")).unwrap();
        for n in 0..24 {
            std::fs::write(ws.join(format!("notes/n{n:02}.md")), format!("note {n}\n")).unwrap();
        }
        std::fs::write(ws.join(".gitignore"), ".env*\n").unwrap();
        std::fs::write(ws.join(".env.local"), "TOKEN_URL=http://localhost\n").unwrap();
        let mut config = rig.config();
        config.approval = Some(ApprovalPolicy::Auto);
        let (session, mut events) = rig.open(config).await;
        opened(&mut events);
        session.submit(user("clean up the notes"));
        let seen = until_turn_end(&session, &mut events, |_| None).await;
        session.shutdown().await;
        assert!(!ws.join(".env.local").exists() && !ws.join("notes/n00.md").exists());
        let warning = seen
            .iter()
            .find_map(|e| match e {
                AgentEvent::Warning { message } if message.contains("deleted or rewrote") => {
                    Some(message.clone())
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("the user is told: {seen:?}"));
        assert!(warning.contains("25 files"), "{warning}");
        assert!(warning.contains(".env.local") && warning.contains("notes/n00.md"), "{warning}");
        assert!(warning.contains("… and 5 more") && warning.contains("axon rewind"), "{warning}");

        // The checkpoint before the turn holds every one of them.
        let checkpoints = axon_runtime::rewind::checkpoints(
            &rig.home.path().join("data"),
            &std::fs::canonicalize(ws).unwrap(),
        )
        .unwrap();
        let session_id = checkpoints.sessions().unwrap().pop().unwrap();
        let snapshots = checkpoints.list(&session_id).unwrap();
        let before = &snapshots.first().unwrap().id;
        checkpoints.restore(&session_id, before).unwrap();
        assert_eq!(
            std::fs::read_to_string(ws.join(".env.local")).unwrap(),
            "TOKEN_URL=http://localhost\n"
        );
        assert_eq!(std::fs::read_to_string(ws.join("notes/n23.md")).unwrap(), "note 23\n");
    });
}
