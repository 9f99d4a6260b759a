//! Which vocabulary a run's IFScale keywords were drawn from, told by content hash (never by path): the paper's
//! 500 terms (`datasets/vocab/ifscale-paper.txt`), the project's own list (`datasets/vocab/default.tsv`), the
//! 10 000-term IFScale-XL list of `configs/ifscale-xl.toml` (`datasets/vocab/xl.tsv`) or another file. Difficulty depends on the words, so a run drawn from anything but the paper's list is not like for like
//! with the published curves; the figures that set a run beside them and the report say so.
//!
//! The committed lists are built into the binary, so the check needs no repository at hand. A run's vocabulary is
//! the `vocab_sha256` every IFScale prompt carries (`schema::ifscale::PromptMeta`).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

use crate::Error;

const PAPER_LIST: &[u8] = include_bytes!("../../../../datasets/vocab/ifscale-paper.txt");
const PROJECT_LIST: &[u8] = include_bytes!("../../../../datasets/vocab/default.tsv");
const XL_LIST: &[u8] = include_bytes!("../../../../datasets/vocab/xl.tsv");

/// SHA-256 (hex) of the paper's 500-term list as committed.
pub fn paper_sha256() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| schema::sha256_hex(PAPER_LIST))
}

/// SHA-256 (hex) of the project's own list as committed.
pub fn project_sha256() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| schema::sha256_hex(PROJECT_LIST))
}

/// SHA-256 (hex) of the IFScale-XL list as committed.
pub fn xl_sha256() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| schema::sha256_hex(XL_LIST))
}

/// Where a run's keywords came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunVocabulary {
    /// The paper's 500 terms: like for like with the published curves.
    Paper,
    /// ifstress's own list (`datasets/vocab/default.tsv`).
    Project,
    /// The 10 000-term IFScale-XL list (`datasets/vocab/xl.tsv`), sampled by the IFScale-XL grid to N = 10 000.
    Xl,
    /// Any other file.
    Other,
}

impl RunVocabulary {
    /// The vocabulary whose file has this SHA-256.
    pub fn of_sha256(hex: &str) -> RunVocabulary {
        if hex.eq_ignore_ascii_case(paper_sha256()) {
            RunVocabulary::Paper
        } else if hex.eq_ignore_ascii_case(project_sha256()) {
            RunVocabulary::Project
        } else if hex.eq_ignore_ascii_case(xl_sha256()) {
            RunVocabulary::Xl
        } else {
            RunVocabulary::Other
        }
    }

    /// What a figure legend adds after a run's model beside published data ("smollm2-135m (ifstress
    /// vocabulary)"); None for the paper's list.
    pub fn legend_note(self) -> Option<&'static str> {
        match self {
            RunVocabulary::Paper => None,
            RunVocabulary::Project => Some("ifstress vocabulary"),
            RunVocabulary::Xl => Some("IFScale-XL grid (not the paper's)"),
            RunVocabulary::Other => Some("not the paper's vocabulary"),
        }
    }

    /// One sentence for the report and `summary.md`; None for the paper's list.
    pub fn sentence(self) -> Option<&'static str> {
        match self {
            RunVocabulary::Paper => None,
            RunVocabulary::Project => Some(
                "This run's keywords come from ifstress's own vocabulary (datasets/vocab/default.tsv), not the paper's \
                 500 terms (datasets/vocab/ifscale-paper.txt); difficulty depends on the words, so its curves are not \
                 like for like with the published ones.",
            ),
            RunVocabulary::Xl => Some(
                "This run is IFScale-XL, not the paper's grid: its keywords come from the 10 000-term IFScale-XL \
                 vocabulary (datasets/vocab/xl.tsv, docs/ifscale-xl.md), not the paper's 500 terms \
                 (datasets/vocab/ifscale-paper.txt), and its densities go past the paper's N = 500; difficulty depends \
                 on the words, so its curves are not like for like with the published ones.",
            ),
            RunVocabulary::Other => Some(
                "This run's keywords come from a vocabulary that is not the paper's 500 terms \
                 (datasets/vocab/ifscale-paper.txt, compared by content hash); difficulty depends on the words, so \
                 its curves are not like for like with the published ones.",
            ),
        }
    }
}

