#include "calibrate/uncertainty.hpp"

#include "sim/core/error.hpp"

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <functional>

namespace xattn::calibrate
{
namespace
{

struct Param {
  std::string key;
  std::function<double(const Profile&)> get;
  std::function<void(Profile&, double)> set;
};

const std::vector<Param>& params()
{
  static const std::vector<Param> all = [] {
    std::vector<Param> v;
    for (core::FabricClass f : core::kAllFabrics) {
      if (f == core::FabricClass::kSameGpu) continue;
      const std::string k = "fabrics." + std::string(core::to_string(f)) + ".";
      v.push_back({k + "probe_gpu", [f](const Profile& p) { return p.fabric(f).probe_gpu.value(); },
                   [f](Profile& p, double x) { p.fabric(f).probe_gpu = Seconds(x); }});
      v.push_back({k + "probe_proxy", [f](const Profile& p) { return p.fabric(f).probe_proxy.value(); },
                   [f](Profile& p, double x) { p.fabric(f).probe_proxy = Seconds(x); }});
      // One IB dispatch rate (the profile keeps both IB classes equal): ib-spine's stands for both.
      if (f == core::FabricClass::kIbSameLeaf)
        ;
      else if (f == core::FabricClass::kIbSpine)
        v.push_back({k + "block_rate", [f](const Profile& p) { return p.fabric(f).block_rate.value(); },
                     [](Profile& p, double x) {
                       p.fabric(core::FabricClass::kIbSpine).block_rate = BytesPerSec(x);
                       p.fabric(core::FabricClass::kIbSameLeaf).block_rate = BytesPerSec(x);
                     }});
      else
        v.push_back({k + "block_rate", [f](const Profile& p) { return p.fabric(f).block_rate.value(); },
                     [f](Profile& p, double x) { p.fabric(f).block_rate = BytesPerSec(x); }});
      v.push_back({k + "bandwidth", [f](const Profile& p) { return p.fabric(f).bandwidth.value(); },
                   [f](Profile& p, double x) {
                     FabricCosts& c = p.fabric(f);
                     const double k = x / c.bandwidth.value(); // the whole curve moves with it
                     c.nominal_bandwidth = c.nominal();        // the link itself stays
                     c.bandwidth = BytesPerSec(x);
                     for (CurveSegment& s : c.curve)
                       s.bandwidth = s.bandwidth * k;
                   }});
    }
    auto seconds = [&v](std::string key, Seconds Profile::*m) {
      v.push_back({std::move(key), [m](const Profile& p) { return (p.*m).value(); },
                   [m](Profile& p, double x) { p.*m = Seconds(x); }});
    };
    seconds("holder.kernel_fixed", &Profile::kernel_fixed);
    seconds("holder.kernel_per_token", &Profile::kernel_per_token);
    seconds("holder.kernel_per_token_row", &Profile::kernel_per_token_row);
    seconds("merge.fixed", &Profile::merge_fixed);
    seconds("merge.per_row", &Profile::merge_per_row);
    seconds("splice.fixed", &Profile::splice_fixed);
    seconds("splice.per_token", &Profile::splice_per_token);
    seconds("splice.insert", &Profile::splice_insert);
    v.push_back({"gpu.launch", [](const Profile& p) { return p.gpu.launch.value(); },
                 [](Profile& p, double x) { p.gpu.launch = Seconds(x); }});
    auto share = [&v](std::string key, double GpuSpec::*m) {
      v.push_back({std::move(key), [m](const Profile& p) { return p.gpu.*m; },
                   [m](Profile& p, double x) { p.gpu.*m = std::min(1.0, x); }});
    };
    share("gpu.memory_efficiency", &GpuSpec::memory_efficiency);
    share("gpu.attention_efficiency", &GpuSpec::attention_efficiency);
    share("gpu.gemm_efficiency", &GpuSpec::gemm_efficiency);
    seconds("host.overhead", &Profile::host_overhead);
    seconds("step.other_compute", &Profile::step_other);
    for (const auto& key_member : {std::pair{"kv_transfer.registration", &Profile::KvTransferCosts::registration},
                                   std::pair{"kv_transfer.post", &Profile::KvTransferCosts::post},
                                   std::pair{"kv_transfer.completion", &Profile::KvTransferCosts::completion}}) {
      const auto m = key_member.second; // clang before 16 cannot capture a structured binding
      v.push_back({key_member.first, [m](const Profile& p) { return (p.kv_transfer.*m).value(); },
                   [m](Profile& p, double x) { p.kv_transfer.*m = Seconds(x); }});
    }
    v.push_back({"prefill.tokens_per_s", [](const Profile& p) { return p.prefill_tokens_per_s; },
                 [](Profile& p, double x) { p.prefill_tokens_per_s = x; }});
    return v;
  }();
  return all;
}

std::size_t index_of(std::string_view key)
{
  const auto& ps = params();
  auto it = std::find_if(ps.begin(), ps.end(), [key](const Param& p) { return p.key == key; });
  return static_cast<std::size_t>(it - ps.begin());
}

} // namespace

std::span<const std::string> uncertain_keys()
{
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const Param& p : params())
      k.push_back(p.key);
    return k;
  }();
  return keys;
}

bool is_uncertain_key(std::string_view key)
{
  return index_of(key) < params().size();
}

double value_of(const Profile& p, std::string_view key)
{
  return params().at(index_of(key)).get(p);
}

ProfileSampler::ProfileSampler(const Profile& p) : base_(p)
{
  for (const Uncertainty& u : p.uncertainty) {
    param_.push_back(index_of(u.key));
    sigma_.push_back(u.relative);
  }
  const auto n = static_cast<Eigen::Index>(sigma_.size());
  Eigen::MatrixXd corr = Eigen::MatrixXd::Identity(n, n);
  auto pos = [&](const std::string& key) {
    for (std::size_t i = 0; i < p.uncertainty.size(); ++i)
      if (p.uncertainty[i].key == key) return static_cast<Eigen::Index>(i);
    return Eigen::Index{-1};
  };
  for (const Correlation& c : p.correlations) {
    const Eigen::Index a = pos(c.a), b = pos(c.b);
    if (a < 0 || b < 0)
      core::fail(p.file, 0, 0, "correlations",
                 "correlates " + c.a + " and " + c.b + ", which need an uncertainty each");
    corr(a, b) = corr(b, a) = c.rho;
  }
  Eigen::LLT<Eigen::MatrixXd> llt(corr);
  if (llt.info() != Eigen::Success)
    core::fail(p.file, 0, 0, "correlations",
               "the correlations are not a valid correlation matrix (not positive definite)");
  chol_ = llt.matrixL();
}

Profile ProfileSampler::draw(std::span<const double> z) const
{
  if (z.size() != sigma_.size()) throw std::logic_error("ProfileSampler::draw: wrong number of normals");
  Profile out = base_;
  const Eigen::VectorXd x = chol_ * Eigen::Map<const Eigen::VectorXd>(z.data(), static_cast<Eigen::Index>(z.size()));
  for (std::size_t i = 0; i < sigma_.size(); ++i) {
    const Param& p = params()[param_[i]];
    p.set(out, p.get(base_) * std::exp(sigma_[i] * x(static_cast<Eigen::Index>(i))));
  }
  return out;
}

} // namespace xattn::calibrate
