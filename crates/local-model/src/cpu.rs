//! Which instruction sets the linked llama.cpp was compiled for, and whether the running CPU has them.
//!
//! llama.cpp is built for one fixed level (x86-64-v3 on x86_64, armv8-a on aarch64), chosen by the `GGML_*`
//! variables in `.cargo/config.toml`, never for the building CPU: a native build on a CPU with AMX compiled
//! ggml's AMX path in, and that path faults on SmolLM2's Q4_1 tensors. [`CpuReport`] reads what the library
//! actually contains (ggml's own `ggml_cpu_has_*` answers, which are compile-time facts for x86 SIMD), so a
//! build that drifted from the config shows here and in the tests, and [`Engine::load`](crate::Engine::load)
//! refuses to start on a CPU that lacks a compiled-in instruction set (a clear error instead of SIGILL).
//!
//! `cargo xtask setup` prints the report, and so does loading a model. `BUILD_OPTIONS` lists those `GGML_*` options,
//! so that `cargo xtask bench local-model` and the `llama-server` build compile llama.cpp's own programs the same way.

/// The `GGML_*` build options this crate was compiled with (cargo's `[env]` reaches rustc and the llama.cpp
/// build script alike, so these are the values llama.cpp's CMake saw). Whoever builds llama.cpp again, such
/// as the bench's reference program, passes exactly these.
pub const BUILD_OPTIONS: &[(&str, Option<&str>)] = &[
    ("GGML_NATIVE", option_env!("GGML_NATIVE")),
    ("GGML_SSE42", option_env!("GGML_SSE42")),
    ("GGML_AVX", option_env!("GGML_AVX")),
    ("GGML_AVX2", option_env!("GGML_AVX2")),
    ("GGML_FMA", option_env!("GGML_FMA")),
    ("GGML_F16C", option_env!("GGML_F16C")),
    ("GGML_BMI2", option_env!("GGML_BMI2")),
    ("GGML_AVX_VNNI", option_env!("GGML_AVX_VNNI")),
    ("GGML_AVX512", option_env!("GGML_AVX512")),
    ("GGML_AVX512_VBMI", option_env!("GGML_AVX512_VBMI")),
    ("GGML_AVX512_VNNI", option_env!("GGML_AVX512_VNNI")),
    ("GGML_AVX512_BF16", option_env!("GGML_AVX512_BF16")),
    ("GGML_AMX_TILE", option_env!("GGML_AMX_TILE")),
    ("GGML_AMX_INT8", option_env!("GGML_AMX_INT8")),
    ("GGML_AMX_BF16", option_env!("GGML_AMX_BF16")),
];

/// One instruction-set extension: its name, whether llama.cpp was compiled to use it, and whether the running
/// CPU has it (`None` where this architecture has no run-time check for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuFeature {
    pub name: &'static str,
    pub compiled: bool,
    pub on_cpu: Option<bool>,
}

/// What the engine uses on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuReport {
    /// The target architecture (`x86_64`, `aarch64`, ...).
    pub arch: &'static str,
    pub features: Vec<CpuFeature>,
}

