// Reference side of `cargo xtask bench local-model`: llama.cpp's C API driven directly from C++, built by
// llama.cpp's own CMake (Release, the engine's GGML_* options, its default threading) from the source
// llama-cpp-sys-2 vendors. It evaluates a prompt in batches of at most 512 tokens (cut as the engine cuts them: no
// one-token batch after the first), then generates greedily (arg-max over the logits, end-of-generation ignored)
// one token per llama_decode call, with flash attention on or off throughout, and prints the timings as one JSON
// object. The prompt is evaluated REPS times (the cache emptied between, untimed) and the prompt time is their sum,
// so a short prompt is timed over more than a scheduler's time slice; the last evaluation is decoded from.
//
// usage: ifstress-llama-ref MODEL.gguf THREADS N_GEN PROMPT_FILE on|off N_CTX REPS

#include "llama.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static void quiet(enum ggml_log_level level, const char * text, void *) {
    if (level >= GGML_LOG_LEVEL_WARN && level != GGML_LOG_LEVEL_CONT) {
        std::fputs(text, stderr);
    }
}

static double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int main(int argc, char ** argv) {
    if (argc != 8) {
        std::fprintf(stderr, "usage: %s MODEL.gguf THREADS N_GEN PROMPT_FILE on|off N_CTX REPS\n", argv[0]);
        return 2;
    }
    const int threads = std::atoi(argv[2]);
    const int n_gen = std::atoi(argv[3]);
    const std::string flash = argv[5];
    const int n_ctx = std::atoi(argv[6]);
    const int reps = std::atoi(argv[7]);
    std::ifstream in(argv[4], std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string prompt = buf.str();
    if (threads < 1 || n_gen < 1 || prompt.empty() || (flash != "on" && flash != "off") || n_ctx < 16 || reps < 1) {
        std::fprintf(stderr, "bad arguments\n");
        return 2;
    }

    llama_log_set(quiet, nullptr);
    llama_backend_init();
    llama_model * model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (model == nullptr) {
        std::fprintf(stderr, "cannot load %s\n", argv[1]);
        return 1;
    }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);

    std::vector<llama_token> tokens(prompt.size() + 8);
    const int n_prompt = llama_tokenize(vocab, prompt.data(), (int32_t) prompt.size(), tokens.data(),
                                        (int32_t) tokens.size(), false, true);
    if (n_prompt <= 0) {
        std::fprintf(stderr, "tokenization failed\n");
        return 1;
    }
    tokens.resize(n_prompt);

    llama_context_params cp = llama_context_default_params();
    const int n_batch = 512;
    if (n_prompt + n_gen > n_ctx) {
        std::fprintf(stderr, "%d prompt and %d generated tokens exceed the context of %d\n", n_prompt, n_gen, n_ctx);
        return 2;
    }
    cp.n_ctx = n_ctx;
    cp.n_batch = n_batch;
    cp.n_ubatch = n_batch;
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    cp.flash_attn_type = flash == "on" ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    llama_context * ctx = llama_init_from_model(model, cp);
    if (ctx == nullptr) {
        std::fprintf(stderr, "cannot create a context\n");
        return 1;
    }

    double prompt_seconds = 0.0;
    for (int rep = 0; rep < reps; ++rep) {
        llama_memory_clear(llama_get_memory(ctx), false);
        const auto t0 = std::chrono::steady_clock::now();
        for (int start = 0; start < n_prompt;) {
            const int left = n_prompt - start;
            const int len = left == n_batch + 1 ? n_batch - 1 : std::min(left, n_batch);
            if (llama_decode(ctx, llama_batch_get_one(tokens.data() + start, len)) != 0) {
                std::fprintf(stderr, "prompt decode failed at token %d\n", start);
                return 1;
            }
            start += len;
        }
        prompt_seconds += seconds_since(t0);
    }

    std::vector<bool> eog(n_vocab);
    for (int t = 0; t < n_vocab; ++t) {
        eog[t] = llama_vocab_is_eog(vocab, t);
    }

    const auto t0 = std::chrono::steady_clock::now();
    llama_token next = 0;
    for (int i = 0; i < n_gen; ++i) {
        const float * logits = llama_get_logits_ith(ctx, -1);
        int best = -1;
        for (int t = 0; t < n_vocab; ++t) {
            if (!eog[t] && (best < 0 || logits[t] > logits[best])) {
                best = t;
            }
        }
        next = best;
        if (i + 1 == n_gen) {
            break;
        }
        if (llama_decode(ctx, llama_batch_get_one(&next, 1)) != 0) {
            std::fprintf(stderr, "decode failed at token %d\n", i);
            return 1;
        }
    }
    const double decode_seconds = seconds_since(t0);

    std::printf("{\"prompt_tokens\": %d, \"prompt_reps\": %d, \"prompt_seconds\": %.6f, \"gen_tokens\": %d, "
                "\"decode_seconds\": %.6f}\n",
                n_prompt, reps, prompt_seconds, n_gen, decode_seconds);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
