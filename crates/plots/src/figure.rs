//! A small figure model (panels of lines, bands and bars, plus a legend column) rendered identically to PNG and SVG.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::Error;

static FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
static FONT_INIT: Once = Once::new();
const FAMILY: &str = "sans-serif";

fn register_font() {
    FONT_INIT.call_once(|| {
        // The font is compiled in; a failure here means the file in the repository is corrupt.
        if plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_err() {
            tracing::error!(
                "The embedded DejaVu Sans font could not be parsed; text will be missing."
            );
        }
    });
}

/// One line (optionally with a ±band and markers) in a panel.
#[derive(Debug, Clone)]
pub struct Series {
    pub color: RGBColor,
    /// `(x, y)`; `None` breaks the line (undefined value).
    pub points: Vec<(f64, Option<f64>)>,
    /// `(x, low, high)` shaded around the line.
    pub band: Vec<(f64, f64, f64)>,
    pub width: u32,
    pub markers: bool,
    pub dashed: bool,
}

impl Series {
    pub fn line(color: RGBColor, points: Vec<(f64, Option<f64>)>) -> Series {
        Series {
            color,
            points,
            band: Vec::new(),
            width: 2,
            markers: false,
            dashed: false,
        }
    }
}

/// A horizontal bar: category row, value, colour (several bars may share a row, offset by `slot`).
#[derive(Debug, Clone)]
pub struct Bar {
    pub row: usize,
    pub slot: usize,
    pub slots: usize,
    pub value: f64,
    pub color: RGBColor,
}

#[derive(Debug, Clone)]
pub enum PanelKind {
    Lines(Vec<Series>),
    /// Horizontal bars with one label per row (top to bottom).
    Bars {
        rows: Vec<String>,
        bars: Vec<Bar>,
    },
}

#[derive(Debug, Clone)]
pub struct Panel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_range: (f64, f64),
    pub y_range: (f64, f64),
    /// Values are log10 of the data; tick labels show the data values.
    pub log_y: bool,
    /// As `log_y`, for x.
    pub log_x: bool,
    pub kind: PanelKind,
}

/// A legend entry.
#[derive(Debug, Clone)]
pub struct LegendEntry {
    pub label: String,
    pub color: RGBColor,
}

#[derive(Debug, Clone)]
pub struct Figure {
    /// File stem under the figures folder.
    pub name: String,
    pub title: String,
    pub panels: Vec<Panel>,
    pub columns: usize,
    pub panel_size: (u32, u32),
    pub legend: Vec<LegendEntry>,
    pub legend_title: String,
}

const TITLE_H: u32 = 44;

