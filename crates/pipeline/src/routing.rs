//! The one warning a run gives at its start when a router model (OpenRouter) is not pinned to upstream providers:
//! its answers may come from different backends, whose quantisation and serving differ (`inference_client::route`).

use crate::Run;

/// The run's models and judges that a router may send to any provider, by name (each once, in run order).
pub fn unpinned(run: &Run) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let all = run
        .models
        .iter()
        .chain(run.judge_models())
        .chain(run.rephraser.iter());
    for m in all.filter(|m| inference_client::route::unpinned(m)) {
        if !names.contains(&m.name) {
            names.push(m.name.clone());
        }
    }
    names
}

/// Logs one warning naming every unpinned router model of `run` (nothing when there is none).
pub(crate) fn warn(run: &Run) {
    let names = unpinned(run);
    if names.is_empty() {
        return;
    }
    tracing::warn!(
        models = %names.join(", "),
        "These models go through a router that may send each request to a different upstream provider (their \
         quantisation and serving differ, and scores with them): pin them with `[models.<name>.route]` (`order`, \
         `allow-fallbacks = false`) in the models file; the report counts the providers that answered."
    );
}
