//! RIFT, model a against model b on the same prompts: per structure, the paired difference in prompt-level
//! accuracy (the unit is the prompt, so it is clustered by prompt), the answer-level difference over matched
//! questions with its clustered standard error, clustering design effect and pairing gain, McNemar's test on those answers (and its clustered
//! form), and the difference between the models in the linear − jumping gap and in Δ.
//!
//! An answer is settled when it is correct, incorrect or missing; unjudged answers (nobody settled them) are left
//! out of the matched answers when either model's answer is unjudged. A prompt's accuracy is taken over the
//! questions settled for both models (the common set), so both sides of a paired difference count the same
//! questions; when one model's answer is unjudged where the other's is not, the difference over each model's own
//! settled answers (as the tables count them) is shown beside it, since the two then differ. A prompt with no
//! answer settled for both has no paired accuracy and is counted as dropped.
//!
//! With both models judged by the same checked judge ([`RiftJudge`]), the answer-level difference is also given
//! corrected for the judge's measured errors (`crate::judge_correction`): each answer the judge decided counts as
//! (y + sp − 1) ÷ J, a settled one as it is; the sampling variance is that of the paired clustered difference of
//! those values, and the judge's calibration variance enters once, shared by both sides.
//!
//! The gap and Δ compare question sets (`group_id`) that hold a linear and a jumping prompt for both models: the
//! unit is the question set, its linear accuracy minus its jumping accuracy per model; Δ = (A_L − A_J) ÷ A_L × 100
//! is a ratio, so only its bootstrap interval (resampling question sets) is given.

use std::collections::BTreeMap;

use serde::Serialize;

use super::binary::{self, McNemar};
use super::cluster::{self, ClusterSums, ClusteredDiff, PairedCluster};
use super::{Diff, Options, paired, paired_diff};
use crate::judge_correction::{self as jc, Calibration, Count, Side};

/// A verdict code: settled wrong (incorrect or missing).
pub const WRONG: u8 = 0;
/// A verdict code: settled correct.
pub const RIGHT: u8 = 1;
/// A verdict code: unjudged.
pub const UNJUDGED: u8 = 2;

/// One prompt's answers for one model.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptAnswers {
    /// "baseline", "linear" or "jumping".
    pub structure: String,
    /// The question set the prompt belongs to (shared by its linear and jumping versions).
    pub group: String,
    /// Verdict codes by depth ([`WRONG`], [`RIGHT`], [`UNJUDGED`]).
    pub verdicts: Vec<u8>,
    /// By depth, whether an LLM judge decided the verdict (empty: none did).
    pub llm: Vec<bool>,
}

impl PromptAnswers {
    /// (correct, settled) answers.
    pub fn counts(&self) -> (u64, u64) {
        let correct = self.verdicts.iter().filter(|&&v| v == RIGHT).count() as u64;
        let settled = self.verdicts.iter().filter(|&&v| v != UNJUDGED).count() as u64;
        (correct, settled)
    }

    /// Judged accuracy in percent; None when nothing was settled.
    pub fn accuracy(&self) -> Option<f64> {
        let (c, s) = self.counts();
        (s > 0).then(|| c as f64 / s as f64 * 100.0)
    }
}

/// One model's prompts by prompt key.
pub type Prompts = BTreeMap<String, PromptAnswers>;

/// The RIFT answer judge of a run and its control items.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RiftJudge {
    pub name: String,
    pub calibration: Calibration,
}

/// The answer-level difference corrected for the judge both models share (percentage points).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CorrectedDiff {
    pub judge: String,
    /// The raw answer-level difference over the same answers.
    pub raw: f64,
    /// The corrected difference and its 95 % interval, or why there is none.
    pub corrected: Option<(f64, f64, f64)>,
    pub reason: Option<String>,
}

impl CorrectedDiff {
    /// `+3.10 pp [−1.20, +7.40] vs +4.00 pp raw`, or the reason.
    pub fn describe(&self) -> String {
        let signed = |v: f64| format!("{v:+.2}");
        match (self.corrected, &self.reason) {
            (Some((v, lo, hi)), _) => format!(
                "{} pp [{}, {}] vs {} pp raw",
                signed(v),
                signed(lo),
                signed(hi),
                signed(self.raw)
            ),
            (None, r) => format!(
                "{} pp raw, {}",
                signed(self.raw),
                r.as_deref().unwrap_or("not corrected")
            ),
        }
    }
}

