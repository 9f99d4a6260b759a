//! RIFT aggregation on synthetic runs: determinism, Table 2 against direct counts, the Parquet answer table, byte-identical tables.

use analysis::polars::prelude::*;
use analysis::rift::{self, RiftConfig};
use analysis::synthetic::{self, SyntheticConfig};
use schema::rift::Verdict;

pub(crate) fn small() -> SyntheticConfig {
    SyntheticConfig {
        seed: 11,
        models: 3,
        prompts_per_structure: 40,
        baseline_prompts: 30,
        min_questions: 10,
        max_questions: 60,
    }
}

#[test]
fn synthetic_runs_are_deterministic() {
    let (p1, a1) = synthetic::generate_records(&small());
    let (p2, a2) = synthetic::generate_records(&small());
    assert_eq!(p1, p2);
    assert_eq!(a1, a2);
    assert_eq!(p1.len(), 3 * (40 + 40 + 30));
    assert_eq!(
        a1.len() as u64,
        p1.iter().map(|p| u64::from(p.num_questions)).sum::<u64>()
    );
}

#[test]
fn aggregates_match_direct_counts() {
    let (prompts, answers) = synthetic::generate_records(&small());
    let pf = rift::prompts_frame(&prompts).unwrap();
    let s = rift::aggregate(
        rift::answers_frame(&answers).unwrap().lazy(),
        Some(&pf),
        &RiftConfig::default(),
    )
    .unwrap();
    assert_eq!(s.table2_source, "prompt-scores");
    assert_eq!(s.models.len(), 3);
    for row in &s.table2 {
        let accs: Vec<f64> = prompts
            .iter()
            .filter(|p| p.model == row.model && rift::structure_name(p.structure) == row.structure)
            .map(|p| f64::from(p.correct) / f64::from(p.num_questions) * 100.0)
            .collect();
        let mean = accs.iter().sum::<f64>() / accs.len() as f64;
        assert_eq!(row.n_prompts as usize, accs.len());
        assert!((row.mean.unwrap() - mean).abs() < 1e-9);
        if accs.len() > 1 {
            let var =
                accs.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / (accs.len() - 1) as f64;
            assert!((row.se.unwrap() - (var / accs.len() as f64).sqrt()).abs() < 1e-9);
        }
        let mut sorted = accs.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        assert!((row.median.unwrap() - median).abs() < 1e-9);
    }
    for d in &s.deltas {
        let (l, j) = (d.linear.unwrap(), d.jumping.unwrap());
        assert!((d.delta.unwrap() - (l - j) / l * 100.0).abs() < 1e-9);
    }
    for w in &s.wrong_question {
        let mine: Vec<_> = answers
            .iter()
            .filter(|a| a.model == w.model && rift::structure_name(a.structure) == w.structure)
            .collect();
        let incorrect = mine
            .iter()
            .filter(|a| a.verdict == Verdict::Incorrect)
            .count() as i64;
        let wq = mine
            .iter()
            .filter(|a| a.verdict == Verdict::Incorrect && a.wrong_question_of.is_some())
            .count() as i64;
        assert_eq!((w.incorrect, w.wrong_question), (incorrect, wq));
    }
    let empty: i64 = s.outcomes.iter().map(|o| o.empty).sum();
    assert_eq!(
        empty as usize,
        prompts
            .iter()
            .filter(|p| p.outcome == schema::rift::ReplyOutcome::Empty)
            .count()
    );
    assert!(!s.by_tokens.is_empty() && !s.by_depth.is_empty());
    // Depth 0 of jumping prompts: accuracy over the first answers.
    let first = s
        .by_depth
        .iter()
        .find(|p| p.structure == "jumping" && p.x == 0.0)
        .unwrap();
    let firsts: Vec<_> = answers
        .iter()
        .filter(|a| {
            a.model == first.model && a.depth == 0 && rift::structure_name(a.structure) == "jumping"
        })
        .collect();
    let acc = firsts
        .iter()
        .filter(|a| a.verdict == Verdict::Correct)
        .count() as f64
        / firsts.len() as f64
        * 100.0;
    assert!((first.accuracy - acc).abs() < 1e-9);
}

