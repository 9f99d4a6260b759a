//! How many threads a sequence decodes with: a measured, self-correcting rule over per-token decode times.
//!
//! llama.cpp's CPU threads spin at a barrier after every operation of a graph. When another process takes one
//! of the cores, the thread on it is descheduled for a whole time slice while its partner spins, so a
//! two-thread decode step can take ten times as long as a one-thread step (measured in `docs/scaling.md`).
//! A fixed load threshold cannot know where that point lies, so the worker measures instead: it decodes with
//! the configured count, and now and then decodes a few tokens with the other count (one thread, or back to
//! the configured count) and keeps whichever was faster per token. [`ThreadRule`] is that decision, a pure
//! function of the step times it is given; the engine does the timing and the switching.
//!
//! - **Window**: the last [`WINDOW`] single-token decode times with the current count; its median is "now".
//! - **Probe**: when [`ThreadRule::threads`] names the other count, the next steps are a probe: the first one is
//!   not counted (it pays for the change: new threads, cold caches), then [`PROBE_STEPS`] are. A probe step slower than
//!   [`ABORT_FACTOR`] × the window's median ends the probe at once (the collapsed case costs two steps).
//! - **Decision**: the other count wins when its probe median is at least [`MARGIN`] below the window's median;
//!   then it becomes current and the probe's times its window. Otherwise nothing changes.
//! - **When to probe**: as soon as the first window is full, then after an interval that starts at
//!   [`MIN_INTERVAL`] steps, doubles each time a probe confirms the current count (up to [`MAX_INTERVAL`]) and
//!   restarts at the minimum after a switch; and at once when the window's median is more than
//!   [`DEGRADED_FACTOR`] × the best median seen since the last probe (the load changed).
//!
//! On a quiet machine with two threads faster, probes settle at one every 2 048 tokens and cost about
//! four tokens' worth of time each (0.2 %).
//!
//! `Engine::thread_use` reports how the decode steps were spread over the two counts.

/// Decode steps in the current count's window.
pub(crate) const WINDOW: usize = 16;
/// Counted steps of a probe (after one uncounted step).
pub(crate) const PROBE_STEPS: usize = 6;
/// The other count must be this much faster (as a fraction of the current median) to win.
pub(crate) const MARGIN: f64 = 0.10;
/// A probe step slower than this many current medians ends the probe (the other count is collapsing).
pub(crate) const ABORT_FACTOR: f64 = 3.0;
/// A window median this many times the best since the last probe starts a probe at once.
pub(crate) const DEGRADED_FACTOR: f64 = 2.0;
/// Steps between probes right after a switch.
pub(crate) const MIN_INTERVAL: u32 = 64;
/// Longest interval between probes.
pub(crate) const MAX_INTERVAL: u32 = 2048;

/// A change of the thread count, for the log.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Switch {
    pub from: usize,
    pub to: usize,
    /// Median seconds per token with `from` (the window before the probe).
    pub from_seconds: f64,
    /// Median seconds per token with `to` (the probe).
    pub to_seconds: f64,
}

#[derive(Debug, Clone)]
struct Probe {
    /// Steps decoded with the other count so far, counted or not.
    steps: usize,
    times: Vec<f64>,
}

/// The thread-count decision for one sequence (one worker's decoding context).
#[derive(Debug, Clone)]
pub(crate) struct ThreadRule {
    configured: usize,
    current: usize,
    window: Vec<f64>,
    /// Next slot of `window` to overwrite once it is full.
    next: usize,
    probe: Option<Probe>,
    /// Best window median with the current count since the last probe ended.
    best: f64,
    interval: u32,
    until_probe: u32,
    /// When false, [`ThreadRule::threads`] is always the current count.
    adaptive: bool,
    /// Tests only: switch between the configured count and one thread every this many steps.
    #[cfg(test)]
    alternate: Option<(u32, u32)>,
}

impl ThreadRule {
    /// A rule that adapts between `configured` and one thread (it never adapts when `configured` is 1).
    pub(crate) fn new(configured: usize) -> ThreadRule {
        ThreadRule {
            configured,
            current: configured,
            window: Vec::with_capacity(WINDOW),
            next: 0,
            probe: None,
            best: f64::INFINITY,
            interval: MIN_INTERVAL,
            until_probe: 0,
            adaptive: configured > 1,
            #[cfg(test)]
            alternate: None,
        }
    }

    /// A rule that always decodes with `threads` and never measures.
    #[cfg(test)]
    pub(crate) fn fixed(configured: usize, threads: usize) -> ThreadRule {
        ThreadRule {
            current: threads,
            adaptive: false,
            ..ThreadRule::new(configured)
        }
    }