impl CpuReport {
    /// Ask the linked llama.cpp what it was compiled for and the running CPU what it has.
    pub fn detect() -> CpuReport {
        // SAFETY: each `ggml_cpu_has_*` takes no argument and returns a constant int; they touch no state.
        let has = |f: unsafe extern "C" fn() -> std::ffi::c_int| unsafe { f() } != 0;
        use llama_cpp_sys_2 as sys;
        let compiled: [(&'static str, bool); 14] = [
            ("SSE3", has(sys::ggml_cpu_has_sse3)),
            ("SSSE3", has(sys::ggml_cpu_has_ssse3)),
            ("AVX", has(sys::ggml_cpu_has_avx)),
            ("AVX2", has(sys::ggml_cpu_has_avx2)),
            ("FMA", has(sys::ggml_cpu_has_fma)),
            ("F16C", has(sys::ggml_cpu_has_f16c)),
            ("BMI2", has(sys::ggml_cpu_has_bmi2)),
            ("AVX_VNNI", has(sys::ggml_cpu_has_avx_vnni)),
            ("AVX512", has(sys::ggml_cpu_has_avx512)),
            ("AVX512_VBMI", has(sys::ggml_cpu_has_avx512_vbmi)),
            ("AVX512_VNNI", has(sys::ggml_cpu_has_avx512_vnni)),
            ("AVX512_BF16", has(sys::ggml_cpu_has_avx512_bf16)),
            ("AMX_INT8", has(sys::ggml_cpu_has_amx_int8)),
            ("NEON", has(sys::ggml_cpu_has_neon)),
        ];
        let features = compiled
            .into_iter()
            .map(|(name, compiled)| CpuFeature {
                name,
                compiled,
                on_cpu: on_cpu(name),
            })
            .collect();
        CpuReport {
            arch: std::env::consts::ARCH,
            features,
        }
    }

    /// Names of the extensions llama.cpp was compiled to use, in a fixed order.
    pub fn compiled(&self) -> Vec<&'static str> {
        self.features
            .iter()
            .filter(|f| f.compiled)
            .map(|f| f.name)
            .collect()
    }

    /// Extensions llama.cpp was compiled to use that the running CPU lacks: running it here would fault.
    pub fn missing(&self) -> Vec<&'static str> {
        self.features
            .iter()
            .filter(|f| f.compiled && f.on_cpu == Some(false))
            .map(|f| f.name)
            .collect()
    }

    /// One line for logs: `x86_64: SSE3 SSSE3 AVX AVX2 FMA F16C BMI2`.
    pub fn summary(&self) -> String {
        let compiled = self.compiled();
        if compiled.is_empty() {
            format!("{}: baseline only", self.arch)
        } else {
            format!("{}: {}", self.arch, compiled.join(" "))
        }
    }

    /// `Err` with a one-line explanation when the running CPU lacks an extension the build uses.
    pub fn check(&self) -> Result<(), crate::Error> {
        let missing = self.missing();
        if missing.is_empty() {
            return Ok(());
        }
        Err(crate::Error::Config(format!(
            "this build of llama.cpp uses {} but this CPU lacks {}; rebuild with those `GGML_*` options \
             set to OFF in .cargo/config.toml",
            self.compiled().join(" "),
            missing.join(" ")
        )))
    }
}

#[cfg(target_arch = "x86_64")]
fn on_cpu(name: &str) -> Option<bool> {
    Some(match name {
        "SSE3" => std::arch::is_x86_feature_detected!("sse3"),
        "SSSE3" => std::arch::is_x86_feature_detected!("ssse3"),
        "AVX" => std::arch::is_x86_feature_detected!("avx"),
        "AVX2" => std::arch::is_x86_feature_detected!("avx2"),
        "FMA" => std::arch::is_x86_feature_detected!("fma"),
        "F16C" => std::arch::is_x86_feature_detected!("f16c"),
        "BMI2" => std::arch::is_x86_feature_detected!("bmi2"),
        "AVX_VNNI" => std::arch::is_x86_feature_detected!("avxvnni"),
        "AVX512" => std::arch::is_x86_feature_detected!("avx512f"),
        "AVX512_VBMI" => std::arch::is_x86_feature_detected!("avx512vbmi"),
        "AVX512_VNNI" => std::arch::is_x86_feature_detected!("avx512vnni"),
        "AVX512_BF16" => std::arch::is_x86_feature_detected!("avx512bf16"),
        // No stable run-time check for AMX; it is never compiled in (see the tests).
        "AMX_INT8" => return None,
        "NEON" => false,
        _ => return None,
    })
}

#[cfg(target_arch = "aarch64")]
fn on_cpu(name: &str) -> Option<bool> {
    match name {
        "NEON" => Some(std::arch::is_aarch64_feature_detected!("neon")),
        _ => Some(false),
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn on_cpu(_name: &str) -> Option<bool> {
    None
}