/// Per matched answer pair, what the corrected difference needs.
#[derive(Default)]
struct CorrectedSums {
    a: Side,
    b: Side,
    clusters: Vec<PairedCluster>,
}

impl CorrectedSums {
    fn add(
        &mut self,
        cluster: &[(u8, bool, u8, bool)],
        cal: &Calibration,
    ) -> Result<(), jc::Unstable> {
        let mut pc = PairedCluster::default();
        for &(va, la, vb, lb) in cluster {
            let (ya, yb) = (
                jc::corrected_value(va == RIGHT, la, cal)?,
                jc::corrected_value(vb == RIGHT, lb, cal)?,
            );
            for (side, v, l) in [(&mut self.a, va, la), (&mut self.b, vb, lb)] {
                let c = if l {
                    &mut side.judged
                } else {
                    &mut side.settled
                };
                *c = Count::new(c.k + u64::from(v == RIGHT), c.n + 1);
            }
            for (s, y) in [(&mut pc.a, ya), (&mut pc.b, yb)] {
                *s = ClusterSums {
                    sum: s.sum + y,
                    sum_sq: s.sum_sq + y * y,
                    count: s.count + 1.0,
                };
            }
            pc.sum_sq_diff += (ya - yb).powi(2);
        }
        self.clusters.push(pc);
        Ok(())
    }

    fn finish(&self, judge: &RiftJudge) -> Option<CorrectedDiff> {
        let rate = |s: Side| Count::new(s.settled.k + s.judged.k, s.settled.n + s.judged.n).rate();
        let raw = 100.0 * (rate(self.a)? - rate(self.b)?);
        let sampling = cluster::clustered_diff(&self.clusters)
            .and_then(|d| d.se_clustered)
            .map_or(0.0, |se| se * se);
        let (corrected, reason) =
            match jc::corrected_difference(self.a, self.b, &judge.calibration, sampling) {
                Ok(e) => (
                    e.map(|e| (100.0 * e.value, 100.0 * e.low, 100.0 * e.high)),
                    None,
                ),
                Err(u) => (None, Some(u.to_string())),
            };
        Some(CorrectedDiff {
            judge: judge.name.clone(),
            raw,
            corrected,
            reason,
        })
    }
}

/// One structure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StructureRow {
    pub structure: String,
    /// Prompt-level accuracy (percent), paired over prompts, each prompt's accuracy over the questions settled
    /// for both models.
    pub prompt_level: Diff,
    /// The same over each model's own settled answers, when those differ from the common set (an answer unjudged
    /// for one model only): what the tables count.
    pub prompt_level_own: Option<Diff>,
    /// Answers unjudged for one model and settled for the other.
    pub one_sided_unjudged: u64,
    /// Prompts of this structure left out: in one side only, or no answer settled for both models.
    pub dropped_prompts: usize,
    /// Answer-level accuracy (percent) over matched settled answers, with its clustered SE, clustering design
    /// effect and pairing gain.
    pub answer_level: Option<ClusteredDiff>,
    /// Matched answers settled for both models.
    pub matched_answers: u64,
    /// Matched answers left out because either model's is unjudged.
    pub unjudged_answers: u64,
    pub mcnemar: McNemar,
    /// The clustered McNemar statistic and p-value (None without discordant answers).
    pub mcnemar_clustered: Option<(f64, f64)>,
    /// The answer-level difference corrected for the judge both models share.
    pub judge_corrected: Option<CorrectedDiff>,
}

/// The difference between the models in the linear − jumping gap and in Δ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeltaDiff {
    /// Per question set (linear − jumping accuracy): a's gaps against b's, paired over question sets.
    pub gap: Diff,
    /// Δ of each model over the same question sets, and a's minus b's with its bootstrap interval.
    pub delta_a: Option<f64>,
    pub delta_b: Option<f64>,
    pub delta_diff: Option<f64>,
    pub delta_ci: Option<(f64, f64)>,
    /// Question sets with a linear and a jumping prompt paired for both models.
    pub groups: usize,
}

