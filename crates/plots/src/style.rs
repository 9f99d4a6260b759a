//! Model colours and labels shared by every figure.
//!
//! [`ModelStyles`] gives each model one colour in every figure (its index in the sorted model list) and labels
//! reasoning models "(r)".

use std::collections::BTreeMap;

use analysis::models::ReasoningRule;
use plotters::style::RGBColor;

/// 24 distinguishable colours; the 25th model onwards gets golden-angle hues.
const PALETTE: [(u8, u8, u8); 24] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (90, 90, 90),
    (188, 189, 34),
    (23, 190, 207),
    (57, 59, 121),
    (99, 121, 57),
    (173, 127, 30),
    (132, 60, 57),
    (123, 65, 115),
    (107, 174, 214),
    (253, 174, 107),
    (116, 196, 118),
    (158, 154, 200),
    (231, 150, 156),
    (0, 0, 0),
    (255, 215, 0),
    (0, 128, 128),
    (199, 21, 133),
];

fn hue_color(i: usize) -> RGBColor {
    let h = (i as f64 * 137.508) % 360.0;
    let (s, l) = (0.65, 0.45);
    let c = (1.0 - (2.0 * l - 1.0f64).abs()) * s;
    let x = c * (1.0 - ((h / 60.0) % 2.0 - 1.0).abs());
    let m = l - c / 2.0;
    let (r, g, b) = match (h / 60.0) as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let to = |v: f64| ((v + m) * 255.0).round() as u8;
    RGBColor(to(r), to(g), to(b))
}

/// Colours and labels of every model of a figure set.
#[derive(Debug, Clone)]
pub struct ModelStyles {
    entries: BTreeMap<String, (RGBColor, String)>,
    order: Vec<String>,
}

impl ModelStyles {
    /// Styles for `models` (sorted and deduplicated here, so colours do not depend on input order).
    pub fn new(models: &[String], rule: &ReasoningRule) -> ModelStyles {
        let mut order = models.to_vec();
        order.sort();
        order.dedup();
        let entries = order
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let c = PALETTE
                    .get(i)
                    .map_or_else(|| hue_color(i), |&(r, g, b)| RGBColor(r, g, b));
                (m.clone(), (c, rule.label(m)))
            })
            .collect();
        ModelStyles { entries, order }
    }

    pub fn color(&self, model: &str) -> RGBColor {
        self.entries.get(model).map_or(RGBColor(0, 0, 0), |e| e.0)
    }

    pub fn label(&self, model: &str) -> String {
        self.entries
            .get(model)
            .map_or_else(|| model.to_owned(), |e| e.1.clone())
    }

    /// Models in colour order.
    pub fn models(&self) -> &[String] {
        &self.order
    }
}
