//! Shards: one run split over several processes or machines, each sending a deterministic, balanced share of the
//! run's units into a run folder of its own, which `crate::merge` puts back together.
//!
//! A unit is one benchmark item of one model (`bench`, model name, prompt id: stable across machines, since the
//! prompts are). Every shard computes the same assignment: the units sorted by expected cost (the prompt's input
//! tokens as the client estimates them, plus its output cap), largest first, each given to the shard with the least
//! expected cost so far (ties to the lower index, then by id), so shards finish at about the same time whatever the
//! mix of prompt sizes.
//!
//! A shard is a filter on the run's stage list ([`filter`]): the shared stages (vocabulary, Jeopardy! preparation,
//! both prompt files) run first and identically in every shard; then the per-model stages, each reading only its
//! shard's prompts (`Run::prompts_for`, a per-model `shard-prompts.jsonl`); the judge checks run in shard 0 only.
//! The joins, the gate, the analysis, the explorer and the report run once, on the merged run. A shard ends by
//! writing `shard.json` ([`Manifest`]), which the merge checks.
//!
//! It knows nothing about flags or the environment's names beyond the scheduler variables it is handed
//! ([`Shard::parse`]), and sends nothing itself.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use inference_client::{ModelConfig, estimate_input_tokens};
use schema::PromptRecord;
use schema::env::EnvVars;
use schema::paths::Bench;

use crate::Run;
use crate::outcome::usage;
use crate::stage::{Ctx, Sharded, Stage};

/// The file a shard writes when it finishes, in its run folder.
pub const MANIFEST: &str = "shard.json";

/// The output tokens a request without any cap is expected to cost, for balancing only.
const UNCAPPED_OUTPUT: u64 = 1024;

/// Which share of a run this process sends: shard `index` (from 0) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Reads `I/N` (0 ≤ I < N) or `auto/N`: the index from Kubernetes' `JOB_COMPLETION_INDEX`, else Slurm's
    /// `SLURM_ARRAY_TASK_ID` as it is (the array numbered from 0, `--array=0-<N-1>`), of the `N` the flag gives;
    /// `var` looks up the environment.
    ///
    /// The count always comes from the flag. A scheduler's own count describes one submission, not the run: a task
    /// resubmitted alone (`sbatch --array=1 …`) sees `SLURM_ARRAY_TASK_MIN=1` and `SLURM_ARRAY_TASK_COUNT=1`, and
    /// reading them ran the whole run as shard 0/1 instead of shard 1 of 3. So `auto` without `/N` is refused, and
    /// so is a Slurm array whose task ids reach past `N − 1` (`SLURM_ARRAY_TASK_MAX`).
    pub fn parse(spec: &str, var: impl Fn(&str) -> Option<String>) -> Result<Shard, String> {
        let number = |what: &str, text: &str| {
            text.trim()
                .parse::<usize>()
                .map_err(|_| format!("--shard {spec}: {what} {text:?} is not a whole number"))
        };
        let env = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let (index, count) = match spec.split_once('/') {
            None if spec == "auto" => {
                return Err(format!(
                    "--shard auto: give the number of shards, --shard auto/N (a scheduler's task count is that of one \
                     submission: a task resubmitted alone sees {}=1, not the run's N)",
                    EnvVars::SLURM_ARRAY_TASK_COUNT
                ));
            }
            None => return Err(format!("--shard {spec}: expected I/N or auto/N")),
            Some(("auto", n)) => {
                let count = number("the count", n)?;
                let index = if let Some(i) = env(EnvVars::JOB_COMPLETION_INDEX) {
                    number(EnvVars::JOB_COMPLETION_INDEX, &i)?
                } else if let Some(id) = env(EnvVars::SLURM_ARRAY_TASK_ID) {
                    if let Some(max) = env(EnvVars::SLURM_ARRAY_TASK_MAX) {
                        let max = number(EnvVars::SLURM_ARRAY_TASK_MAX, &max)?;
                        if max >= count {
                            return Err(format!(
                                "--shard {spec}: this Slurm array's task ids reach {max}, but shards are numbered 0 to \
                                 {}: submit the array as --array=0-{}",
                                count.saturating_sub(1),
                                count.saturating_sub(1)
                            ));
                        }
                    }
                    number(EnvVars::SLURM_ARRAY_TASK_ID, &id)?
                } else {
                    return Err(format!(
                        "--shard {spec} needs {} (a Kubernetes indexed Job) or {} (a Slurm job array); elsewhere give \
                         --shard I/N",
                        EnvVars::JOB_COMPLETION_INDEX,
                        EnvVars::SLURM_ARRAY_TASK_ID
                    ));
                };
                (index, count)
            }
            Some((i, n)) => (number("the index", i)?, number("the count", n)?),
        };
        if count == 0 || index >= count {
            return Err(format!(
                "--shard {spec}: shard {index} of {count} does not exist (shards are numbered 0 to N-1)"
            ));
        }
        Ok(Shard { index, count })
    }

    /// `I/N`, as the flag gives it and errors name it.
    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }

    /// The shard's own run folder beside the run's: `<run>-shard-<I>-of-<N>`.
    pub fn run_dir(&self, run: &Path) -> PathBuf {
        let mut name = run.as_os_str().to_owned();
        name.push(format!("-shard-{}-of-{}", self.index, self.count));
        PathBuf::from(name)
    }
}

