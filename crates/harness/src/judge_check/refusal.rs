//! The refusal judge's check: hand-written replies whose verdict is known (`[judges.refusal] controls`,
//! `datasets/ifscale-refusal/controls.jsonl`), known reports (the task attempted after a caveat that sounds like
//! declining) and known refusals (a long explanation of declining), sent to the judge blind with the same rubric,
//! answer format, settings and retries as the run's own uncertain replies.
//!
//! The judge only ever sees replies the refusal detector cannot settle, so a control it would settle (not
//! `Uncertain`) is left out, as a RIFT control the pre-judge would settle is. A known report the judge lets stand
//! counts for its sensitivity, a known refusal it calls a refusal for its specificity (`ControlKind::KnownCorrect`
//! and `KnownIncorrect`), so the gate and the correction read it like the other judges.

use std::path::Path;

use schema::judge_check::{CoherenceControl, ControlKind, ControlVerdict};
use schema::{Message, PromptRecord};
use scoring::ifscale::{
    RefusalVerdict, detect_refusal, parse_refusal_verdict, refusal_judge_prompt,
};

use crate::Error;
use crate::helper::ask_until_readable;

/// One hand-written control reply.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefusalControlReply {
    pub id: String,
    /// `report` (the task attempted) or `refusal`.
    pub kind: RefusalKind,
    pub reply: String,
}

/// What a hand-written control reply is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalKind {
    Report,
    Refusal,
}

/// Fewest known reports and known refusals of each kind the committed controls hold (so the correction, which needs
/// `analysis::judge_correction::MIN_CONTROLS` of each, can use them).
pub const MIN_REFUSAL_CONTROLS: usize = 20;

/// Reads the hand-written controls and keeps, in file order and up to `per_kind` of each kind, those the refusal
/// detector leaves uncertain, as control items.
pub fn refusal_controls(path: &Path, per_kind: usize) -> Result<Vec<CoherenceControl>, Error> {
    let replies: Vec<RefusalControlReply> = schema::read_jsonl(path)
        .map_err(|e| Error::Input(format!("refusal judge controls: {e}")))?;
    let mut out = Vec::new();
    let (mut reports, mut refusals, mut settled) = (0, 0, 0);
    for r in &replies {
        if detect_refusal(&r.reply) != RefusalVerdict::Uncertain {
            settled += 1;
            continue;
        }
        let (count, kind, form) = match r.kind {
            RefusalKind::Report => (
                &mut reports,
                ControlKind::KnownCorrect,
                "hand_written_report",
            ),
            RefusalKind::Refusal => (
                &mut refusals,
                ControlKind::KnownIncorrect,
                "hand_written_refusal",
            ),
        };
        if *count == per_kind {
            continue;
        }
        *count += 1;
        let key = format!("{form}\n{}", r.reply);
        out.push(CoherenceControl {
            id: format!(
                "judge-check-refusal-{}",
                &schema::sha256_hex(key.as_bytes())[..20]
            ),
            kind,
            form: form.to_owned(),
            source: r.id.clone(),
            report: r.reply.clone(),
        });
    }
    if settled > 0 {
        tracing::warn!(
            settled,
            file = %path.display(),
            "Refusal judge controls the refusal detector settles are left out (the judge never sees such replies)."
        );
    }
    Ok(out)
}

/// The refusal judge's check: its hand-written control replies, up to `per_kind` of each kind.
pub(super) fn refusal(c: &super::Check<'_>, replies: &Path) -> Result<usize, Error> {
    let controls = refusal_controls(replies, c.plan.per_kind)?;
    schema::write_jsonl_atomic(&c.files.controls(), &controls)?;
    let prompts: Vec<PromptRecord> = controls
        .iter()
        .map(|k| PromptRecord {
            id: k.id.clone(),
            messages: vec![Message::user(refusal_judge_prompt(
                c.judge.prompt,
                &k.report,
            ))],
            sample_index: 0,
            params: c.judge.call.params(),
            extra: serde_json::Map::new(),
        })
        .collect();
    schema::write_jsonl_atomic(&c.files.judge_prompts(), &prompts)?;
    tracing::info!(controls = controls.len(), judge = %c.judge.model.name, "Checking the refusal judge with control replies.");
    let (read, sent) = ask_until_readable(
        c.client,
        c.judge.model,
        c.judge.call,
        &c.files.judge_responses(),
        &prompts,
        |text| parse_refusal_verdict(text).map_err(|e| e.to_string()),
    )?;
    let out: Vec<ControlVerdict> = controls
        .iter()
        .zip(read)
        .map(|(k, r)| ControlVerdict {
            id: k.id.clone(),
            kind: k.kind,
            form: k.form.clone(),
            // Accepted: let stand as an attempt at the task (a known report should be).
            accepted: r.ok().map(|v| !v.refused),
            score: None,
        })
        .collect();
    schema::write_jsonl_atomic(&c.files.control_verdicts(), &out)?;
    Ok(sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_controls_are_all_uncertain_to_the_detector_and_at_least_twenty_of_each_kind() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../datasets/ifscale-refusal/controls.jsonl");
        let replies: Vec<RefusalControlReply> = schema::read_jsonl(&path).unwrap();
        for r in &replies {
            assert_eq!(
                detect_refusal(&r.reply),
                RefusalVerdict::Uncertain,
                "{}: {}",
                r.id,
                r.reply
            );
        }
        let controls = refusal_controls(&path, 1_000).unwrap();
        assert_eq!(controls.len(), replies.len());
        let of = |k: ControlKind| controls.iter().filter(|c| c.kind == k).count();
        assert!(
            of(ControlKind::KnownCorrect) >= MIN_REFUSAL_CONTROLS,
            "{}",
            of(ControlKind::KnownCorrect)
        );
        assert!(
            of(ControlKind::KnownIncorrect) >= MIN_REFUSAL_CONTROLS,
            "{}",
            of(ControlKind::KnownIncorrect)
        );
        // Ids are content-addressed and distinct; `per_kind` takes the first of each kind.
        let ids: std::collections::BTreeSet<&str> =
            controls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids.len(), controls.len());
        let three = refusal_controls(&path, 3).unwrap();
        assert_eq!(three.len(), 6);
        assert_eq!(three[0], controls[0]);
    }

    #[test]
    fn a_control_the_detector_settles_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("controls.jsonl");
        let long_refusal = format!(
            "I won't write this report. {}",
            "The list combines terms that would describe harm, and that outweighs the exercise. "
                .repeat(8)
        );
        std::fs::write(
            &path,
            [
                serde_json::json!({"id": "a", "kind": "refusal", "reply": "I can't help with that."}),
                serde_json::json!({"id": "b", "kind": "report", "reply": "Revenue rose by a tenth."}),
                serde_json::json!({"id": "c", "kind": "refusal", "reply": long_refusal}),
            ]
            .iter()
            .map(|v| format!("{v}\n"))
            .collect::<String>(),
        )
        .unwrap();
        let controls = refusal_controls(&path, 10).unwrap();
        assert_eq!(controls.len(), 1, "{controls:?}");
        assert_eq!(controls[0].source, "c");
        assert_eq!(controls[0].kind, ControlKind::KnownIncorrect);
        assert_eq!(controls[0].form, "hand_written_refusal");
    }
}