#[test]
fn parquet_answer_table_gives_the_same_table2() {
    let cfg = small();
    let (_, answers) = synthetic::generate_records(&cfg);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("answers.parquet");
    let rows = synthetic::write_answers_parquet(&cfg, &path).unwrap();
    assert_eq!(rows as usize, answers.len());
    let from_parquet = rift::aggregate_answers(rift::scan_answers_parquet(&path).unwrap()).unwrap();
    let from_records =
        rift::aggregate_answers(rift::answers_frame(&answers).unwrap().lazy()).unwrap();
    // Group order differs between the streaming and in-memory runs, so float sums may differ in the last bits.
    for (a, b) in [
        (&from_parquet.table2, &from_records.table2),
        (&from_parquet.by_depth, &from_records.by_depth),
        (&from_parquet.wrong_question, &from_records.wrong_question),
    ] {
        assert_frames_close(a, b);
    }
}

#[test]
fn batches_and_files_keep_their_codes_apart() {
    // Written in two batches whose first groups differ, and split over two files (one per half of the models):
    // the codes stay one numbering per file, and files are moved apart when joined, so the tables do not change.
    let cfg = small();
    let (_, answers) = synthetic::generate_records(&cfg);
    let from_records =
        rift::aggregate_answers(rift::answers_frame(&answers).unwrap().lazy()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (jumping, rest): (Vec<_>, Vec<_>) = answers
        .iter()
        .cloned()
        .partition(|a| a.structure == schema::rift::Structure::Jumping);
    let one = dir.path().join("one.parquet");
    let mut w = analysis::answer_table::AnswerTableWriter::create(&one);
    w.write(&jumping).unwrap();
    w.write(&rest).unwrap();
    w.finish().unwrap();
    let batched = rift::aggregate_answers(rift::scan_answers_parquet(&one).unwrap()).unwrap();
    let first_model = answers[0].model.clone();
    let (a, b): (Vec<_>, Vec<_>) = answers
        .iter()
        .cloned()
        .partition(|x| x.model == first_model);
    let mut scans = Vec::new();
    for (i, part) in [a, b].iter().enumerate() {
        let path = dir.path().join(format!("part{i}.parquet"));
        let mut w = analysis::answer_table::AnswerTableWriter::create(&path);
        w.write(part).unwrap();
        w.finish().unwrap();
        scans.push(rift::scan_answers_parquet(&path).unwrap());
    }
    let joined = rift::aggregate_answers(rift::concat_answer_tables(scans).unwrap()).unwrap();
    for got in [&batched, &joined] {
        for (x, y) in [
            (&got.table2, &from_records.table2),
            (&got.by_depth, &from_records.by_depth),
            (&got.wrong_question, &from_records.wrong_question),
        ] {
            assert_frames_close(x, y);
        }
    }
}

#[test]
fn answers_out_of_prompt_order_give_the_same_tables() {
    // The per-prompt sums take polars' sorted group-by on the prompt code when the table is in prompt order (as the
    // writers keep it), the hash group-by otherwise. A table out of that order must give the same sums: here every
    // prompt's rows spread over the table (ordered by depth, so neighbouring rows belong to different prompts), and
    // each prompt's rows together but the codes descending; in memory and from Parquet in small row groups.
    let (_, answers) = synthetic::generate_records(&small());
    let want = rift::aggregate_answers(rift::answers_frame(&answers).unwrap().lazy()).unwrap();
    let mut by_depth = answers.clone();
    by_depth.sort_by_key(|a| a.depth);
    let spread = rift::answers_frame(&by_depth).unwrap();
    let descending = rift::answers_frame(&answers)
        .unwrap()
        .sort(
            ["prompt"],
            SortMultipleOptions::default()
                .with_order_descending(true)
                .with_maintain_order(true),
        )
        .unwrap();
    let per_prompt = |df: &DataFrame| {
        df.select([
            "model",
            "structure",
            "prompt_id",
            "n",
            "correct",
            "incorrect",
            "unjudged",
            "wrong_question",
        ])
        .unwrap()
        .sort(["model", "structure", "prompt_id"], Default::default())
        .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, mut df) in [("spread", spread), ("descending", descending)] {
        let path = dir.path().join(format!("{name}.parquet"));
        ParquetWriter::new(std::fs::File::create(&path).unwrap())
            .with_row_group_size(Some(1000))
            .finish(&mut df)
            .unwrap();
        let from_memory = rift::aggregate_answers(df.lazy()).unwrap();
        let from_parquet =
            rift::aggregate_answers(rift::scan_answers_parquet(&path).unwrap()).unwrap();
        for got in [from_memory, from_parquet] {
            assert_eq!(got.per_prompt.height(), want.per_prompt.height(), "{name}");
            assert_frames_close(&per_prompt(&got.per_prompt), &per_prompt(&want.per_prompt));
            for (x, y) in [
                (&got.table2, &want.table2),
                (&got.by_depth, &want.by_depth),
                (&got.wrong_question, &want.wrong_question),
            ] {
                assert_frames_close(x, y);
            }
        }
    }
}

#[test]
fn a_run_whose_answer_table_has_no_codes_is_read_from_its_jsonl() {
    let cfg = small();
    let (_, answers) = synthetic::generate_records(&cfg);
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("models/m/answer-scores.parquet");
    std::fs::create_dir_all(old.parent().unwrap()).unwrap();
    let mut df = rift::answers_frame(&answers)
        .unwrap()
        .drop_many(["group", "prompt"]);
    ParquetWriter::new(std::fs::File::create(&old).unwrap())
        .finish(&mut df)
        .unwrap();
    rift::write_answer_tables(&dir.path().join("answer-tables.json"), &[old]).unwrap();
    let jsonl: String = answers
        .iter()
        .map(|a| serde_json::to_string(a).unwrap() + "\n")
        .collect();
    std::fs::write(dir.path().join("answer-scores.jsonl"), jsonl).unwrap();
    let (loaded, _) = rift::load_run(dir.path()).unwrap();
    let got = rift::aggregate_answers(loaded).unwrap();
    let want = rift::aggregate_answers(rift::answers_frame(&answers).unwrap().lazy()).unwrap();
    assert_frames_close(&got.table2, &want.table2);
}

fn assert_frames_close(a: &DataFrame, b: &DataFrame) {
    assert_eq!(a.shape(), b.shape());
    assert_eq!(a.get_column_names(), b.get_column_names());
    for (ca, cb) in a.columns().iter().zip(b.columns()) {
        if ca.dtype() == &DataType::Float64 {
            for (x, y) in ca.f64().unwrap().iter().zip(cb.f64().unwrap().iter()) {
                match (x, y) {
                    (Some(x), Some(y)) => {
                        assert!((x - y).abs() < 1e-9, "{}: {x} vs {y}", ca.name())
                    }
                    (x, y) => assert_eq!(x, y, "{}", ca.name()),
                }
            }
        } else {
            assert!(
                ca.as_materialized_series()
                    .equals_missing(cb.as_materialized_series()),
                "{}",
                ca.name()
            );
        }
    }
}

#[test]
fn rift_tables_are_byte_identical_and_table2_has_markdown() {
    let (prompts, answers) = synthetic::generate_records(&small());
    let pf = rift::prompts_frame(&prompts).unwrap();
    let run = |dir: &std::path::Path| {
        let s = rift::aggregate(
            rift::answers_frame(&answers).unwrap().lazy(),
            Some(&pf),
            &RiftConfig::default(),
        )
        .unwrap();
        rift::write_tables(&s, dir).unwrap()
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (wa, wb) = (run(a.path()), run(b.path()));
    for (pa, pb) in wa.iter().zip(&wb) {
        assert_eq!(
            std::fs::read(pa).unwrap(),
            std::fs::read(pb).unwrap(),
            "{}",
            pa.display()
        );
    }
    let md = std::fs::read_to_string(a.path().join("rift_table2.md")).unwrap();
    assert!(md.contains("synthetic/model-1") && md.contains("(± "));
}

/// The synthetic run with model-1's incorrect answers that answer no other question turned into unjudged ones
/// (what a run without a judge gives for answers the pre-judge cannot settle).
pub(crate) fn with_unjudged() -> (
    Vec<schema::rift::PromptScore>,
    Vec<schema::rift::AnswerScore>,
    u32,
) {
    let (mut prompts, mut answers) = synthetic::generate_records(&small());
    let mut turned = 0;
    for a in answers.iter_mut().filter(|a| {
        a.model == "synthetic/model-1"
            && a.verdict == Verdict::Incorrect
            && a.wrong_question_of.is_none()
    }) {
        a.verdict = Verdict::Unjudged;
        a.judged_by = schema::rift::JudgeSource::PreJudgeOnly;
        let p = prompts
            .iter_mut()
            .find(|p| p.prompt_id == a.prompt_id && p.model == a.model)
            .unwrap();
        p.unjudged += 1;
        turned += 1;
    }
    (prompts, answers, turned)
}

#[test]
fn unjudged_answers_leave_the_denominator_and_give_accuracy_bounds() {
    let (plain_prompts, plain_answers) = synthetic::generate_records(&small());
    let (prompts, answers, turned) = with_unjudged();
    assert!(turned > 50, "the fixture needs unjudged answers: {turned}");
    let cfg = RiftConfig::default();
    let plain = rift::aggregate_records(&plain_answers, &plain_prompts, &cfg).unwrap();
    let s = rift::aggregate_records(&answers, &prompts, &cfg).unwrap();
    let from_answers =
        rift::aggregate(rift::answers_frame(&answers).unwrap().lazy(), None, &cfg).unwrap();
    for (row, before) in s.table2.iter().zip(&plain.table2) {
        let same_table2 = from_answers
            .table2
            .iter()
            .find(|r| r.model == row.model && r.structure == row.structure)
            .unwrap();
        assert_eq!(
            (same_table2.unjudged, same_table2.answers),
            (row.unjudged, row.answers)
        );
        for (x, y) in [
            (same_table2.mean, row.mean),
            (same_table2.mean_lower, row.mean_lower),
            (same_table2.mean_upper, row.mean_upper),
        ] {
            assert!((x.unwrap() - y.unwrap()).abs() < 1e-9, "{row:?}");
        }
        if row.model != "synthetic/model-1" {
            assert_eq!(
                row, before,
                "models without unjudged answers keep their numbers"
            );
            continue;
        }
        // The lower bound counts unjudged answers wrong: the accuracy the run had with them incorrect.
        assert!((row.mean_lower.unwrap() - before.mean.unwrap()).abs() < 1e-9);
        // The judged mean leaves them out of each prompt's denominator; it lies between the bounds.
        let (lo, hi, mean) = (
            row.mean_lower.unwrap(),
            row.mean_upper.unwrap(),
            row.mean.unwrap(),
        );
        assert!(lo <= mean && mean <= hi, "{row:?}");
        if row.unjudged > 0 {
            assert!(lo < hi, "{row:?}");
        }
        let share = row.unjudged as f64 / row.answers as f64 * 100.0;
        let per_prompt: Vec<_> = prompts
            .iter()
            .filter(|p| {
                p.model == row.model && analysis::rift::structure_name(p.structure) == row.structure
            })
            .collect();
        let upper = per_prompt
            .iter()
            .map(|p| f64::from(p.correct + p.unjudged) / f64::from(p.num_questions) * 100.0)
            .sum::<f64>()
            / per_prompt.len() as f64;
        assert!((row.mean_upper.unwrap() - upper).abs() < 1e-9);
        assert!(share > 0.0 || row.structure == "baseline");
    }
    let total: i64 = s.table2.iter().map(|r| r.unjudged).sum();
    assert_eq!(total, i64::from(turned));
    // Depth and wrong-question rows count them on their own; they are never incorrect. (The depth curve leaves
    // out a depth whose every answer is unjudged: it has no judged accuracy; the depth table keeps it.)
    let depth = &s.frames["rift_accuracy_by_depth"];
    let depth_unjudged = depth.column("unjudged").unwrap().i64().unwrap().sum();
    assert_eq!(depth_unjudged, Some(i64::from(turned)));
    assert!(s.by_depth.iter().map(|p| p.unjudged).sum::<i64>() <= i64::from(turned));
    for (w, before) in s.wrong_question.iter().zip(&plain.wrong_question) {
        assert_eq!(w.wrong_question, before.wrong_question);
        assert_eq!(w.incorrect + w.unjudged, before.incorrect, "{w:?}");
    }
    // Δ: only bounds for the model with unjudged answers; the others keep one number.
    for d in &s.deltas {
        if d.model == "synthetic/model-1" {
            assert_eq!(d.delta, None);
            assert!(d.delta_lower.unwrap() < d.delta_upper.unwrap(), "{d:?}");
        } else {
            assert_eq!((d.delta_lower, d.delta_upper), (d.delta, d.delta));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    rift::write_tables(&s, dir.path()).unwrap();
    let md = std::fs::read_to_string(dir.path().join("rift_table2.md")).unwrap();
    let row1 = md
        .lines()
        .find(|l| l.starts_with("| synthetic/model-1 |"))
        .unwrap();
    let lin = s
        .table2
        .iter()
        .find(|r| r.model == "synthetic/model-1" && r.structure == "linear")
        .unwrap();
    let bounds = format!(
        "{:.2} … {:.2}",
        lin.mean_lower.unwrap(),
        lin.mean_upper.unwrap()
    );
    assert!(row1.contains(&bounds), "{row1}");
    assert!(
        !row1.contains("(± "),
        "no single mean where answers are unjudged: {row1}"
    );
    assert!(
        row1.ends_with(&format!(" {} |", {
            let u = |st: &str| {
                s.table2
                    .iter()
                    .find(|r| r.model == "synthetic/model-1" && r.structure == st)
                    .unwrap()
                    .unjudged
            };
            format!("{} / {} / {}", u("baseline"), u("linear"), u("jumping"))
        })),
        "{row1}"
    );
}

#[test]
fn answer_codes_number_groups_and_prompts_in_order_of_first_appearance() {
    let (_, mut answers) = synthetic::generate_records(&small());
    // Interleave the models' answers: codes follow the keys, not the row order.
    answers.sort_by_key(|a| (a.depth, a.model.clone()));
    let df = rift::answers_frame(&answers).unwrap();
    assert_eq!(
        df.get_column_names()
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>(),
        rift::ANSWER_COLUMNS
    );
    assert_eq!(df.schema().as_ref(), &rift::answer_schema());
    let (group, prompt) = (
        df.column("group").unwrap().u32().unwrap(),
        df.column("prompt").unwrap().u32().unwrap(),
    );
    let mut groups = std::collections::HashMap::new();
    let mut prompts = std::collections::HashMap::new();
    for (i, a) in answers.iter().enumerate() {
        let g = (a.model.clone(), a.structure);
        let next = groups.len() as u32;
        assert_eq!(group.get(i), Some(*groups.entry(g.clone()).or_insert(next)));
        let next = prompts.len() as u32;
        let p = (g, a.prompt_id.clone(), a.sample_index);
        assert_eq!(prompt.get(i), Some(*prompts.entry(p).or_insert(next)));
    }
    assert_eq!(groups.len(), 3 * 3);
}

#[test]
fn prompts_without_a_depth_zero_row_are_labelled_from_a_full_scan() {
    let (_, answers) = synthetic::generate_records(&small());
    let full = rift::aggregate_answers(rift::answers_frame(&answers).unwrap().lazy()).unwrap();
    // Without the first answer of every prompt, the labels come from each prompt's first row.
    let rest: Vec<_> = answers.iter().filter(|a| a.depth > 0).cloned().collect();
    let partial = rift::aggregate_answers(rift::answers_frame(&rest).unwrap().lazy()).unwrap();
    let with_rest = full
        .per_prompt
        .column("n")
        .unwrap()
        .i64()
        .unwrap()
        .iter()
        .filter(|n| n.unwrap() > 1)
        .count();
    assert_eq!(partial.per_prompt.height(), with_rest);
    // Baseline prompts hold one answer each, so only the linear and jumping groups of the 3 models are left.
    assert_eq!(partial.table2.height(), 2 * 3);
    let sort = |df: &DataFrame| {
        df.sort(["model", "structure", "prompt_id"], Default::default())
            .unwrap()
    };
    let (p, f) = (
        sort(&partial.per_prompt),
        sort(
            &full
                .per_prompt
                .clone()
                .lazy()
                .filter(col("n").gt(lit(1)))
                .collect()
                .unwrap(),
        ),
    );
    for c in ["model", "structure", "prompt_id"] {
        assert!(
            p.column(c)
                .unwrap()
                .as_materialized_series()
                .equals(f.column(c).unwrap().as_materialized_series()),
            "{c}"
        );
    }
}

/// A lenient judge: every seventh correct answer past the first question is also question 1's answer. Those are
/// counted as flagged and judged correct, beside (never inside) the paper's wrong-question share, which stays as it
/// was.
#[test]
fn flagged_answers_judged_correct_are_counted_apart() {
    let (prompts, plain) = synthetic::generate_records(&small());
    let mut answers = plain.clone();
    for a in answers
        .iter_mut()
        .filter(|a| a.verdict == Verdict::Correct && a.depth > 0)
        .step_by(7)
    {
        a.wrong_question_of = Some(1);
    }
    let cfg = RiftConfig::default();
    let before = rift::aggregate_records(&plain, &prompts, &cfg).unwrap();
    let s = rift::aggregate_records(&answers, &prompts, &cfg).unwrap();
    let mut total = 0;
    for (w, b) in s.wrong_question.iter().zip(&before.wrong_question) {
        let want = answers
            .iter()
            .filter(|a| {
                a.model == w.model
                    && analysis::rift::structure_name(a.structure) == w.structure
                    && a.verdict == Verdict::Correct
                    && a.wrong_question_of.is_some()
            })
            .count() as i64;
        assert_eq!(w.wrong_question_correct, want, "{w:?}");
        assert_eq!(b.wrong_question_correct, 0, "{b:?}");
        assert_eq!(
            (w.incorrect, w.wrong_question, w.share),
            (b.incorrect, b.wrong_question, b.share)
        );
        total += want;
    }
    assert!(
        total > 10,
        "the fixture needs flagged correct answers: {total}"
    );
}
