//! llama.cpp's own programs, built with llama.cpp's CMake from a vendored source into the cache folder, for the
//! same fixed instruction-set level as the embedded engine: the `GGML_*` options the `local-model` crate was
//! compiled with (`local_model::cpu::BUILD_OPTIONS`, from `.cargo/config.toml`), Release, static libraries,
//! never for the building CPU. Each build lives in a folder named by what it is built from and a hash of its
//! options, so a build with other options is never reused, and is built once.
//!
//! Two programs use this: the bench's reference driver (`local_model`, from the source `llama-cpp-sys-2` vendors)
//! and `llama-server` (from the source the `llama-cpp-python` source distribution vendors: the crate's copy
//! strips llama.cpp's tools), which the real-server integration tests start. `xtask` fetches the source
//! distribution with pip and calls [`build_llama_server`]; the tests find the binary through
//! [`llama_server_path`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};

/// A source distribution on the Python package index, pinned by version and SHA-256.
#[derive(Debug, Clone, Copy)]
pub struct Sdist {
    /// `package==version` for `pip download`.
    pub pip_spec: &'static str,
    /// The version (names the build folder).
    pub version: &'static str,
    /// File name of the archive `pip download --no-binary :all:` produces.
    pub file: &'static str,
    /// Expected SHA-256 of that archive.
    pub sha256: &'static str,
    /// The llama.cpp tree inside the archive.
    pub llama_cpp_dir: &'static str,
    /// Licence and attribution, shown by `setup`.
    pub licence: &'static str,
}

/// The source of `llama-server`: llama-cpp-python 0.3.36 vendors llama.cpp with `tools/server/`.
pub const LLAMA_SERVER_SDIST: Sdist = Sdist {
    pip_spec: "llama-cpp-python==0.3.36",
    version: "0.3.36",
    file: "llama_cpp_python-0.3.36.tar.gz",
    sha256: "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e",
    llama_cpp_dir: "llama_cpp_python-0.3.36/vendor/llama.cpp",
    licence: "llama.cpp (vendored by llama-cpp-python), MIT",
};

/// CMake options of the `llama-server` build besides the `GGML_*` ones: only the server (no tests, examples or
/// web UI; the UI would otherwise be fetched from a model hub at build time), no HTTPS, static libraries.
const LLAMA_SERVER_OPTIONS: &[&str] = &[
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
];

/// The `-DGGML_*=…` options the `local-model` crate's llama.cpp was compiled with.
pub fn ggml_options() -> anyhow::Result<Vec<String>> {
    let options: Vec<String> = local_model::cpu::BUILD_OPTIONS
        .iter()
        .filter_map(|(k, v)| v.map(|v| format!("-D{k}={v}")))
        .collect();
    if options.is_empty() {
        bail!(
            "this program was built without the `GGML_*` options of .cargo/config.toml; run it through cargo in the workspace"
        );
    }
    Ok(options)
}

/// A short, stable name for a set of CMake options (the first 12 hex digits of their SHA-256).
pub fn options_tag(options: &[String]) -> String {
    schema::sha256_hex(options.join(" ").as_bytes())[..12].to_owned()
}

/// One CMake build of one target.
#[derive(Debug)]
pub struct CmakeBuild<'a> {
    /// What is built, for log lines and errors.
    pub what: &'a str,
    /// The CMake project (a `CMakeLists.txt` folder).
    pub source: &'a Path,
    /// The build folder (configured once, rebuilt incrementally).
    pub build: &'a Path,
    /// The target to build.
    pub target: &'a str,
    /// Every `-D` option of the configure step.
    pub options: &'a [String],
    /// Where the target's program appears.
    pub binary: &'a Path,
}