/// The split a shard folder's name says (`…-shard-<I>-of-<N>`), when it is one of `base`'s.
fn split_of(base: &str, name: &str) -> Option<(usize, usize)> {
    let rest = name.strip_prefix(base)?.strip_prefix("-shard-")?;
    let (i, n) = rest.split_once("-of-")?;
    Some((i.parse().ok()?, n.parse().ok()?))
}

/// Refuses a split that contradicts what the run already has: a manifest in `own` (the shard's folder) of another
/// shard, or (when the folder was derived from the run's, `siblings`) shard folders beside `base` of another count.
/// Either means the flag or the scheduler gave another split than the one the run was started with (a task
/// resubmitted with the wrong `--array` or `--shard`), and running it would write a share no merge can use.
pub fn check_split(base: &Path, own: &Path, shard: Shard, siblings: bool) -> Result<(), String> {
    let manifest = own.join(MANIFEST);
    if let Ok(text) = std::fs::read_to_string(&manifest) {
        let m: Manifest =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", manifest.display()))?;
        if (m.index, m.count) != (shard.index, shard.count) {
            return Err(format!(
                "--shard {}: {} is shard {}/{} of this run; give --shard {}/{} to resume it, or another --run-dir",
                shard.label(),
                own.display(),
                m.index,
                m.count,
                m.index,
                m.count
            ));
        }
    }
    if !siblings {
        return Ok(());
    }
    let (Some(dir), Some(name)) = (base.parent(), base.file_name().and_then(|n| n.to_str())) else {
        return Ok(());
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut other: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            let file = e.file_name().to_str()?.to_owned();
            let (_, n) = split_of(name, &file)?;
            (n != shard.count).then(|| dir.join(file).display().to_string())
        })
        .collect();
    if other.is_empty() {
        return Ok(());
    }
    other.sort();
    Err(format!(
        "--shard {}: this run is already split another way ({}); give the same N as those shards, or remove their \
         folders to split it anew",
        shard.label(),
        other.join(", ")
    ))
}

/// One benchmark item of one model.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unit {
    pub bench: &'static str,
    pub model: String,
    pub id: String,
}

/// The shard each unit goes to (in the order of `units`): largest expected cost first, to the least-loaded shard.
pub fn assign(units: &[(Unit, f64)], count: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by(|&a, &b| {
        units[b]
            .1
            .total_cmp(&units[a].1)
            .then_with(|| units[a].0.cmp(&units[b].0))
    });
    let mut load = vec![0.0f64; count.max(1)];
    let mut to = vec![0; units.len()];
    for i in order {
        let (shard, _) = load
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0)))
            .unwrap_or((0, &0.0));
        load[shard] += units[i].1;
        to[i] = shard;
    }
    to
}

/// What a shard finds when it first needs its share: its units and the whole assignment's digest.
#[derive(Debug)]
struct Share {
    mine: BTreeSet<Unit>,
    total: usize,
    cost: f64,
    total_cost: f64,
    digest: String,
}

/// A run's shard and its share, computed once the prompt files exist.
#[derive(Debug)]
pub struct Sharding {
    pub shard: Shard,
    share: OnceLock<Share>,
}