/// Model a against model b on RIFT.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RiftComparison {
    pub a: String,
    pub b: String,
    pub structures: Vec<StructureRow>,
    pub delta: Option<DeltaDiff>,
}

/// The structures in table order.
const ORDER: [&str; 3] = ["baseline", "linear", "jumping"];

fn structure_rank(s: &str) -> usize {
    ORDER.iter().position(|o| *o == s).unwrap_or(ORDER.len())
}

/// The matched answers of two prompts settled for both: (verdict a, judged a, verdict b, judged b).
fn settled_pairs(pa: &PromptAnswers, pb: &PromptAnswers) -> Vec<(u8, bool, u8, bool)> {
    let llm = |p: &PromptAnswers, i: usize| p.llm.get(i).copied().unwrap_or(false);
    pa.verdicts
        .iter()
        .zip(&pb.verdicts)
        .enumerate()
        .filter(|(_, (va, vb))| **va != UNJUDGED && **vb != UNJUDGED)
        .map(|(i, (va, vb))| (*va, llm(pa, i), *vb, llm(pb, i)))
        .collect()
}

/// Both models' accuracy (percent) over the questions of a prompt settled for both; None when there are none.
fn common_accuracy(pa: &PromptAnswers, pb: &PromptAnswers) -> Option<(f64, f64)> {
    let pairs = settled_pairs(pa, pb);
    let m = pairs.len() as f64;
    let right = |f: fn(&(u8, bool, u8, bool)) -> u8| {
        pairs.iter().filter(|p| f(p) == RIGHT).count() as f64 / m * 100.0
    };
    (m > 0.0).then(|| (right(|p| p.0), right(|p| p.2)))
}