impl CmakeBuild<'_> {
    /// Configures (once) and builds the target with as many jobs as the machine has cores, and returns the
    /// program's path. CMake's output goes to `build.log` in the build folder; a failure names it.
    pub fn run(&self) -> anyhow::Result<PathBuf> {
        std::fs::create_dir_all(self.build)
            .with_context(|| format!("creating {}", self.build.display()))?;
        let started = Instant::now();
        let fresh = !self.binary.is_file();
        if fresh {
            tracing::info!(
                "building {} from {} into {} (one time, several minutes)",
                self.what,
                self.source.display(),
                self.build.display()
            );
        }
        let log_path = self.build.join("build.log");
        let log = || {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log_path)
                .with_context(|| format!("opening {}", log_path.display()))
        };
        if !self.build.join("CMakeCache.txt").is_file() {
            let configure = Command::new("cmake")
                .arg("-S")
                .arg(self.source)
                .arg("-B")
                .arg(self.build)
                .args(self.options)
                .stdout(log()?)
                .stderr(log()?)
                .status()
                .context("running cmake (install it: `apt-get install cmake`)")?;
            if !configure.success() {
                bail!(
                    "cmake configure of {} failed ({configure}); see {}",
                    self.what,
                    log_path.display()
                );
            }
        }
        let jobs = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
        let compile = Command::new("cmake")
            .arg("--build")
            .arg(self.build)
            .args(["--target", self.target, "-j", &jobs.to_string()])
            .stdin(Stdio::null())
            .stdout(log()?)
            .stderr(log()?)
            .status()
            .context("running cmake --build")?;
        if !compile.success() {
            bail!(
                "building {} failed ({compile}); see {}",
                self.what,
                log_path.display()
            );
        }
        if !self.binary.is_file() {
            bail!(
                "the build finished but {} is missing",
                self.binary.display()
            );
        }
        if fresh {
            tracing::info!(
                "{} built in {:.1} min",
                self.what,
                started.elapsed().as_secs_f64() / 60.0
            );
        }
        Ok(self.binary.to_path_buf())
    }
}

/// Writes `text` to `path` unless it already holds exactly that (so CMake sees no change).
pub fn write_if_changed(path: &Path, text: &str) -> anyhow::Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// Every CMake option of the `llama-server` build, in the order given to CMake.
fn llama_server_options() -> anyhow::Result<Vec<String>> {
    let mut options = ggml_options()?;
    options.extend(LLAMA_SERVER_OPTIONS.iter().map(|o| (*o).to_owned()));
    Ok(options)
}

/// `<cache>/llama-server/<version>-<options tag>`: the source, the build folder and the finished program.
pub fn llama_server_dir(cache: &Path) -> anyhow::Result<PathBuf> {
    let options = llama_server_options()?;
    Ok(cache.join("llama-server").join(format!(
        "{}-{}",
        LLAMA_SERVER_SDIST.version,
        options_tag(&options)
    )))
}

/// Where the finished `llama-server` is (it is copied there only after a complete build, so a path that exists
/// is a whole program).
pub fn llama_server_path(cache: &Path) -> anyhow::Result<PathBuf> {
    Ok(llama_server_dir(cache)?.join("llama-server"))
}

/// Builds `llama-server` from `sdist` (already checked against [`LLAMA_SERVER_SDIST`]'s SHA-256) unless it is
/// built, and returns its path: the llama.cpp tree is unpacked with `tar`, configured and built in
/// [`llama_server_dir`], and the program copied to [`llama_server_path`].
pub fn build_llama_server(cache: &Path, sdist: &Path) -> anyhow::Result<PathBuf> {
    let dest = llama_server_path(cache)?;
    if dest.is_file() {
        return Ok(dest);
    }
    let root = llama_server_dir(cache)?;
    let src = root.join("src");
    let tree = src.join(LLAMA_SERVER_SDIST.llama_cpp_dir);
    if !tree.join("tools/server/CMakeLists.txt").is_file() {
        let unpacking = root.join("src.partial");
        if unpacking.exists() {
            std::fs::remove_dir_all(&unpacking)
                .with_context(|| format!("removing {}", unpacking.display()))?;
        }
        std::fs::create_dir_all(&unpacking)
            .with_context(|| format!("creating {}", unpacking.display()))?;
        let status = Command::new("tar")
            .arg("-xzf")
            .arg(sdist)
            .arg("-C")
            .arg(&unpacking)
            .arg(LLAMA_SERVER_SDIST.llama_cpp_dir)
            .status()
            .context("running tar")?;
        if !status.success() {
            bail!(
                "unpacking {} from {} failed ({status})",
                LLAMA_SERVER_SDIST.llama_cpp_dir,
                sdist.display()
            );
        }
        if src.exists() {
            std::fs::remove_dir_all(&src).with_context(|| format!("removing {}", src.display()))?;
        }
        std::fs::rename(&unpacking, &src)
            .with_context(|| format!("renaming {} to {}", unpacking.display(), src.display()))?;
    }
    let options = llama_server_options()?;
    let build = root.join("build");
    let built = CmakeBuild {
        what: "llama-server",
        source: &tree,
        build: &build,
        target: "llama-server",
        options: &options,
        binary: &build.join("bin").join("llama-server"),
    }
    .run()?;
    let partial = root.join("llama-server.partial");
    std::fs::copy(&built, &partial)
        .with_context(|| format!("copying {} to {}", built.display(), partial.display()))?;
    std::fs::rename(&partial, &dest)
        .with_context(|| format!("renaming {} to {}", partial.display(), dest.display()))?;
    Ok(dest)
}
