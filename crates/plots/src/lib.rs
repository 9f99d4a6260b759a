//! Draws the IFScale and RIFT figures as PNG and SVG from the analysis summaries, and builds the HTML report.
//!
//! Text is rendered with DejaVu Sans compiled into the crate (`fonts/DejaVuSans.ttf`, Bitstream Vera licence in
//! `fonts/LICENSE-DejaVu.txt`), so PNGs look the same on a machine without any system font. Figures carry no
//! timestamps: the same summary gives byte-identical files.
//! Each model keeps one colour across every figure (its index in the sorted model list); legends sit outside the plot
//! area; reasoning models are labelled "(r)" (see `analysis::models::ReasoningRule`).
//! `all::draw` draws every figure of what `analysis::all::analyse` computed (the caller runs the two in order);
//! `compare` draws a paired comparison's figures (`cargo xtask compare`); `html` renders `report.html` and the
//! explorer's page shell from templates with automatic escaping.
//! This crate computes no analysis and knows nothing about how the numbers were computed, models or HTTP.

pub mod all;
pub mod compare;
pub mod figure;
pub mod html;
pub mod ifscale;
pub mod report;
pub mod rift;
pub mod screenshot;
pub mod style;

use std::path::PathBuf;

/// Errors from drawing or writing figures.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("drawing {figure}: {message}")]
    Draw { figure: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] schema::Error),
    #[error(transparent)]
    Analysis(#[from] analysis::Error),
}