/// Compares `a` with `b` (differences a − b) over the prompts both hold; `judge`, when both were judged by it, adds
/// the judge-corrected answer-level difference.
pub fn compare(
    a_name: &str,
    a: &Prompts,
    b_name: &str,
    b: &Prompts,
    judge: Option<&RiftJudge>,
    opts: &Options,
) -> RiftComparison {
    let pair = format!("rift:{a_name}|{b_name}");
    let mut structures: Vec<String> = a
        .values()
        .chain(b.values())
        .map(|p| p.structure.clone())
        .collect();
    structures.sort_by_key(|s| (structure_rank(s), s.clone()));
    structures.dedup();
    let mut rows = Vec::new();
    for s in &structures {
        let keys: Vec<&String> = a
            .iter()
            .chain(b.iter())
            .filter(|(_, p)| &p.structure == s)
            .map(|(k, _)| k)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let (mut acc_a, mut acc_b) = (Vec::new(), Vec::new());
        let (mut own_a, mut own_b) = (Vec::new(), Vec::new());
        let mut clusters = Vec::new();
        let mut discordant = Vec::new();
        let mut corrected = judge.map(|_| Ok(CorrectedSums::default()));
        let (mut matched, mut unjudged, mut b_total, mut c_total) = (0u64, 0u64, 0u64, 0u64);
        let mut one_sided = 0u64;
        for k in &keys {
            let (Some(pa), Some(pb)) = (a.get(*k), b.get(*k)) else {
                continue;
            };
            if let (Some(x), Some(y)) = (pa.accuracy(), pb.accuracy()) {
                own_a.push(x);
                own_b.push(y);
            }
            let pairs = settled_pairs(pa, pb);
            let both = pa.verdicts.len().min(pb.verdicts.len()) as u64;
            unjudged += both - pairs.len() as u64;
            one_sided += pa
                .verdicts
                .iter()
                .zip(&pb.verdicts)
                .filter(|(va, vb)| (**va == UNJUDGED) != (**vb == UNJUDGED))
                .count() as u64;
            let (mut ca, mut cb, mut bg, mut cg) = (0u64, 0u64, 0u64, 0u64);
            for &(va, _, vb, _) in &pairs {
                ca += u64::from(va == RIGHT);
                cb += u64::from(vb == RIGHT);
                bg += u64::from(va == RIGHT && vb != RIGHT);
                cg += u64::from(va != RIGHT && vb == RIGHT);
            }
            let m = pairs.len() as u64;
            if m > 0 {
                acc_a.push(ca as f64 / m as f64 * 100.0);
                acc_b.push(cb as f64 / m as f64 * 100.0);
            }
            matched += m;
            b_total += bg;
            c_total += cg;
            clusters.push(PairedCluster::binary(ca, cb, bg + cg, m));
            discordant.push((bg, cg));
            if let (Some(Ok(sums)), Some(j)) = (corrected.as_mut(), judge)
                && let Err(e) = sums.add(&pairs, &j.calibration)
            {
                corrected = Some(Err(e));
            }
        }
        let Some(prompt_level) = paired_diff(&acc_a, &acc_b, opts, &format!("{pair}:{s}")) else {
            continue;
        };
        let prompt_level_own = if one_sided > 0 {
            paired_diff(&own_a, &own_b, opts, &format!("{pair}:{s}:own"))
        } else {
            None
        };
        let judge_corrected = match (corrected, judge) {
            (Some(Ok(sums)), Some(j)) => sums.finish(j),
            (Some(Err(e)), Some(j)) => {
                let raw = cluster::clustered_diff(&clusters).map(|d| 100.0 * d.diff);
                raw.map(|raw| CorrectedDiff {
                    judge: j.name.clone(),
                    raw,
                    corrected: None,
                    reason: Some(e.to_string()),
                })
            }
            _ => None,
        };
        let answer_level = cluster::clustered_diff(&clusters).map(|mut d| {
            d.mean_a *= 100.0;
            d.mean_b *= 100.0;
            d.diff *= 100.0;
            d.se_clustered = d.se_clustered.map(|v| v * 100.0);
            d.se_paired = d.se_paired.map(|v| v * 100.0);
            d.se_naive = d.se_naive.map(|v| v * 100.0);
            d
        });
        rows.push(StructureRow {
            structure: s.clone(),
            dropped_prompts: keys.len() - prompt_level.units,
            prompt_level,
            prompt_level_own,
            one_sided_unjudged: one_sided,
            answer_level,
            matched_answers: matched,
            unjudged_answers: unjudged,
            mcnemar: binary::mcnemar(b_total, c_total),
            mcnemar_clustered: binary::mcnemar_clustered(&discordant),
            judge_corrected,
        });
    }
    RiftComparison {
        a: a_name.to_owned(),
        b: b_name.to_owned(),
        structures: rows,
        delta: delta_diff(a, b, opts, &pair),
    }
}

/// Per question set: (linear accuracy sum, linear prompts, jumping accuracy sum, jumping prompts) for a and b.
#[derive(Debug, Clone, Copy, Default)]
struct GroupSums {
    lin_a: f64,
    lin_b: f64,
    lin_n: f64,
    jump_a: f64,
    jump_b: f64,
    jump_n: f64,
}

/// One question set's mean accuracies: linear a, jumping a, linear b, jumping b (percent), computed once so that a
/// bootstrap resample only adds them up.
type GroupMeans = [f64; 4];

impl GroupSums {
    fn means(&self) -> GroupMeans {
        [
            self.lin_a / self.lin_n,
            self.jump_a / self.jump_n,
            self.lin_b / self.lin_n,
            self.jump_b / self.jump_n,
        ]
    }
}

/// Δ of each model from the question sets' mean linear and jumping accuracies.
fn deltas<'a>(picked: impl Iterator<Item = &'a GroupMeans>) -> (Option<f64>, Option<f64>) {
    let (mut sum, mut n) = ([0.0; 4], 0.0);
    for g in picked {
        for (s, v) in sum.iter_mut().zip(g) {
            *s += v;
        }
        n += 1.0;
    }
    let [la, ja, lb, jb] = sum.map(|v| v / n);
    let rel = |l: f64, j: f64| (l > 0.0).then(|| (l - j) / l * 100.0);
    (rel(la, ja), rel(lb, jb))
}