    /// Tests only: decode `every` steps with the configured count, then `every` with one thread, and so on,
    /// so that a sequence changes its thread count many times.
    #[cfg(test)]
    pub(crate) fn alternating(configured: usize, every: u32) -> ThreadRule {
        ThreadRule {
            alternate: Some((every.max(1), 0)),
            ..ThreadRule::new(configured)
        }
    }

    /// The other count: one thread while using the configured count, the configured count while using one.
    fn other(&self) -> usize {
        if self.current == 1 {
            self.configured
        } else {
            1
        }
    }

    /// The thread count for the next decode step.
    pub(crate) fn threads(&self) -> usize {
        #[cfg(test)]
        if let Some((every, steps)) = self.alternate {
            return if (steps / every) % 2 == 0 {
                self.configured
            } else {
                1
            };
        }
        if self.probe.is_some() {
            self.other()
        } else {
            self.current
        }
    }

    /// The count that is not being probed.
    #[cfg(test)]
    pub(crate) fn current(&self) -> usize {
        self.current
    }

    /// Record one single-token decode step that took `seconds` with `threads` (the value [`Self::threads`]
    /// returned before the step). Returns the switch when the current count changed.
    pub(crate) fn record(&mut self, threads: usize, seconds: f64) -> Option<Switch> {
        #[cfg(test)]
        if let Some((_, steps)) = self.alternate.as_mut() {
            *steps += 1;
            return None;
        }
        if !self.adaptive || !seconds.is_finite() || seconds < 0.0 {
            return None;
        }
        let other_count = self.other();
        if let Some(probe) = self.probe.as_mut() {
            if threads != self.current {
                probe.steps += 1;
                if probe.steps > 1 {
                    probe.times.push(seconds);
                }
                let now = median(&self.window);
                if probe.steps > 1 && seconds > ABORT_FACTOR * now {
                    self.end_probe(None);
                    return None;
                }
                if probe.times.len() >= PROBE_STEPS {
                    let other = median(&probe.times);
                    if other < now * (1.0 - MARGIN) {
                        let switch = Switch {
                            from: self.current,
                            to: other_count,
                            from_seconds: now,
                            to_seconds: other,
                        };
                        let times = std::mem::take(&mut probe.times);
                        self.current = switch.to;
                        self.end_probe(Some(times));
                        return Some(switch);
                    }
                    self.end_probe(None);
                }
            }
            return None;
        }
        if threads != self.current {
            return None;
        }
        if self.window.len() < WINDOW {
            self.window.push(seconds);
        } else {
            self.window[self.next] = seconds;
        }
        self.next = (self.next + 1) % WINDOW;
        self.until_probe = self.until_probe.saturating_sub(1);
        if self.window.len() < WINDOW {
            return None;
        }
        let now = median(&self.window);
        self.best = self.best.min(now);
        if self.until_probe == 0 || now > DEGRADED_FACTOR * self.best {
            self.probe = Some(Probe {
                steps: 0,
                times: Vec::with_capacity(PROBE_STEPS),
            });
        }
        None
    }

    /// A probe ended: with the winner's times when it switched, `None` when the current count stays.
    fn end_probe(&mut self, switched_to: Option<Vec<f64>>) {
        self.probe = None;
        match switched_to {
            Some(times) => {
                self.best = median(&times);
                self.window = times;
                self.next = self.window.len() % WINDOW;
                self.interval = MIN_INTERVAL;
            }
            None => {
                self.best = median(&self.window);
                self.interval = (self.interval * 2).min(MAX_INTERVAL);
            }
        }
        self.until_probe = self.interval;
    }
}