/// The vocabulary of a run's IFScale prompts file: the paper's only when every prompt carries the paper list's
/// hash. None when the file is absent or no prompt carries a hash (prompts written outside the pipeline).
pub fn run_vocabulary(prompts: &Path) -> Result<Option<RunVocabulary>, Error> {
    /// The one field read (a prompts file can be large; its messages are skipped).
    #[derive(serde::Deserialize)]
    struct Line {
        #[serde(default)]
        vocab_sha256: Option<String>,
    }
    if !prompts.is_file() {
        return Ok(None);
    }
    let mut hashes: BTreeSet<String> = BTreeSet::new();
    schema::read_jsonl_chunks(prompts, 4_096, |chunk: Vec<Line>| {
        hashes.extend(
            chunk
                .into_iter()
                .filter_map(|l| l.vocab_sha256)
                .filter(|h| !h.is_empty()),
        );
        Ok::<(), Error>(())
    })?;
    let kinds: BTreeSet<_> = hashes
        .iter()
        .map(|h| match RunVocabulary::of_sha256(h) {
            RunVocabulary::Paper => 0,
            RunVocabulary::Project => 1,
            RunVocabulary::Xl => 3,
            RunVocabulary::Other => 2,
        })
        .collect();
    Ok(match (kinds.len(), kinds.first()) {
        (0, _) => None,
        (1, Some(0)) => Some(RunVocabulary::Paper),
        (1, Some(1)) => Some(RunVocabulary::Project),
        (1, Some(3)) => Some(RunVocabulary::Xl),
        _ => Some(RunVocabulary::Other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompts(dir: &Path, hash: &str) -> std::path::PathBuf {
        let p = dir.join("prompts.jsonl");
        let line = format!(
            "{{\"id\":\"ifscale-n010-s0\",\"messages\":[{{\"role\":\"user\",\"content\":\"x\"}}],\"benchmark\":\"ifscale\",\"vocab_sha256\":\"{hash}\"}}\n"
        );
        std::fs::write(&p, line.repeat(3)).unwrap();
        p
    }

    #[test]
    fn the_built_in_hashes_are_the_committed_files() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/vocab");
        let file = |name: &str| schema::sha256_file_hex(&root.join(name)).unwrap();
        assert_eq!(paper_sha256(), file("ifscale-paper.txt"));
        assert_eq!(project_sha256(), file("default.tsv"));
        assert_eq!(xl_sha256(), file("xl.tsv"));
        assert_ne!(paper_sha256(), project_sha256());
    }

    #[test]
    fn a_run_is_told_by_the_hash_its_prompts_carry() {
        let dir = tempfile::tempdir().unwrap();
        let of = |hash: &str| run_vocabulary(&prompts(dir.path(), hash)).unwrap();
        assert_eq!(of(paper_sha256()), Some(RunVocabulary::Paper));
        assert_eq!(of(project_sha256()), Some(RunVocabulary::Project));
        assert_eq!(of(xl_sha256()), Some(RunVocabulary::Xl));
        assert_eq!(
            RunVocabulary::Xl.legend_note(),
            Some("IFScale-XL grid (not the paper's)")
        );
        assert_eq!(of(&"0".repeat(64)), Some(RunVocabulary::Other));
        assert_eq!(of(""), None, "no hash: unknown, no note");
        assert_eq!(
            run_vocabulary(&dir.path().join("absent.jsonl")).unwrap(),
            None
        );
        // Mixed: not the paper's list.
        let p = dir.path().join("mixed.jsonl");
        let a = std::fs::read_to_string(prompts(dir.path(), paper_sha256())).unwrap();
        let b = std::fs::read_to_string(prompts(dir.path(), project_sha256())).unwrap();
        std::fs::write(&p, a + &b).unwrap();
        assert_eq!(run_vocabulary(&p).unwrap(), Some(RunVocabulary::Other));
        assert_eq!(RunVocabulary::Paper.legend_note(), None);
        assert_eq!(
            RunVocabulary::Project.legend_note(),
            Some("ifstress vocabulary")
        );
    }
}