fn delta_diff(a: &Prompts, b: &Prompts, opts: &Options, pair: &str) -> Option<DeltaDiff> {
    let mut groups: BTreeMap<&str, GroupSums> = BTreeMap::new();
    for (k, pa) in a {
        let Some(pb) = b.get(k) else { continue };
        let Some((x, y)) = common_accuracy(pa, pb) else {
            continue;
        };
        let g = groups.entry(pa.group.as_str()).or_default();
        match pa.structure.as_str() {
            "linear" => {
                g.lin_a += x;
                g.lin_b += y;
                g.lin_n += 1.0;
            }
            "jumping" => {
                g.jump_a += x;
                g.jump_b += y;
                g.jump_n += 1.0;
            }
            _ => {}
        }
    }
    let units: Vec<GroupMeans> = groups
        .into_values()
        .filter(|g| g.lin_n > 0.0 && g.jump_n > 0.0)
        .map(|g| g.means())
        .collect();
    if units.is_empty() {
        return None;
    }
    let (gap_a, gap_b): (Vec<f64>, Vec<f64>) =
        units.iter().map(|g| (g[0] - g[1], g[2] - g[3])).unzip();
    let gap_diff = paired_diff(&gap_a, &gap_b, opts, &format!("{pair}:gap"))?;
    let (delta_a, delta_b) = deltas(units.iter());
    let delta_diff = delta_a.zip(delta_b).map(|(x, y)| x - y);
    let values = paired::bootstrap(
        opts.resamples,
        opts.seed_for(&format!("{pair}:delta")),
        |rng| {
            let pick = (0..units.len()).map(|_| &units[rng.below(units.len())]);
            match deltas(pick) {
                (Some(x), Some(y)) => x - y,
                _ => f64::NAN,
            }
        },
    );
    Some(DeltaDiff {
        gap: gap_diff,
        delta_a,
        delta_b,
        delta_diff,
        delta_ci: paired::percentile_interval(&values, 1.0 - opts.alpha),
        groups: units.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(structure: &str, group: &str, verdicts: &[u8]) -> PromptAnswers {
        PromptAnswers {
            structure: structure.to_owned(),
            group: group.to_owned(),
            verdicts: verdicts.to_vec(),
            llm: Vec::new(),
        }
    }

    #[test]
    fn matched_answers_and_prompt_accuracies_by_hand() {
        let mut a = Prompts::new();
        let mut b = Prompts::new();
        // Prompt 1: a 1 1 0 1 (75 %), b 1 0 0 1 (50 %): b = 1 discordant for a, c = 0.
        a.insert("p1".into(), prompt("linear", "g1", &[1, 1, 0, 1]));
        b.insert("p1".into(), prompt("linear", "g1", &[1, 0, 0, 1]));
        // Prompt 2: a 0 0 U 1 (1 of 3 settled), b 1 0 1 1: matched settled answers 1, 2, 4 → a 0 0 1, b 1 0 1.
        a.insert("p2".into(), prompt("linear", "g2", &[0, 0, 2, 1]));
        b.insert("p2".into(), prompt("linear", "g2", &[1, 0, 1, 1]));
        // Prompt 3 only in a: dropped.
        a.insert("p3".into(), prompt("linear", "g3", &[1]));
        let c = compare("a", &a, "b", &b, None, &Options::default());
        let row = &c.structures[0];
        assert_eq!(row.structure, "linear");
        assert_eq!(row.prompt_level.units, 2);
        assert_eq!(row.dropped_prompts, 1);
        // Prompt accuracies over the questions settled for both: a 75, 33.3; b 50, 66.7 (answers 1, 2, 4 of p2).
        assert!((row.prompt_level.mean_a - (75.0 + 100.0 / 3.0) / 2.0).abs() < 1e-12);
        assert!((row.prompt_level.mean_b - (50.0 + 200.0 / 3.0) / 2.0).abs() < 1e-12);
        // Over each model's own settled answers b's p2 is 75 %: shown beside it, since one answer is unjudged for
        // a only.
        assert_eq!(row.one_sided_unjudged, 1);
        let own = row.prompt_level_own.as_ref().unwrap();
        assert!(
            (own.mean_b - 62.5).abs() < 1e-12
                && (own.mean_a - row.prompt_level.mean_a).abs() < 1e-12
        );
        assert_eq!((row.matched_answers, row.unjudged_answers), (7, 1));
        assert_eq!((row.mcnemar.b, row.mcnemar.c), (1, 1));
        assert_eq!(row.mcnemar.p, 1.0);
        // Answer level over matched answers: a 4 of 7, b 4 of 7.
        let al = row.answer_level.unwrap();
        assert!((al.mean_a - 400.0 / 7.0).abs() < 1e-9 && al.diff.abs() < 1e-9);
        // Clustered McNemar: differences 1 and −1: X² = 0.
        assert_eq!(row.mcnemar_clustered.unwrap().0, 0.0);
    }

    #[test]
    fn the_judge_corrected_difference_by_hand() {
        // One prompt of ten answers, all decided by the judge: a 6 right, b 5; a 0.9/0.9 judge (45 of 50 each).
        // Corrected: (0.6 − 0.1)/0.8 − (0.5 − 0.1)/0.8 = 0.125, i.e. 12.5 points against 10 raw.
        let verdicts = |right: usize| (0..10).map(|i| u8::from(i < right)).collect::<Vec<u8>>();
        let mut a = Prompts::new();
        let mut b = Prompts::new();
        for (side, right) in [(&mut a, 6), (&mut b, 5)] {
            let mut p = prompt("linear", "g1", &verdicts(right));
            p.llm = vec![true; 10];
            side.insert("p1".into(), p);
        }
        let judge = |k: u64, n: u64| RiftJudge {
            name: "grader".into(),
            calibration: Calibration {
                sensitivity: Count::new(k, n),
                specificity: Count::new(k, n),
            },
        };
        let c = compare("a", &a, "b", &b, Some(&judge(45, 50)), &Options::default());
        let j = c.structures[0].judge_corrected.clone().unwrap();
        let (v, lo, hi) = j.corrected.unwrap();
        assert!(
            (j.raw - 10.0).abs() < 1e-9 && (v - 12.5).abs() < 1e-9,
            "{j:?}"
        );
        assert!(lo < v && v < hi, "{j:?}");
        assert!(j.describe().starts_with("+12.50 pp ["), "{}", j.describe());
        // Too few control items: said so, with the raw difference.
        let c = compare("a", &a, "b", &b, Some(&judge(9, 10)), &Options::default());
        let j = c.structures[0].judge_corrected.clone().unwrap();
        assert_eq!(j.corrected, None);
        assert!(
            j.describe()
                .starts_with("+10.00 pp raw, not corrected: 10 known-correct"),
            "{}",
            j.describe()
        );
        // Without a shared judge there is no corrected line.
        let c = compare("a", &a, "b", &b, None, &Options::default());
        assert_eq!(c.structures[0].judge_corrected, None);
    }

    #[test]
    fn gap_and_delta_differences_by_hand() {
        let mut a = Prompts::new();
        let mut b = Prompts::new();
        // Two question sets; a: linear 100, jumping 50 in both (gap 50, Δ 50); b: linear 100, jumping 75 (gap 25,
        // Δ 25).
        for g in ["g1", "g2"] {
            a.insert(format!("{g}-l"), prompt("linear", g, &[1, 1, 1, 1]));
            a.insert(format!("{g}-j"), prompt("jumping", g, &[1, 1, 0, 0]));
            b.insert(format!("{g}-l"), prompt("linear", g, &[1, 1, 1, 1]));
            b.insert(format!("{g}-j"), prompt("jumping", g, &[1, 1, 1, 0]));
        }
        // A baseline prompt with no jumping partner is not a question set of the gap.
        a.insert("b1".into(), prompt("baseline", "r1", &[1]));
        b.insert("b1".into(), prompt("baseline", "r1", &[0]));
        let c = compare("a", &a, "b", &b, None, &Options::default());
        let d = c.delta.unwrap();
        assert_eq!(d.groups, 2);
        assert_eq!(d.gap.diff, 25.0);
        assert_eq!(
            (d.delta_a, d.delta_b, d.delta_diff),
            (Some(50.0), Some(25.0), Some(25.0))
        );
        assert_eq!(d.delta_ci, Some((25.0, 25.0)));
        assert_eq!(
            c.structures
                .iter()
                .map(|r| r.structure.as_str())
                .collect::<Vec<_>>(),
            ["baseline", "linear", "jumping"]
        );
    }
}
