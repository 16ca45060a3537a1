// CPU reference implementations of the three kernels the probe times (calibrate/README.md): absorbed MLA
// decode partial attention, the online-softmax merge of partials, and the RoPE splice. The probe
// harness compiles this same file (it links nothing of ours) to check its GPU kernels.
//
// Layouts, row-major, float:
//   q   [rows][dqk]       one query row per head × query token (absorbed: dqk = 512 + 64 = 576)
//   kv  [tokens][dqk]     one latent vector per token; its first dv values are the value (dv = 512)
//   out [rows][dv], lse [rows]: the partial output and its log-sum-exp (natural log)
// Scores are scale · q·k. A partial over no tokens has lse = -inf and out = 0 (merge's identity).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xattn::calibrate::ref
{

inline constexpr int kLatent = 512;            ///< kv_lora_rank: the value width
inline constexpr int kRope = 64;               ///< rope dims of every key
inline constexpr int kQkDim = kLatent + kRope; ///< 576

struct Dims {
  int dqk = kQkDim;
  int dv = kLatent;
};

/// Partial attention of `rows` query rows over `tokens` keys (kv rows), softmax over those keys only.
void partial_attention(const float* q, int rows, const float* kv, int tokens, Dims d, float scale, float* out,
                       float* lse);

/// Same, over the kv rows listed in `selected` (sparse selection: scattered token indices).
void partial_attention_selected(const float* q, int rows, const float* kv, const std::vector<int>& selected, Dims d,
                                float scale, float* out, float* lse);

/// Online-softmax merge of a partial (o2, s2) into a running result (o1, s1), in place:
///   m = max(s1, s2); o = (e^(s1-m) o1 + e^(s2-m) o2) / (e^(s1-m) + e^(s2-m)); s = m + log(...).
void merge_into(float* o1, float* s1, const float* o2, const float* s2, int rows, int dv);

/// Merges P partials (out [P][rows][dv], lse [P][rows]) into out [rows][dv], lse [rows].
void merge_partials(const float* outs, const float* lses, int partials, int rows, int dv, float* out, float* lse);

/// The RoPE rotation of one token's rope part (kRope values, interleaved pairs (2i, 2i+1),
/// frequency base^(-2i/kRope)) by `angle_positions` positions (negative rotates back).
void rope_rotate(float* rope, double angle_positions, double base = 10000.0);

/// The splice: re-rotates the rope part (dims [dqk - kRope, dqk)) of `tokens` consecutive kv rows
/// from their old positions to positions shifted by `delta` (new = old + delta).
void rope_splice(float* kv, int tokens, Dims d, std::int64_t delta, double base = 10000.0);

/// bf16 rounding of a float (round to nearest even), as the GPU stores its inputs.
float round_bf16(float x);

} // namespace xattn::calibrate::ref