thread_local! {
    /// The mark drawn in red before every figure's title while [`with_title_mark`] runs.
    static TITLE_MARK: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with every figure it writes marked in its title (`judge failed its check (…)` for figures built from a
/// judge that failed its check); `None` draws titles as they are.
pub fn with_title_mark<T>(mark: Option<&str>, f: impl FnOnce() -> T) -> T {
    let before = TITLE_MARK.with(|m| m.replace(mark.map(str::to_owned)));
    let out = f();
    TITLE_MARK.with(|m| m.replace(before));
    out
}
const LEGEND_ROW: u32 = 19;

impl Figure {
    fn legend_columns(&self) -> u32 {
        if self.legend.is_empty() {
            return 0;
        }
        let rows = self.panels.len().div_ceil(self.columns.max(1)) as u32;
        let plot_h = rows * self.panel_size.1;
        let per_col = ((plot_h.saturating_sub(30)) / LEGEND_ROW).max(8);
        (self.legend.len() as u32).div_ceil(per_col)
    }

    fn legend_width(&self) -> u32 {
        let longest = self
            .legend
            .iter()
            .map(|e| e.label.chars().count())
            .max()
            .unwrap_or(0) as u32;
        let title = self.legend_title.chars().count() as u32 * 9 + 10;
        (self.legend_columns() * (longest * 8 + 40)).max(title)
    }

    pub fn size(&self) -> (u32, u32) {
        let cols = self.columns.max(1) as u32;
        let rows = self.panels.len().div_ceil(self.columns.max(1)) as u32;
        let legend_h = if self.legend.is_empty() {
            0
        } else {
            self.legend.len() as u32 * LEGEND_ROW / self.legend_columns().max(1) + 60
        };
        (
            cols * self.panel_size.0 + self.legend_width() + 10,
            TITLE_H + (rows * self.panel_size.1).max(legend_h),
        )
    }

    /// Writes `<dir>/<name>.png` and `<dir>/<name>.svg` atomically.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, Error> {
        register_font();
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.to_owned(),
            source,
        })?;
        let size = self.size();
        let err = |message: String| Error::Draw {
            figure: self.name.clone(),
            message,
        };

        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
            self.render(&root).map_err(err)?;
            root.present().map_err(|e| err(e.to_string()))?;
        }
        let svg_path = dir.join(format!("{}.svg", self.name));
        schema::write_atomic(&svg_path, svg.as_bytes())?;

        // The bitmap backend writes the file itself on present(); draw to a temporary .png name, then rename.
        let png_path = dir.join(format!("{}.png", self.name));
        let tmp = dir.join(format!(".{}.{}.tmp.png", self.name, std::process::id()));
        {
            let root = BitMapBackend::new(&tmp, size).into_drawing_area();
            self.render(&root).map_err(err)?;
            root.present().map_err(|e| err(e.to_string()))?;
        }
        std::fs::rename(&tmp, &png_path).map_err(|source| Error::Io {
            path: png_path.clone(),
            source,
        })?;
        Ok(vec![png_path, svg_path])
    }

    fn render<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
        root.fill(&WHITE).map_err(e)?;
        let (w, h) = self.size();
        let (title, colour) = match TITLE_MARK.with(|m| m.borrow().clone()) {
            Some(mark) => (format!("[{mark}] {}", self.title), RED),
            None => (self.title.clone(), BLACK),
        };
        root.draw_text(
            &title,
            &TextStyle::from((FAMILY, 22).into_font()).color(&colour),
            (12, 12),
        )
        .map_err(e)?;
        let body = root.margin(TITLE_H, 0, 0, 0);
        let legend_w = self.legend_width();
        let (plots, legend) = body.split_horizontally(w.saturating_sub(legend_w + 10));
        let cols = self.columns.max(1);
        let rows = self.panels.len().div_ceil(cols);
        let plot_h = rows as u32 * self.panel_size.1;
        let (grid_area, _) = plots.split_vertically(plot_h.min(h - TITLE_H));
        let cells = grid_area.split_evenly((rows, cols));
        for (panel, cell) in self.panels.iter().zip(cells.iter()) {
            draw_panel(panel, cell).map_err(e)?;
        }
        if !self.legend.is_empty() {
            self.draw_legend(&legend).map_err(e)?;
        }
        Ok(())
    }

    fn draw_legend<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let font = TextStyle::from((FAMILY, 14).into_font()).color(&BLACK);
        area.draw_text(
            &self.legend_title,
            &TextStyle::from((FAMILY, 15).into_font()).color(&BLACK),
            (4, 8),
        )?;
        let ncols = self.legend_columns().max(1) as usize;
        let per_col = self.legend.len().div_ceil(ncols);
        let col_w = self.legend_width() / ncols as u32;
        for (i, entry) in self.legend.iter().enumerate() {
            let (c, r) = (i / per_col, i % per_col);
            let x = 4 + c as i32 * col_w as i32;
            let y = 34 + r as i32 * LEGEND_ROW as i32;
            area.draw(&Rectangle::new(
                [(x, y + 4), (x + 22, y + 8)],
                entry.color.filled(),
            ))?;
            area.draw_text(&entry.label, &font, (x + 28, y - 1))?;
        }
        Ok(())
    }
}

fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        return "0".to_owned();
    }
    let a = v.abs();
    if a >= 1000.0 || (a - a.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

fn fmt_log_tick(v: f64) -> String {
    fmt_tick(10f64.powf(v))
}

fn draw_panel<DB: DrawingBackend>(
    panel: &Panel,
    area: &DrawingArea<DB, Shift>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (x0, x1) = usable_range(panel.x_range);
    let (y0, y1) = usable_range(panel.y_range);
    let bars = matches!(panel.kind, PanelKind::Bars { .. });
    let label_area = if let PanelKind::Bars { rows, .. } = &panel.kind {
        rows.iter().map(|r| r.chars().count()).max().unwrap_or(4) as u32 * 7 + 12
    } else {
        58
    };
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, (FAMILY, 16))
        .margin(8)
        .x_label_area_size(42)
        .y_label_area_size(label_area)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    let row_labels: Vec<String> = match &panel.kind {
        PanelKind::Bars { rows, .. } => rows.clone(),
        PanelKind::Lines(_) => Vec::new(),
    };
    let nrows = row_labels.len();
    let bar_label = move |v: &f64| -> String {
        // Rows are drawn top to bottom: row i sits at y = nrows − i − 0.5.
        let idx = nrows as f64 - v - 0.5;
        if (idx - idx.round()).abs() < 1e-6 && idx >= 0.0 && (idx.round() as usize) < nrows {
            row_labels[idx.round() as usize].clone()
        } else {
            String::new()
        }
    };
    let log_y = panel.log_y;
    let y_fmt = move |v: &f64| {
        if log_y {
            fmt_log_tick(*v)
        } else {
            fmt_tick(*v)
        }
    };
    let log_x = panel.log_x;
    let x_fmt = move |v: &f64| {
        if log_x {
            fmt_log_tick(*v)
        } else {
            fmt_tick(*v)
        }
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(panel.x_label.as_str())
        .y_desc(panel.y_label.as_str())
        .axis_desc_style((FAMILY, 14))
        .label_style((FAMILY, 12))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(210, 210, 210))
        .x_label_formatter(&x_fmt);
    if log_x {
        // One label per decade.
        mesh.x_labels((x1 - x0).ceil() as usize + 1);
    }
    if bars {
        mesh.y_labels(nrows * 2 + 1)
            .y_label_formatter(&bar_label)
            .disable_y_mesh();
    } else {
        mesh.y_label_formatter(&y_fmt);
    }
    mesh.draw()?;

    match &panel.kind {
        PanelKind::Lines(series) => {
            for s in series {
                if s.band.len() >= 2 {
                    let mut poly: Vec<(f64, f64)> =
                        s.band.iter().map(|b| (b.0, b.2.clamp(y0, y1))).collect();
                    poly.extend(s.band.iter().rev().map(|b| (b.0, b.1.clamp(y0, y1))));
                    chart.draw_series(std::iter::once(Polygon::new(
                        poly,
                        s.color.mix(0.18).filled(),
                    )))?;
                }
            }
            for s in series {
                let style = s.color.stroke_width(s.width);
                for segment in segments(&s.points) {
                    if segment.len() == 1 {
                        chart.draw_series(std::iter::once(Circle::new(
                            segment[0],
                            3,
                            s.color.filled(),
                        )))?;
                    } else if s.dashed {
                        chart.draw_series(DashedLineSeries::new(segment.clone(), 6, 4, style))?;
                    } else {
                        chart.draw_series(LineSeries::new(segment.clone(), style))?;
                    }
                    if s.markers {
                        chart.draw_series(
                            segment.iter().map(|&p| Circle::new(p, 3, s.color.filled())),
                        )?;
                    }
                }
            }
        }
        PanelKind::Bars { rows, bars } => {
            let n = rows.len() as f64;
            for b in bars {
                let top = n - b.row as f64 - 0.1;
                let h = 0.8 / b.slots.max(1) as f64;
                let y_top = top - h * b.slot as f64;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y_top - h), (b.value, y_top)],
                    b.color.filled(),
                )))?;
            }
        }
    }
    Ok(())
}

/// Splits a series at undefined values into drawable runs.
fn segments(points: &[(f64, Option<f64>)]) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for &(x, y) in points {
        match y {
            Some(y) if y.is_finite() => cur.push((x, y)),
            _ => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A y range padded by 5 % that contains every defined value (and `floor` when given).
/// A range plotters can draw: finite and of positive width (plotters' tick search never ends otherwise).
fn usable_range((lo, hi): (f64, f64)) -> (f64, f64) {
    match (lo.is_finite(), hi.is_finite()) {
        (true, true) if hi - lo > 1e-9 => (lo, hi),
        (true, true) => (lo - 1.0, lo + 1.0),
        (true, false) => (lo, lo + 1.0),
        (false, true) => (hi - 1.0, hi),
        (false, false) => (0.0, 1.0),
    }
}

pub fn auto_range(values: impl Iterator<Item = f64>, floor: Option<f64>) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if let Some(f) = floor {
        lo = lo.min(f);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if !hi.is_finite() {
        // Only the floor was finite (every value missing): a unit range above it.
        return (lo, lo + 1.0);
    }
    if hi - lo < 1e-9 {
        return (lo - 1.0, hi + 1.0);
    }
    let pad = (hi - lo) * 0.05;
    (
        if floor.is_some_and(|f| f >= lo) {
            lo
        } else {
            lo - pad
        },
        hi + pad,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_always_finite_and_wide() {
        // Every value missing but a floor: the case that once made plotters' tick search spin forever.
        assert_eq!(
            auto_range([f64::NAN, f64::INFINITY].into_iter(), Some(0.0)),
            (0.0, 1.0)
        );
        assert_eq!(auto_range(std::iter::empty(), None), (0.0, 1.0));
        assert_eq!(auto_range([3.0, 3.0].into_iter(), None), (2.0, 4.0));
        assert_eq!(usable_range((0.0, f64::NEG_INFINITY)), (0.0, 1.0));
        assert_eq!(usable_range((f64::NAN, 5.0)), (4.0, 5.0));
        assert_eq!(usable_range((2.0, 2.0)), (1.0, 3.0));
        assert_eq!(usable_range((0.0, 10.0)), (0.0, 10.0));
    }
}
