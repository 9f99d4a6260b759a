//! Who answered: per model, the upstream providers, served model ids and system fingerprints its answers carry
//! (`schema::Served`, as the server reported them), with counts, from the models' own responses files (both
//! benchmarks; judges' replies are not counted).
//!
//! A router (OpenRouter) may send one model id to different upstream providers, whose quantisation and serving
//! differ; a model answered by more than one is flagged on the report's first screen and in `summary.md`. The
//! section appears only when some answer names an upstream provider or a model was served more than one way, so a
//! run on one local server reads as before.

use std::collections::{BTreeMap, BTreeSet};

use plots::report::{HtmlTable, Section};
use schema::paths::{Bench, RunPaths};

use crate::Error;

/// How many of a model's answers one (provider, served model, fingerprint) gave; "–" where the server said nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedRow {
    pub model: String,
    pub provider: String,
    pub served_model: String,
    pub fingerprint: String,
    pub answers: usize,
}

#[derive(serde::Deserialize)]
struct ServedField {
    outcome: schema::Outcome,
    #[serde(default)]
    served: Option<schema::Served>,
}

const UNSAID: &str = "–";

/// One row per model and distinct (provider, served model, fingerprint) of its answers (failed requests left out),
/// in model order.
pub fn served_rows(paths: &RunPaths, models: &[String]) -> Result<Vec<ServedRow>, Error> {
    let mut rows = Vec::new();
    for model in models {
        let mut counts: BTreeMap<(String, String, String), usize> = BTreeMap::new();
        for bench in [Bench::Ifscale, Bench::Rift] {
            let file = paths.model(bench, model).responses();
            if !file.is_file() {
                continue;
            }
            crate::overview::each_line_lenient(&file, |r: ServedField| {
                if r.outcome == schema::Outcome::Failed {
                    return true;
                }
                let s = r.served.unwrap_or_default();
                let said = |v: Option<String>| v.unwrap_or_else(|| UNSAID.to_owned());
                *counts
                    .entry((said(s.provider), said(s.model), said(s.system_fingerprint)))
                    .or_default() += 1;
                true
            })?;
        }
        rows.extend(
            counts.into_iter().map(
                |((provider, served_model, fingerprint), answers)| ServedRow {
                    model: model.clone(),
                    provider,
                    served_model,
                    fingerprint,
                    answers,
                },
            ),
        );
    }
    Ok(rows)
}

/// The models whose answers name more than one upstream provider.
pub fn mixed_providers(rows: &[ServedRow]) -> Vec<String> {
    let mut by_model: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.provider != UNSAID) {
        by_model
            .entry(r.model.as_str())
            .or_default()
            .insert(r.provider.as_str());
    }
    let mut models: Vec<String> = Vec::new();
    for r in rows {
        if by_model.get(r.model.as_str()).is_some_and(|p| p.len() > 1) && !models.contains(&r.model)
        {
            models.push(r.model.clone());
        }
    }
    models
}

/// Whether the rows are worth a section: an upstream provider named, or a model given more than one served model
/// id or fingerprint (where the server said one).
fn shown(rows: &[ServedRow]) -> bool {
    let mut per_model: BTreeMap<&str, (BTreeSet<&str>, BTreeSet<&str>)> = BTreeMap::new();
    for r in rows {
        let e = per_model.entry(r.model.as_str()).or_default();
        if r.served_model != UNSAID {
            e.0.insert(r.served_model.as_str());
        }
        if r.fingerprint != UNSAID {
            e.1.insert(r.fingerprint.as_str());
        }
    }
    rows.iter().any(|r| r.provider != UNSAID)
        || per_model.values().any(|(m, f)| m.len() > 1 || f.len() > 1)
}

/// The flag for models answered by several upstream providers (`None` when there is none).
pub fn flag(rows: &[ServedRow]) -> Option<String> {
    let mixed = mixed_providers(rows);
    (!mixed.is_empty()).then(|| {
        format!(
            "Answered by more than one upstream provider: {}. Their scores mix backends whose quantisation and serving \
             differ; pin the providers with `[models.<name>.route]` in the models file and rerun.",
            mixed.join(", ")
        )
    })
}

/// The rows as a table.
pub fn table(rows: &[ServedRow]) -> schema::Table {
    use schema::table::{left, right};
    let mut t = schema::Table::new(vec![
        left("model"),
        left("upstream provider"),
        left("served model"),
        left("system fingerprint"),
        right("answers"),
    ])
    .with_caption("Who answered each model's prompts, as the servers reported it");
    for r in rows {
        t.push(vec![
            r.model.clone(),
            r.provider.clone(),
            r.served_model.clone(),
            r.fingerprint.clone(),
            r.answers.to_string(),
        ]);
    }
    t
}

/// `summary.md`'s "Who answered" section (empty when not [`shown`]).
pub fn markdown(rows: &[ServedRow]) -> String {
    if !shown(rows) {
        return String::new();
    }
    let mut md = "## Who answered\n\n".to_owned();
    if let Some(flag) = flag(rows) {
        md.push_str(&format!("**{flag}**\n\n"));
    }
    md.push_str(&table(rows).to_markdown());
    md.push('\n');
    md
}

