//! The run's plan for the overall progress line, counted from its list of stages.

use crate::stage::Stage;

/// How many stages a run has and how many requests they plan (first attempts known before running; judge calls are
/// added as they come, since the pre-judge settles a share of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub stages: usize,
    pub requests: u64,
}

/// The plan of `stages`: the stamped ones (unstamped steps are not shown as stages) and their planned requests.
pub fn plan(stages: &[Stage<'_>]) -> Plan {
    let counted = stages.iter().filter(|s| s.stamped);
    Plan {
        stages: counted.clone().count(),
        requests: counted.map(|s| s.requests).sum(),
    }
}
