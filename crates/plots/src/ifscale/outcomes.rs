//! The outcome figure, `ifscale_outcomes_vs_n`: per model, accuracy against N on a log axis to 10 000 (the paper's
//! accuracy over scored samples solid, accuracy over all samples with failures as 0 dashed, the published curves to
//! 500 in grey), and below it each outcome's share of the samples, stacked to 100 %.
//!
//! Drawn only when a sample failed or the grid goes past 500, so a run of the paper's grid without failures keeps
//! exactly the figures it had.

use analysis::ifscale::IfscaleSummary;
use analysis::ifscale::outcomes::{OutcomeRow, any_failure, occurring};
use plotters::style::RGBColor;
use schema::ifscale::SampleStatus;

use crate::figure::{Figure, LegendEntry, Panel, PanelKind, Series};
use crate::style::ModelStyles;

/// The paper's largest N.
const PAPER_MAX_N: i64 = 500;
const GREY: RGBColor = RGBColor(200, 200, 200);

/// The colour of an outcome's band.
fn outcome_color(s: SampleStatus) -> RGBColor {
    match s {
        SampleStatus::Scored => RGBColor(90, 170, 90),
        SampleStatus::Refused => RGBColor(214, 39, 40),
        SampleStatus::DeclinedImpractical => RGBColor(247, 129, 191),
        SampleStatus::NoVisibleOutputWithReasoning => RGBColor(148, 103, 189),
        SampleStatus::NoVisibleOutputWithoutReasoning => RGBColor(196, 156, 148),
        SampleStatus::Truncated => RGBColor(255, 127, 14),
        SampleStatus::Incoherent => RGBColor(140, 86, 75),
        SampleStatus::KeywordList => RGBColor(23, 190, 207),
        SampleStatus::TooShort => RGBColor(188, 189, 34),
        SampleStatus::RequestFailed => RGBColor(60, 60, 60),
        SampleStatus::Failed => RGBColor(127, 127, 127),
    }
}

/// The figure, or None when no sample failed and the grid stops at 500.
pub fn outcomes_figure(summary: &IfscaleSummary, styles: &ModelStyles) -> Option<Figure> {
    let rows = &summary.outcomes;
    let max_n = rows.iter().map(|r| r.num_rules).max()?;
    if !any_failure(rows) && max_n <= PAPER_MAX_N {
        return None;
    }
    let min_n = rows.iter().map(|r| r.num_rules).min()?.max(1);
    let x_range = (
        (min_n as f64).log10().floor(),
        (max_n as f64).log10().ceil().max(4.0),
    );
    let lx = |n: i64| (n.max(1) as f64).log10();
    let published: Vec<Series> = analysis::ifscale::published::curves()
        .unwrap_or_default()
        .iter()
        .map(|c| {
            let mut s = Series::line(
                GREY,
                c.points.iter().map(|&(n, a)| (lx(n), Some(a))).collect(),
            );
            s.width = 1;
            s
        })
        .collect();
    let outcomes = occurring(rows);
    let mut panels = Vec::new();
    for m in &summary.models {
        let mine: Vec<&OutcomeRow> = rows.iter().filter(|r| &r.model == m).collect();
        let color = styles.color(m);
        let mut series = published.clone();
        series.push(Series::line(
            color,
            mine.iter()
                .map(|r| (lx(r.num_rules), r.accuracy_scored))
                .collect(),
        ));
        let mut all = Series::line(
            color,
            mine.iter()
                .map(|r| (lx(r.num_rules), r.accuracy_all))
                .collect(),
        );
        all.dashed = true;
        series.push(all);
        panels.push(Panel {
            title: format!("{m}: accuracy"),
            x_label: "N (log scale)".to_owned(),
            y_label: "accuracy (%)".to_owned(),
            x_range,
            y_range: (0.0, 105.0),
            log_y: false,
            log_x: true,
            kind: PanelKind::Lines(series),
        });
        let mut bands = Vec::new();
        let mut below = vec![0.0; mine.len()];
        for &s in &outcomes {
            let mut band = Series::line(outcome_color(s), Vec::new());
            band.band = mine
                .iter()
                .zip(below.iter_mut())
                .map(|(r, b)| {
                    let lo = *b;
                    *b += r.share(s);
                    (lx(r.num_rules), lo, *b)
                })
                .collect();
            bands.push(band);
        }
        panels.push(Panel {
            title: format!("{m}: how the samples ended"),
            x_label: "N (log scale)".to_owned(),
            y_label: "share of samples (%)".to_owned(),
            x_range,
            y_range: (0.0, 100.0),
            log_y: false,
            log_x: true,
            kind: PanelKind::Lines(bands),
        });
    }
    let mut legend: Vec<LegendEntry> = outcomes
        .iter()
        .map(|&s| LegendEntry {
            label: s.name().to_owned(),
            color: outcome_color(s),
        })
        .collect();
    legend.push(LegendEntry {
        label: "published configurations (to N = 500)".to_owned(),
        color: GREY,
    });
    Some(Figure {
        name: "ifscale_outcomes_vs_n".to_owned(),
        title: "IFScale: accuracy over scored samples (solid) and over all samples, failures as 0 (dashed); \
                how every sample ended"
            .to_owned(),
        panels,
        columns: 2,
        panel_size: (560, 380),
        legend,
        legend_title: "outcome".to_owned(),
    })
}