impl Sharding {
    pub fn new(shard: Shard) -> Sharding {
        Sharding {
            shard,
            share: OnceLock::new(),
        }
    }
}

/// The expected cost of one request of `model` for `prompt`: its input tokens plus its output cap.
fn expected_cost(prompt: &PromptRecord, model: &ModelConfig) -> f64 {
    let out = prompt
        .params
        .max_tokens
        .or(model.max_tokens)
        .map_or(UNCAPPED_OUTPUT, u64::from);
    (estimate_input_tokens(prompt) + out) as f64
}

/// Every unit of `run` with its expected cost, in a stable order, from its prompt files.
fn units(run: &Run) -> anyhow::Result<Vec<(Unit, f64)>> {
    let mut prompts = Vec::new();
    for bench in [Bench::Ifscale, Bench::Rift] {
        if let Some(file) = bench_prompts(run, bench).filter(|f| f.is_file()) {
            prompts.push((bench, harness::read_prompts(&file)?));
        }
    }
    let lists: Vec<(Bench, &[PromptRecord])> =
        prompts.iter().map(|(b, p)| (*b, p.as_slice())).collect();
    Ok(units_of(run, &lists))
}

/// Every unit of `run`'s models over the prompts of each benchmark, with its expected cost, in a stable order.
fn units_of(run: &Run, prompts: &[(Bench, &[PromptRecord])]) -> Vec<(Unit, f64)> {
    let mut units = Vec::new();
    for (bench, prompts) in prompts {
        for model in &run.models {
            for p in prompts.iter() {
                let unit = Unit {
                    bench: bench.as_str(),
                    model: model.name.clone(),
                    id: p.id.clone(),
                };
                units.push((unit, expected_cost(p, model)));
            }
        }
    }
    units.sort_by(|a, b| a.0.cmp(&b.0));
    units
}

/// What a shard of `run` would send, from prompts made in memory (the dry run's and the pilot's, before any prompt
/// file exists): its units (the same assignment as the shard's own, `Run::prompts_for`) and the line that says its
/// share of the run's units and expected cost. `None` when a benchmark's prompts cannot be made yet (`prompts` is
/// `None`): the line then says the estimate is the whole run's.
pub fn share_of(
    run: &Run,
    shard: Shard,
    prompts: Option<&[(Bench, &[PromptRecord])]>,
) -> (Option<std::rc::Rc<BTreeSet<Unit>>>, String) {
    let Some(prompts) = prompts else {
        return (
            None,
            format!(
                "shard {}: its share cannot be computed before every benchmark's prompts can be made; the rows are \
                 the whole run's.",
                shard.label()
            ),
        );
    };
    let all = units_of(run, prompts);
    let to = assign(&all, shard.count);
    let (mut mine, mut cost, mut total) = (BTreeSet::new(), 0.0, 0.0);
    for ((unit, c), s) in all.iter().zip(&to) {
        total += c;
        if *s == shard.index {
            mine.insert(unit.clone());
            cost += c;
        }
    }
    let line = format!(
        "shard {}: {} of {} units ({:.1} % of the expected cost); the rows are this shard's share.",
        shard.label(),
        mine.len(),
        all.len(),
        if total > 0.0 {
            100.0 * cost / total
        } else {
            0.0
        }
    );
    (Some(std::rc::Rc::new(mine)), line)
}

/// Whether `model` sends prompt `id` of `bench`: always in a whole run, or when a shard's `share` holds it.
pub fn contains(share: Option<&BTreeSet<Unit>>, bench: Bench, model: &str, id: &str) -> bool {
    share.is_none_or(|share| {
        share.contains(&Unit {
            bench: bench.as_str(),
            model: model.to_owned(),
            id: id.to_owned(),
        })
    })
}

/// The prompts of `bench` that `model` sends: all of `prompts`, or those of a shard's `share`.
pub fn keep<'p>(
    share: Option<&BTreeSet<Unit>>,
    bench: Bench,
    model: &str,
    prompts: &'p [PromptRecord],
) -> std::borrow::Cow<'p, [PromptRecord]> {
    let Some(share) = share else {
        return std::borrow::Cow::Borrowed(prompts);
    };
    std::borrow::Cow::Owned(
        prompts
            .iter()
            .filter(|p| contains(Some(share), bench, model, &p.id))
            .cloned()
            .collect(),
    )
}

