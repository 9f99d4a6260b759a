//! The optional refusal judge's decisions, corrected for its measured errors: per model, the replies the refusal
//! detector could not settle that the judge decided, the share it called refusals, and that share corrected with the
//! sensitivity and specificity its control replies measured (`crate::judge_correction`, Rogan–Gladen).
//!
//! The judge "accepts" a reply when it calls it an attempt at the task (known reports are its known-correct
//! controls), so the correction is of the attempted share θ and the refused share is 1 − θ, its interval flipped.
//! Replies the detector settled never reached the judge and are not in the table; neither are replies the judge
//! gave no readable verdict for.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schema::ifscale::AttemptLog;

use crate::Error;
use crate::judge_correction::{Calibration, Count, correct};
use crate::tables;

/// The table's name.
pub const CORRECTED_TABLE: &str = "ifscale_refusal_judge_corrected";

/// Per model: (attempts the judge decided, of them called refusals), from the attempts logs.
pub fn decided(attempts: &[AttemptLog]) -> BTreeMap<String, (u64, u64)> {
    let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for a in attempts {
        if let Some(refused) = a.refusal_judge.as_ref().and_then(|j| j.refused) {
            let e = out.entry(a.model.clone()).or_default();
            e.0 += 1;
            e.1 += u64::from(refused);
        }
    }
    out
}

/// Writes [`CORRECTED_TABLE`] from the attempts logs' records when the judge decided some reply; nothing otherwise.
pub fn write_corrected(
    attempts: &[AttemptLog],
    judge: &str,
    cal: &Calibration,
    dir: &Path,
) -> Result<Vec<PathBuf>, Error> {
    let rows: Vec<Vec<String>> = decided(attempts)
        .into_iter()
        .filter_map(|(model, (judged, refused))| {
            let c = correct(
                Count::default(),
                Count::new(judged - refused, judged),
                cal,
                1.0,
            )?;
            let corrected = match &c.corrected {
                Ok(e) => format!(
                    "{:.1} % [{:.1}, {:.1}]",
                    100.0 * (1.0 - e.value),
                    100.0 * (1.0 - e.high),
                    100.0 * (1.0 - e.low)
                ),
                Err(u) => u.to_string(),
            };
            Some(vec![
                model,
                judged.to_string(),
                format!("{:.1}", 100.0 * (1.0 - c.raw)),
                corrected,
            ])
        })
        .collect();
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let (se, sp) = (cal.sensitivity, cal.specificity);
    let caption = format!(
        "Replies the refusal rules could not settle, decided by the refusal judge `{judge}`: the share it called \
         refusals, raw and corrected for its measured errors (Rogan–Gladen with its control replies: known reports \
         let stand {}/{}, known refusals caught {}/{}; 95 % delta-method interval over the replies and the control \
         replies, clipped to [0, 100])",
        se.k, se.n, sp.k, sp.n
    );
    tables::write_markdown(
        dir,
        CORRECTED_TABLE,
        &caption,
        &[
            "model",
            "replies judged",
            "refused, raw (%)",
            "refused, judge-corrected (%) [95 % interval]",
        ],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use schema::ifscale::RefusalJudgement;

    fn attempt(model: &str, refused: Option<bool>) -> AttemptLog {
        AttemptLog {
            id: "ifscale-n10-s0".to_owned(),
            model: model.to_owned(),
            attempt: 1,
            accepted: refused != Some(true),
            reason: None,
            coherence: None,
            coherence_reason: None,
            judge_error: None,
            words: 100,
            latency_s: None,
            output_tokens: None,
            reasoning_tokens: None,
            refusal_judge: Some(RefusalJudgement {
                refused,
                reason: None,
                error: refused
                    .is_none()
                    .then(|| schema::judge::JudgeFailure::Unreadable("unreadable".to_owned())),
            }),
        }
    }

    #[test]
    fn a_perfect_judge_leaves_the_share_as_it_is_and_unreadable_replies_are_left_out() {
        let mut logs = vec![
            attempt("a", Some(true)),
            attempt("a", Some(false)),
            attempt("a", Some(false)),
            attempt("a", Some(false)),
            attempt("a", None),
        ];
        logs.push(AttemptLog {
            refusal_judge: None,
            ..attempt("b", None)
        });
        assert_eq!(decided(&logs), BTreeMap::from([("a".to_owned(), (4, 1))]));

        let dir = tempfile::tempdir().unwrap();
        let cal = Calibration {
            sensitivity: Count::new(22, 22),
            specificity: Count::new(22, 22),
        };
        write_corrected(&logs, "j", &cal, dir.path()).unwrap();
        let md = std::fs::read_to_string(dir.path().join(format!("{CORRECTED_TABLE}.md"))).unwrap();
        assert!(md.contains("| a | 4 | 25.0 | 25.0 % ["), "{md}");
        assert!(md.contains("known refusals caught 22/22"), "{md}");

        // Too few controls: the reason instead of a number.
        let few = Calibration {
            sensitivity: Count::new(5, 5),
            specificity: Count::new(5, 5),
        };
        let out = dir.path().join("few");
        std::fs::create_dir_all(&out).unwrap();
        write_corrected(&logs, "j", &few, &out).unwrap();
        let md = std::fs::read_to_string(out.join(format!("{CORRECTED_TABLE}.md"))).unwrap();
        assert!(md.contains("not corrected: 5 known-correct"), "{md}");
    }
}
