//! A sequential run's section of the report: where it stopped, why, and what the stop saved, as the pipeline
//! wrote it to `<run>/sequential.json` (its `summary` sentences and its last look as a `schema::Table`).
//! A run folder without that file (a whole-grid run) has no such section.

use plots::report::{HtmlTable, Section};
use schema::paths::RunPaths;
use serde::Deserialize;

use crate::Error;

/// The file a sequential run writes in its run folder.
pub const FILE: &str = "sequential.json";

/// The parts of `sequential.json` the report shows.
#[derive(Deserialize)]
struct Stop {
    summary: Vec<String>,
    table: schema::Table,
}

/// The "Sequential run" section, when the run stopped early by a rule.
pub(crate) fn section(paths: &RunPaths) -> Result<Option<Section>, Error> {
    let path = paths.root.join(FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(Error::Io { path, source }),
    };
    let stop: Stop = serde_json::from_slice(&bytes).map_err(|e| Error::Output {
        path: path.clone(),
        message: format!("not a sequential run's record: {e}"),
    })?;
    Ok(Some(Section {
        heading: "Sequential run".to_owned(),
        paragraphs: stop.summary,
        tables: vec![HtmlTable::from(stop.table.with_caption(
            "The stopping rule's last look: each interval (anytime-valid) and its verdict",
        ))],
        ..Section::default()
    }))
}
