//! A call's progress bar, drawn below the command's overall line when it has one.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

pub(super) fn make_progress(
    enabled: bool,
    len: u64,
    overall: Option<(MultiProgress, ProgressBar)>,
) -> Bars {
    if !enabled {
        return Bars {
            call: ProgressBar::hidden(),
            overall: None,
        };
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr_with_hz(5));
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} {per_sec} ETA {eta} {msg}")
    {
        bar.set_style(style);
    }
    match overall {
        // Below the run's overall line.
        Some((multi, line)) => Bars {
            call: multi.add(bar),
            overall: Some(line),
        },
        None => Bars {
            call: bar,
            overall: None,
        },
    }
}

/// The per-call bar and, when the command drew one (see [`crate::Client::plan_stages`]), the overall line above it.
#[derive(Clone)]
pub(crate) struct Bars {
    call: ProgressBar,
    overall: Option<ProgressBar>,
}

impl Bars {
    pub(crate) fn inc(&self, n: u64) {
        self.call.inc(n);
        if let Some(o) = &self.overall {
            o.inc(n);
        }
    }

    /// Lengthens the call's bar (a chunk fed to a running call).
    pub(super) fn inc_length(&self, n: u64) {
        self.call.inc_length(n);
    }

    pub(super) fn set_message(&self, msg: String) {
        self.call.set_message(msg);
    }

    pub(super) fn finish_and_clear(&self) {
        self.call.finish_and_clear();
    }
}
