//! The grid a sequential run walks and the prefix of it a batch holds: IFScale seeds per density (in the order of
//! `[ifscale] seeds`), RIFT question sets per structure (in the prompt file's seeded order). The prompts stages
//! write the whole grid's prompts, then keep the prefix's lines byte for byte ([`keep_prefix`]), so a sequential
//! run's prompts, cache keys and scores are those of the full run; [`observations`] reads the per-model score
//! files back in the same fixed order.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;

use schema::paths::{Bench, RunPaths};
use serde::{Deserialize, Serialize};

/// One stratum of a benchmark: an IFScale density (`"10"`) or a RIFT structure (`"linear"`).
pub type Stratum = String;

/// Units per stratum (the grid's, or a prefix's), per benchmark, strata in the grid's order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub ifscale: Vec<(Stratum, usize)>,
    pub rift: Vec<(Stratum, usize)>,
}

impl Counts {
    pub fn of(&self, bench: Bench) -> &[(Stratum, usize)] {
        match bench {
            Bench::Ifscale => &self.ifscale,
            Bench::Rift => &self.rift,
        }
    }

    pub fn of_mut(&mut self, bench: Bench) -> &mut Vec<(Stratum, usize)> {
        match bench {
            Bench::Ifscale => &mut self.ifscale,
            Bench::Rift => &mut self.rift,
        }
    }

    pub fn get(&self, bench: Bench, stratum: &str) -> usize {
        self.of(bench)
            .iter()
            .find(|(s, _)| s == stratum)
            .map_or(0, |(_, n)| *n)
    }
}

/// The whole grid of a config: seeds per density and question sets per structure (RIFT's counted from the
/// prompts the config makes: its prepared questions must exist).
pub fn full(cfg: &crate::PipelineConfig) -> Counts {
    let mut grid = Counts::default();
    if let Some(ifs) = &cfg.ifscale {
        grid.ifscale = ifs
            .grid
            .iter()
            .map(|n| (n.to_string(), ifs.seeds.len()))
            .collect();
    }
    if let Some(rift) = &cfg.rift {
        let baseline = match rift.baseline_prompts {
            Some(n) => n as usize,
            None => std::fs::read(&rift.dataset)
                .map(|b| b.iter().filter(|&&c| c == b'\n').count())
                .unwrap_or(0),
        };
        grid.rift = [
            ("linear", rift.linear_prompts as usize),
            ("jumping", rift.jumping_prompts as usize),
            ("baseline", baseline),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| (s.to_owned(), n))
        .collect();
    }
    grid
}

/// A prompts stage's fingerprint with the prefix its batch keeps (unchanged outside a sequential run, so a
/// whole-grid run's stamps stay as they were).
pub fn fingerprint(
    fp: harness::fresh::Fingerprint,
    run: &crate::Run,
    bench: Bench,
) -> anyhow::Result<harness::fresh::Fingerprint> {
    match run.sequential.prefix() {
        Some(p) => Ok(fp.value("sequential-prefix", &p.of(bench))?),
        None => Ok(fp),
    }
}

/// The stratum and the unit's place in it of a prompt line: IFScale's density and the seed's position in
/// `seeds`, RIFT's structure and (counted by the caller) its place among that structure's prompts.
#[derive(Deserialize)]
struct Key {
    #[serde(default)]
    num_rules: Option<u32>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    structure: Option<String>,
    id: String,
}

/// Keeps the lines of the prompts file `path` that lie in `prefix` (bytes unchanged, order kept, streamed into a
/// temporary file that replaces it); returns how many.
pub fn keep_prefix(
    path: &Path,
    bench: Bench,
    prefix: &Counts,
    seeds: &[u32],
) -> anyhow::Result<usize> {
    let reader = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut n = 0;
    schema::write_atomic_with(path, |w| {
        for (i, line) in reader.lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let key: Key = serde_json::from_str(&line).map_err(|e| {
                std::io::Error::other(format!("{}: line {}: {e}", path.display(), i + 1))
            })?;
            let (stratum, index) = unit(&key, bench, seeds, &mut seen);
            if index < prefix.get(bench, &stratum) {
                w.write_all(line.as_bytes())?;
                w.write_all(b"\n")?;
                n += 1;
            }
        }
        Ok(())
    })?;
    Ok(n)
}