/// The report's sections: a warning for its first screen when a model was answered by several providers, and the
/// table (each `None` when there is nothing to show).
pub fn sections(rows: &[ServedRow]) -> (Option<Section>, Option<Section>) {
    if !shown(rows) {
        return (None, None);
    }
    let warning = flag(rows).map(|flag| Section {
        heading: "Warning: more than one upstream provider".to_owned(),
        paragraphs: vec![flag],
        ..Section::default()
    });
    let table = Section {
        heading: "Who answered".to_owned(),
        tables: vec![HtmlTable::from(table(rows))],
        ..Section::default()
    };
    (warning, Some(table))
}

/// What one side of a comparison was served by: the providers, served model ids and fingerprints its answers name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    pub providers: BTreeSet<String>,
    pub served_models: BTreeSet<String>,
    pub fingerprints: BTreeSet<String>,
}

impl Profile {
    /// `model`'s profile in the run folder `paths`.
    pub fn of(paths: &RunPaths, model: &str) -> Result<Profile, Error> {
        let mut p = Profile::default();
        for r in served_rows(paths, &[model.to_owned()])? {
            let add = |set: &mut BTreeSet<String>, v: String| {
                if v != UNSAID {
                    set.insert(v);
                }
            };
            add(&mut p.providers, r.provider);
            add(&mut p.served_models, r.served_model);
            add(&mut p.fingerprints, r.fingerprint);
        }
        Ok(p)
    }

    fn describe(&self) -> String {
        let list = |s: &BTreeSet<String>| {
            if s.is_empty() {
                UNSAID.to_owned()
            } else {
                s.iter().cloned().collect::<Vec<_>>().join(", ")
            }
        };
        format!(
            "providers {}; served models {}; fingerprints {}",
            list(&self.providers),
            list(&self.served_models),
            list(&self.fingerprints)
        )
    }
}

/// A note for `cargo xtask compare` when its sides (label, profile) were served differently, or one of them by
/// more than one upstream provider (`None` when every side was served alike by at most one).
pub fn compare_note(sides: &[(String, Profile)]) -> Option<String> {
    let differ = sides.windows(2).any(|w| {
        let (a, b) = (&w[0].1, &w[1].1);
        a.providers != b.providers
            || a.served_models != b.served_models
            || a.fingerprints != b.fingerprints
    });
    let mixed = sides.iter().any(|(_, p)| p.providers.len() > 1);
    if !(differ || mixed) {
        return None;
    }
    let each: Vec<String> = sides
        .iter()
        .map(|(label, p)| format!("{label}: {}", p.describe()))
        .collect();
    Some(format!(
        "The sides were not served alike{}: {}. A difference may come from the backend, not the model.",
        if mixed {
            " (a side was answered by more than one upstream provider)"
        } else {
            ""
        },
        each.join(" | ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(model: &str, provider: &str, fp: &str, answers: usize) -> ServedRow {
        ServedRow {
            model: model.to_owned(),
            provider: provider.to_owned(),
            served_model: "m".to_owned(),
            fingerprint: fp.to_owned(),
            answers,
        }
    }

    #[test]
    fn two_providers_are_flagged_and_one_local_server_shows_nothing() {
        let local = [row("a", UNSAID, "fp", 3)];
        assert_eq!(markdown(&local), "");
        assert!(matches!(sections(&local), (None, None)));
        let mixed = [
            row("a", "Provider A", "fp_a", 2),
            row("a", "Provider B", "fp_b", 1),
            row("b", "P", "x", 3),
        ];
        assert_eq!(mixed_providers(&mixed), vec!["a".to_owned()]);
        let md = markdown(&mixed);
        assert!(
            md.contains("**Answered by more than one upstream provider: a."),
            "{md}"
        );
        assert!(md.contains("| a | Provider B | m | fp_b | 1 |"), "{md}");
        assert!(sections(&mixed).0.is_some());
    }

    #[test]
    fn compare_notes_sides_served_differently() {
        let p = |providers: &[&str]| Profile {
            providers: providers.iter().map(|s| (*s).to_owned()).collect(),
            ..Profile::default()
        };
        let same = [("a".to_owned(), p(&["X"])), ("b".to_owned(), p(&["X"]))];
        assert_eq!(compare_note(&same), None);
        let other = [("a".to_owned(), p(&["X"])), ("b".to_owned(), p(&["Y"]))];
        let note = compare_note(&other).unwrap();
        assert!(
            note.contains("a: providers X;") && note.contains("b: providers Y;"),
            "{note}"
        );
        let mixed = [
            ("a".to_owned(), p(&["X", "Y"])),
            ("b".to_owned(), p(&["X", "Y"])),
        ];
        assert!(
            compare_note(&mixed)
                .unwrap()
                .contains("more than one upstream provider")
        );
    }
}
