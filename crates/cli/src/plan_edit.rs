//! Editing a proposed plan in the user's editor (`$VISUAL`, `$EDITOR`, else
//! `vi`), in the runtime's plan text format.

use std::io::Write;

use axon_protocol::Plan;
use axon_runtime::plan_text::{from_text, to_text};

/// Opens the plan in the user's editor and reads it back.
pub fn edit(plan: &Plan) -> Result<Plan, String> {
    let mut file = tempfile_for_plan().map_err(|e| format!("cannot create a file to edit: {e}"))?;
    file.1
        .write_all(to_text(plan).as_bytes())
        .map_err(|e| format!("cannot write the plan: {e}"))?;
    drop(file.1);
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".to_string());
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&file.0)
        .status()
        .map_err(|e| format!("cannot start the editor '{editor}': {e}"))?;
    let text =
        std::fs::read_to_string(&file.0).map_err(|e| format!("cannot read the edited plan: {e}"));
    let _ = std::fs::remove_file(&file.0);
    if !status.success() {
        return Err(format!("the editor '{editor}' exited with {status}; the plan is unchanged"));
    }
    from_text(plan, &text?)
}

fn tempfile_for_plan() -> std::io::Result<(std::path::PathBuf, std::fs::File)> {
    let path = std::env::temp_dir().join(format!(
        "axon-plan-{}-{}.txt",
        std::process::id(),
        fastrand_suffix()
    ));
    let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&path)?;
    Ok((path, file))
}

fn fastrand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}