/// The run's prompts file of `bench`, when the config has that benchmark.
fn bench_prompts(run: &Run, bench: Bench) -> Option<PathBuf> {
    match bench {
        Bench::Ifscale => run
            .cfg
            .ifscale
            .as_ref()
            .map(|_| run.paths.ifscale_prompts()),
        Bench::Rift => run.cfg.rift.as_ref().map(|_| run.paths.rift_prompts()),
    }
}

impl Run {
    /// This shard's share, computed the first time it is needed (after the shared stages wrote the prompts).
    fn share<'s>(&self, sharding: &'s Sharding) -> anyhow::Result<&'s Share> {
        if let Some(s) = sharding.share.get() {
            return Ok(s);
        }
        let all = units(self)?;
        let to = assign(&all, sharding.shard.count);
        let mut digest = String::new();
        let (mut mine, mut cost, mut total_cost) = (BTreeSet::new(), 0.0, 0.0);
        for ((unit, c), shard) in all.iter().zip(&to) {
            digest.push_str(&format!(
                "{}\t{}\t{}\t{shard}\n",
                unit.bench, unit.model, unit.id
            ));
            total_cost += c;
            if *shard == sharding.shard.index {
                mine.insert(unit.clone());
                cost += c;
            }
        }
        let share = Share {
            mine,
            total: all.len(),
            cost,
            total_cost,
            digest: schema::sha256_hex(digest.as_bytes()),
        };
        Ok(sharding.share.get_or_init(|| share))
    }

    /// The prompts `model`'s stages of `bench` send: the benchmark's prompts file, or in a shard the shard's share
    /// of it (`<model>/shard-prompts.jsonl`, rewritten only when it changes, so a rerun finds its stages fresh).
    pub fn prompts_for(&self, bench: Bench, model: &str) -> anyhow::Result<PathBuf> {
        let all = match bench {
            Bench::Ifscale => self.paths.ifscale_prompts(),
            Bench::Rift => self.paths.rift_prompts(),
        };
        let Some(sharding) = &self.shard else {
            return Ok(all);
        };
        let share = self.share(sharding)?;
        let prompts: Vec<PromptRecord> = harness::read_prompts(&all)?
            .into_iter()
            .filter(|p| {
                share.mine.contains(&Unit {
                    bench: bench.as_str(),
                    model: model.to_owned(),
                    id: p.id.clone(),
                })
            })
            .collect();
        let file = self
            .paths
            .model(bench, model)
            .dir
            .join("shard-prompts.jsonl");
        let mut text = Vec::new();
        for p in &prompts {
            serde_json::to_writer(&mut text, p)?;
            text.push(b'\n');
        }
        if std::fs::read(&file).ok().as_deref() != Some(text.as_slice()) {
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir)?;
            }
            schema::write_atomic(&file, &text)?;
        }
        Ok(file)
    }
}

/// The stages a shard runs, by their [`Sharded`] scope: the ones every shard runs first, then the per-model ones
/// (each sending the shard's share), and those run once per run in shard 0; the whole list when the run is not
/// sharded.
pub fn filter<'a>(run: &Run, stages: Vec<Stage<'a>>) -> Vec<Stage<'a>> {
    let Some(sharding) = &run.shard else {
        return stages;
    };
    let (mut shared, rest): (Vec<_>, Vec<_>) = stages
        .into_iter()
        .partition(|s| s.sharded == Sharded::Every);
    shared.extend(rest.into_iter().filter(|s| match s.sharded {
        Sharded::Every | Sharded::Share => true,
        Sharded::First => sharding.shard.index == 0,
        Sharded::Whole => false,
    }));
    shared
}

/// What a finished shard says about itself, for the merge's checks.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// The ifstress version that ran it.
    pub ifstress_version: String,
    /// SHA-256 of the config's text and of the models file.
    pub config_sha256: String,
    pub models_sha256: String,
    pub index: usize,
    pub count: usize,
    /// Its units, and the run's.
    pub units: usize,
    pub units_total: usize,
    /// Its share of the run's expected cost.
    pub cost_share: f64,
    /// SHA-256 of the whole assignment (every unit and its shard): the same in every shard of one run.
    pub assignment_sha256: String,
    /// The response cache it used (absolute when it could be resolved).
    pub cache: PathBuf,
    /// Every stage finished with an answer to every prompt.
    pub complete: bool,
}