/// Median of a non-empty slice (`INFINITY` for an empty one).
fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::INFINITY;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        f64::midpoint(v[n / 2 - 1], v[n / 2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drive the rule for `steps` decode steps where a step with `t` threads takes `cost(step, t)` seconds;
    /// returns the thread count of every step and the switches.
    fn drive(
        rule: &mut ThreadRule,
        steps: usize,
        cost: impl Fn(usize, usize) -> f64,
    ) -> (Vec<usize>, Vec<Switch>) {
        let mut used = Vec::with_capacity(steps);
        let mut switches = Vec::new();
        for step in 0..steps {
            let t = rule.threads();
            used.push(t);
            if let Some(s) = rule.record(t, cost(step, t)) {
                switches.push(s);
            }
        }
        (used, switches)
    }

    /// Quiet two cores: two threads take 60 % of one thread's time per token.
    fn quiet(_: usize, t: usize) -> f64 {
        if t == 2 { 0.006 } else { 0.010 }
    }

    /// The other core busy: a two-thread step waits for the descheduled thread (ten times one thread).
    fn busy(_: usize, t: usize) -> f64 {
        if t == 2 { 0.100 } else { 0.010 }
    }

    #[test]
    fn one_configured_thread_never_changes() {
        let mut rule = ThreadRule::new(1);
        let (used, switches) = drive(&mut rule, 500, busy);
        assert!(used.iter().all(|&t| t == 1));
        assert!(switches.is_empty());
    }

    #[test]
    fn quiet_machine_keeps_two_threads_and_probes_rarely() {
        let mut rule = ThreadRule::new(2);
        let (used, switches) = drive(&mut rule, 10_000, quiet);
        assert!(switches.is_empty(), "{switches:?}");
        assert_eq!(rule.current(), 2);
        let ones = used.iter().filter(|&&t| t == 1).count();
        // Probes after 16 steps, then 128, 256, 512, 1024 and every 2048 steps later: nine probes of seven steps.
        assert!(ones <= 9 * (PROBE_STEPS + 1), "{ones} one-thread steps");
        let cost: f64 = used.iter().map(|&t| quiet(0, t)).sum();
        let ideal = 10_000.0 * quiet(0, 2);
        assert!(cost / ideal < 1.01, "overhead {:.3}", cost / ideal - 1.0);
    }

    #[test]
    fn busy_machine_falls_back_to_one_thread_after_the_first_window() {
        let mut rule = ThreadRule::new(2);
        let (used, switches) = drive(&mut rule, 5_000, busy);
        assert_eq!(
            switches,
            vec![Switch {
                from: 2,
                to: 1,
                from_seconds: 0.100,
                to_seconds: 0.010
            }]
        );
        // The first window plus the probe's uncounted step and its counted steps.
        assert_eq!(
            used.iter().position(|&t| t == 1),
            Some(WINDOW),
            "probe starts once the window is full"
        );
        assert!(
            used[WINDOW + PROBE_STEPS + 1..]
                .iter()
                .filter(|&&t| t == 2)
                .count()
                < 30
        );
        // Later probes of two threads are cut short after one counted step: ~10 probes, 2 steps each.
        let cost: f64 = used.iter().map(|&t| busy(0, t)).sum();
        let ideal = 5_000.0 * busy(0, 1);
        assert!(cost / ideal < 1.2, "overhead {:.3}", cost / ideal - 1.0);
    }

    #[test]
    fn load_arriving_mid_run_is_detected_within_a_window() {
        let mut rule = ThreadRule::new(2);
        let load_at = 3_000;
        let cost = |step: usize, t: usize| {
            if step < load_at {
                quiet(step, t)
            } else {
                busy(step, t)
            }
        };
        let (used, switches) = drive(&mut rule, 4_000, cost);
        assert_eq!(switches.len(), 1, "{switches:?}");
        assert_eq!((switches[0].from, switches[0].to), (2, 1));
        let back_to_one = (load_at..4_000).find(|&s| used[s] == 1).unwrap();
        // The window's median turns after half a window; the probe then takes its seven steps.
        assert!(back_to_one - load_at <= WINDOW, "{}", back_to_one - load_at);
    }

    #[test]
    fn load_leaving_returns_to_two_threads() {
        let mut rule = ThreadRule::new(2);
        let quiet_at = 1_000;
        let cost = |step: usize, t: usize| {
            if step < quiet_at {
                busy(step, t)
            } else {
                quiet(step, t)
            }
        };
        let (_, switches) = drive(&mut rule, 4_000, cost);
        let pairs: Vec<(usize, usize)> = switches.iter().map(|s| (s.from, s.to)).collect();
        assert_eq!(pairs, [(2, 1), (1, 2)]);
        assert_eq!(rule.current(), 2);
    }

    #[test]
    fn noise_within_the_margin_does_not_switch() {
        let mut rule = ThreadRule::new(2);
        // Two threads 5 % slower than one, with a deterministic jitter of ±3 %.
        let cost = |step: usize, t: usize| {
            let jitter = [1.0, 1.03, 0.97, 1.01, 0.99][step % 5];
            if t == 2 {
                0.0105 * jitter
            } else {
                0.010 * jitter
            }
        };
        let (_, switches) = drive(&mut rule, 5_000, cost);
        assert!(switches.is_empty(), "{switches:?}");
    }

    #[test]
    fn a_single_slow_step_does_not_switch() {
        let mut rule = ThreadRule::new(2);
        let cost = |step: usize, t: usize| if step == 100 { 1.0 } else { quiet(step, t) };
        let (_, switches) = drive(&mut rule, 1_000, cost);
        assert!(switches.is_empty(), "{switches:?}");
    }

    #[test]
    fn median_of_even_and_odd_lengths() {
        assert!((median(&[3.0, 1.0, 2.0]) - 2.0).abs() < 1e-12);
        assert!((median(&[4.0, 1.0, 2.0, 3.0]) - 2.5).abs() < 1e-12);
        assert!(median(&[]).is_infinite());
    }
}
