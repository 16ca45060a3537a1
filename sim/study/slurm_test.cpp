#include "sim/study/slurm.hpp"

#include <catch2/catch.hpp>

using namespace xattn::sim::study;

TEST_CASE("study: task lists round-trip between sbatch --array ranges and squeue's field")
{
  CHECK(ranges({0, 1, 2, 3, 7, 9, 10}) == "0-3,7,9-10");
  CHECK(ranges({5}) == "5");
  CHECK(ranges({4, 2, 3}) == "2-4");
  CHECK(parse_task_ids("0-3,7,9-10") == std::vector<int>{0, 1, 2, 3, 7, 9, 10});
  CHECK(parse_task_ids("[0-2,5]%4\n") == std::vector<int>{0, 1, 2, 5});
  CHECK(parse_task_ids("17") == std::vector<int>{17});
  CHECK(parse_task_ids("N/A").empty());
}
