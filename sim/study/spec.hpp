// A sweep file: a base scenario, a grid (and zipped lists) over scenario keys, seeds, policies
// (docs/architecture.md, "Studies at scale"). Schema-first like every input: unknown keys are errors, every swept key
// must be a key of the scenario schema, and every expanded point must load as a scenario before anything runs.
// Expansion gives points with stable ids: the hash of the point's sorted overrides.
#pragma once

#include "sim/core/yaml.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace xattn::sim::study
{

/// One swept scenario key and its values, as YAML flow text ("400Gbps", "[node1-3]").
struct Axis {
  std::string key;
  std::vector<std::string> values;
};

/// Extra sbatch settings for the Slurm back end (empty: Slurm's defaults).
struct SlurmOptions {
  std::string partition;
  std::string time;
  int cpus_per_task = 1;
  std::vector<std::string> extra; ///< more sbatch arguments, verbatim
};

struct SweepSpec {
  std::string name;
  std::string file;       ///< where it was read from
  std::string base;       ///< absolute path of the base scenario
  std::vector<Axis> grid; ///< cartesian product, in file order
  std::vector<Axis> zip;  ///< advanced together (equal lengths), one more factor of the product
  std::vector<std::pair<std::string, std::string>> fixed; ///< `set:` overrides of every point
  std::vector<std::int64_t> seeds;
  std::string seed_key = "seed";
  std::vector<std::string> policies; ///< empty: the base scenario's
  int workers = 0;                   ///< 0: one per core
  std::string out;                   ///< empty: out/<name>
  SlurmOptions slurm;
  int ensemble = 0;  ///< > 0: every point runs `--ensemble N` (profile draws shared by every point of a seed)
  std::string label; ///< the swept key whose values name the points in the comparison (empty: every swept value)

  /// Swept keys in table order: grid keys, then zipped keys.
  std::vector<std::string> keys() const;
};

/// One simulation of the sweep.
struct Point {
  std::string id; ///< 12 hex digits, a hash of the sorted overrides (fixed ones and the seed included)
  std::vector<std::pair<std::string, std::string>> values; ///< swept key -> value, in keys() order
  std::int64_t seed = 0;

  /// The `--set` assignments of this point (fixed and swept values, the seed, the policies).
  std::vector<std::string> overrides(const SweepSpec& s) const;
};

const core::Schema& sweep_schema();

/// Reads a sweep file; `sets` are `--set` overrides applied to the sweep file itself. Throws
/// core::InputError with every problem (file:line:col and key path).
SweepSpec load_sweep(const std::string& path, const std::vector<std::string>& sets = {});
SweepSpec parse_sweep_text(const std::string& text, const std::string& name, const std::string& dir);

/// The points of the sweep in a fixed order: grid (last key fastest), zip, then seeds.
std::vector<Point> expand(const SweepSpec& s);

/// Loads every point's scenario (base + overrides) to prove the sweep runs; throws
/// core::InputError naming the point on the first bad one.
void check_points(const SweepSpec& s, const std::vector<Point>& points);

/// The stable id of a set of assignments: FNV-1a 64 over the sorted "key=value" lines, 12 hex digits.
std::string point_id(std::vector<std::string> assignments);

/// Is `path` (dotted) a key of the scenario schema? A list, map or preset-or-inline value ends the path.
bool scenario_has_key(const std::string& path);

/// YAML flow text of a node ("[a, b]", "400Gbps").
std::string flow(const YAML::Node& n);

} // namespace xattn::sim::study