/// A prompt's stratum and place in it.
fn unit(
    key: &Key,
    bench: Bench,
    seeds: &[u32],
    seen: &mut BTreeMap<String, usize>,
) -> (Stratum, usize) {
    match bench {
        Bench::Ifscale => {
            let stratum = key.num_rules.unwrap_or(0).to_string();
            let index = key
                .seed
                .and_then(|s| seeds.iter().position(|&x| u64::from(x) == s))
                .unwrap_or(usize::MAX);
            (stratum, index)
        }
        Bench::Rift => {
            let stratum = key.structure.clone().unwrap_or_default();
            let slot = seen.entry(stratum.clone()).or_default();
            *slot += 1;
            (stratum, *slot - 1)
        }
    }
}

/// Each prompt id of a prompts file with its stratum and place, in file order.
pub fn units(
    path: &Path,
    bench: Bench,
    seeds: &[u32],
) -> anyhow::Result<Vec<(String, Stratum, usize)>> {
    let mut out = Vec::new();
    if !path.is_file() {
        return Ok(out);
    }
    let mut seen = BTreeMap::new();
    let file = std::fs::File::open(path)?;
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let key: Key = serde_json::from_str(&line)
            .map_err(|e| anyhow::anyhow!("{}: line {}: {e}", path.display(), i + 1))?;
        let (stratum, index) = unit(&key, bench, seeds, &mut seen);
        out.push((key.id, stratum, index));
    }
    Ok(out)
}

/// One unit's score per model (`None`: no usable score, e.g. an IFScale sample without an accepted reply).
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub stratum: Stratum,
    pub index: usize,
    pub values: Vec<Option<f64>>,
}

/// The prefix's units of `bench` with each model's accuracy, in the grid's fixed order (by place, then stratum
/// in grid order), read from the per-model score files.
pub fn observations(
    paths: &RunPaths,
    bench: Bench,
    models: &[String],
    seeds: &[u32],
    grid: &Counts,
) -> anyhow::Result<Vec<Item>> {
    let prompts = match bench {
        Bench::Ifscale => paths.ifscale_prompts(),
        Bench::Rift => paths.rift_prompts(),
    };
    let mut scores: Vec<BTreeMap<String, f64>> = Vec::new();
    for m in models {
        let files = paths.model(bench, m);
        let mut by_id = BTreeMap::new();
        match bench {
            Bench::Ifscale if files.scores().is_file() => {
                for s in schema::read_jsonl::<schema::ifscale::SampleScore>(&files.scores())? {
                    if let Some(a) = s.accuracy {
                        by_id.insert(s.id, a);
                    }
                }
            }
            Bench::Rift if files.prompt_scores().is_file() => {
                for s in schema::read_jsonl::<schema::rift::PromptScore>(&files.prompt_scores())? {
                    if s.sample_index == 0 {
                        by_id.insert(s.prompt_id, s.accuracy);
                    }
                }
            }
            _ => {}
        }
        scores.push(by_id);
    }
    let order: BTreeMap<&str, usize> = grid
        .of(bench)
        .iter()
        .enumerate()
        .map(|(i, (s, _))| (s.as_str(), i))
        .collect();
    let mut items: Vec<Item> = units(&prompts, bench, seeds)?
        .into_iter()
        .map(|(id, stratum, index)| Item {
            values: scores.iter().map(|s| s.get(&id).copied()).collect(),
            stratum,
            index,
        })
        .collect();
    items.sort_by_key(|it| {
        (
            it.index,
            order
                .get(it.stratum.as_str())
                .copied()
                .unwrap_or(usize::MAX),
        )
    });
    Ok(items)
}