/// The ifstress version written into manifests.
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

/// The config's and models file's digests, as a manifest records them.
pub fn digests(config_text: &str, models_file: &Path) -> anyhow::Result<(String, String)> {
    let models = std::fs::read(models_file).map_err(|e| {
        usage(format!(
            "{}: cannot read the models file: {e}",
            models_file.display()
        ))
    })?;
    Ok((
        schema::sha256_hex(config_text.as_bytes()),
        schema::sha256_hex(&models),
    ))
}

/// Ends a shard: writes its manifest, prints one line, and returns the run's outcome (incomplete when a stage left
/// prompts unanswered: the rerun of the same command continues it).
pub(crate) fn finish(run: &Run, sharding: &Sharding, ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let share = run.share(sharding)?;
    let (config_sha256, models_sha256) = digests(&run.config_text, &run.opts.models_file)?;
    let manifest = Manifest {
        ifstress_version: version(),
        config_sha256,
        models_sha256,
        index: sharding.shard.index,
        count: sharding.shard.count,
        units: share.mine.len(),
        units_total: share.total,
        cost_share: if share.total_cost > 0.0 {
            share.cost / share.total_cost
        } else {
            0.0
        },
        assignment_sha256: share.digest.clone(),
        cache: std::path::absolute(&run.opts.cache).unwrap_or_else(|_| run.opts.cache.clone()),
        complete: ctx.out.incomplete.is_empty(),
    };
    let text = serde_json::to_string_pretty(&manifest)? + "\n";
    schema::write_atomic(&run.paths.root.join(MANIFEST), text.as_bytes())?;
    crate::run::print(&format!(
        "shard {}: {} of {} units ({:.1} % of the expected cost), {} stages run, {} up to date, in {}{}",
        sharding.shard.label(),
        manifest.units,
        manifest.units_total,
        100.0 * manifest.cost_share,
        ctx.out.stages_run.len(),
        ctx.out.stages_skipped.len(),
        run.paths.root.display(),
        if manifest.complete {
            "; merge the shards with `cargo xtask merge`"
        } else {
            "; incomplete: rerun the same command to continue"
        }
    ));
    crate::summary::outcome(run, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(id: &str) -> Unit {
        Unit {
            bench: "ifscale",
            model: "m".to_owned(),
            id: id.to_owned(),
        }
    }

    #[test]
    fn flags_and_scheduler_variables_name_the_shard() {
        let none = |_: &str| None;
        assert_eq!(Shard::parse("2/3", none), Ok(Shard { index: 2, count: 3 }));
        assert!(
            Shard::parse("3/3", none)
                .unwrap_err()
                .contains("does not exist")
        );
        assert!(
            Shard::parse("auto", none)
                .unwrap_err()
                .contains("--shard auto/N")
        );
        // The variables Slurm sets on a task of `sbatch --array=0-2`, and on task 1 resubmitted alone with
        // `sbatch --array=1`: the submission's own minimum and count, which once made it shard 0/1.
        let slurm =
            |id: &'static str, min: &'static str, max: &'static str, count: &'static str| {
                move |k: &str| match k {
                    "SLURM_ARRAY_TASK_ID" => Some(id.to_owned()),
                    "SLURM_ARRAY_TASK_MIN" => Some(min.to_owned()),
                    "SLURM_ARRAY_TASK_MAX" => Some(max.to_owned()),
                    "SLURM_ARRAY_TASK_COUNT" => Some(count.to_owned()),
                    "SLURM_ARRAY_JOB_ID" => Some("41".to_owned()),
                    _ => None,
                }
            };
        assert_eq!(
            Shard::parse("auto/3", slurm("2", "0", "2", "3")),
            Ok(Shard { index: 2, count: 3 })
        );
        assert_eq!(
            Shard::parse("auto/3", slurm("1", "1", "1", "1")),
            Ok(Shard { index: 1, count: 3 })
        );
        let resubmitted = Shard::parse("auto", slurm("1", "1", "1", "1")).unwrap_err();
        assert!(resubmitted.contains("--shard auto/N"), "{resubmitted}");
        // An array numbered from 1 would leave shard 0 out and give task N a shard that does not exist.
        let from_one = Shard::parse("auto/3", slurm("2", "1", "3", "3")).unwrap_err();
        assert!(from_one.contains("--array=0-2"), "{from_one}");
        assert!(
            Shard::parse("auto/3", slurm("x", "0", "2", "3"))
                .unwrap_err()
                .contains("not a whole number")
        );
        let k8s = |k: &str| (k == "JOB_COMPLETION_INDEX").then(|| "2".to_owned());
        assert_eq!(
            Shard::parse("auto/4", k8s),
            Ok(Shard { index: 2, count: 4 })
        );
        assert!(
            Shard::parse("auto/2", k8s)
                .unwrap_err()
                .contains("does not exist")
        );
        assert_eq!(
            Shard { index: 0, count: 2 }.run_dir(Path::new("artifacts/runs/x")),
            PathBuf::from("artifacts/runs/x-shard-0-of-2")
        );
    }

    #[test]
    fn the_assignment_balances_cost_not_count_and_is_stable() {
        // One large unit and six small ones: by count each of two shards would get 3.5; by cost the large one
        // stands alone.
        let mut units = vec![(unit("big"), 600.0)];
        units.extend((0..6).map(|i| (unit(&format!("s{i}")), 100.0)));
        let to = assign(&units, 2);
        let load = |s: usize| -> f64 {
            units
                .iter()
                .zip(&to)
                .filter(|(_, t)| **t == s)
                .map(|(u, _)| u.1)
                .sum()
        };
        assert_eq!((load(0), load(1)), (600.0, 600.0));
        assert_eq!(to.iter().filter(|&&t| t == to[0]).count(), 1);
        // The same units in another order give every unit the same shard.
        let mut reversed: Vec<_> = units.iter().cloned().rev().collect();
        reversed.sort_by(|a, b| a.0.cmp(&b.0));
        let again = assign(&reversed, 2);
        for (u, t) in reversed.iter().zip(&again) {
            let i = units.iter().position(|x| x.0 == u.0).unwrap();
            assert_eq!(*t, to[i], "{u:?}");
        }
    }

    #[test]
    fn a_split_that_contradicts_the_runs_shard_folders_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("runs/x");
        let three = |i| Shard { index: i, count: 3 };
        // Nothing there yet: any split starts.
        assert_eq!(
            check_split(&base, &three(1).run_dir(&base), three(1), true),
            Ok(())
        );
        for i in 0..3 {
            std::fs::create_dir_all(three(i).run_dir(&base)).unwrap();
        }
        // The same split resumes; a similar name of another run is not this run's.
        std::fs::create_dir_all(dir.path().join("runs/x2-shard-0-of-1")).unwrap();
        assert_eq!(
            check_split(&base, &three(1).run_dir(&base), three(1), true),
            Ok(())
        );
        // What a task resubmitted alone once ran: shard 0 of 1, beside shards of 3.
        let whole = Shard { index: 0, count: 1 };
        let err = check_split(&base, &whole.run_dir(&base), whole, true).unwrap_err();
        assert!(
            err.contains("x-shard-0-of-3") && err.contains("x-shard-2-of-3"),
            "{err}"
        );
        assert!(!err.contains("x2-shard"), "{err}");
        // A folder given with --run-dir that holds another shard's manifest.
        let own = three(2).run_dir(&base);
        let manifest = Manifest {
            ifstress_version: version(),
            config_sha256: String::new(),
            models_sha256: String::new(),
            index: 2,
            count: 3,
            units: 1,
            units_total: 3,
            cost_share: 0.3,
            assignment_sha256: String::new(),
            cache: PathBuf::from("cache.sqlite"),
            complete: true,
        };
        std::fs::write(
            own.join(MANIFEST),
            serde_json::to_string(&manifest).unwrap(),
        )
        .unwrap();
        assert_eq!(check_split(&base, &own, three(2), false), Ok(()));
        let err = check_split(&base, &own, three(1), false).unwrap_err();
        assert!(err.contains("is shard 2/3"), "{err}");
    }
}
