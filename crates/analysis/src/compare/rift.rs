//! RIFT, model a against model b on the same prompts: per structure, the paired difference in prompt-level
//! accuracy (the unit is the prompt, so it is clustered by prompt), the answer-level difference over matched
//! questions with its clustered standard error and design effect, McNemar's test on those answers (and its clustered
//! form), and the difference between the models in the linear − jumping gap and in Δ.
//!
//! An answer is settled when it is correct, incorrect or missing; unjudged answers (nobody settled them) are left
//! out: of a prompt's accuracy denominator, as in the tables, and of the matched answers when either model's answer
//! is unjudged. A prompt whose answers are all unjudged for either model has no paired accuracy and is counted as
//! dropped.
//!
//! The gap and Δ compare question sets (`group_id`) that hold a linear and a jumping prompt for both models: the
//! unit is the question set, its linear accuracy minus its jumping accuracy per model; Δ = (A_L − A_J) ÷ A_L × 100
//! is a ratio, so only its bootstrap interval (resampling question sets) is given.

use std::collections::BTreeMap;

use serde::Serialize;

use super::binary::{self, McNemar};
use super::cluster::{self, ClusterSums, ClusteredDiff};
use super::{Diff, Options, paired, paired_diff};

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

/// One structure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StructureRow {
    pub structure: String,
    /// Prompt-level accuracy (percent), paired over prompts.
    pub prompt_level: Diff,
    /// Prompts of this structure left out: in one side only, or all answers unjudged for one model.
    pub dropped_prompts: usize,
    /// Answer-level accuracy (percent) over matched settled answers, with its clustered SE and design effect.
    pub answer_level: Option<ClusteredDiff>,
    /// Matched answers settled for both models.
    pub matched_answers: u64,
    /// Matched answers left out because either model's is unjudged.
    pub unjudged_answers: u64,
    pub mcnemar: McNemar,
    /// The clustered McNemar statistic and p-value (None without discordant answers).
    pub mcnemar_clustered: Option<(f64, f64)>,
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

/// Compares `a` with `b` (differences a − b) over the prompts both hold.
pub fn compare(
    a_name: &str,
    a: &Prompts,
    b_name: &str,
    b: &Prompts,
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
        let mut clusters = Vec::new();
        let mut discordant = Vec::new();
        let (mut matched, mut unjudged, mut b_total, mut c_total) = (0u64, 0u64, 0u64, 0u64);
        for k in &keys {
            let (Some(pa), Some(pb)) = (a.get(*k), b.get(*k)) else {
                continue;
            };
            if let (Some(x), Some(y)) = (pa.accuracy(), pb.accuracy()) {
                acc_a.push(x);
                acc_b.push(y);
            }
            let (mut ca, mut cb, mut m, mut bg, mut cg) = (0u64, 0u64, 0u64, 0u64, 0u64);
            for (va, vb) in pa.verdicts.iter().zip(&pb.verdicts) {
                if *va == UNJUDGED || *vb == UNJUDGED {
                    unjudged += 1;
                    continue;
                }
                m += 1;
                ca += u64::from(*va == RIGHT);
                cb += u64::from(*vb == RIGHT);
                bg += u64::from(*va == RIGHT && *vb != RIGHT);
                cg += u64::from(*va != RIGHT && *vb == RIGHT);
            }
            matched += m;
            b_total += bg;
            c_total += cg;
            clusters.push((ClusterSums::binary(ca, m), ClusterSums::binary(cb, m)));
            discordant.push((bg, cg));
        }
        let Some(prompt_level) = paired_diff(&acc_a, &acc_b, opts, &format!("{pair}:{s}")) else {
            continue;
        };
        let answer_level = cluster::clustered_diff(&clusters).map(|mut d| {
            d.mean_a *= 100.0;
            d.mean_b *= 100.0;
            d.diff *= 100.0;
            d.se_clustered = d.se_clustered.map(|v| v * 100.0);
            d.se_naive = d.se_naive.map(|v| v * 100.0);
            d
        });
        rows.push(StructureRow {
            structure: s.clone(),
            dropped_prompts: keys.len() - prompt_level.units,
            prompt_level,
            answer_level,
            matched_answers: matched,
            unjudged_answers: unjudged,
            mcnemar: binary::mcnemar(b_total, c_total),
            mcnemar_clustered: binary::mcnemar_clustered(&discordant),
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
        let (Some(x), Some(y)) = (pa.accuracy(), pb.accuracy()) else {
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
        let c = compare("a", &a, "b", &b, &Options::default());
        let row = &c.structures[0];
        assert_eq!(row.structure, "linear");
        assert_eq!(row.prompt_level.units, 2);
        assert_eq!(row.dropped_prompts, 1);
        // Prompt accuracies: a 75, 33.3; b 50, 75.
        assert!((row.prompt_level.mean_a - (75.0 + 100.0 / 3.0) / 2.0).abs() < 1e-12);
        assert!((row.prompt_level.mean_b - 62.5).abs() < 1e-12);
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
        let c = compare("a", &a, "b", &b, &Options::default());
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
