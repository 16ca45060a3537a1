// Dynamic replication's bookkeeping (replicas.hpp): when a chunk earns a copy, where its copies
// are, and what a holder's budget evicts.
#include "sim/engine/replicas.hpp"

#include <catch2/catch.hpp>

#include <vector>

using xattn::sim::engine::Replicas;

TEST_CASE("replicas: a chunk earns a copy every few reads, up to its most, each holder's copies in its budget")
{
  Replicas r(2, 100, 2, 2); // 2 holders of 100 B each, a copy every 2 reads, at most 2 a chunk
  CHECK_FALSE(r.read(7, 0));
  CHECK(r.read(7, 0));       // the second read since the run began: due
  CHECK_FALSE(r.read(7, 0)); // on its way: no second one
  CHECK_FALSE(r.read(7, 0));
  r.landed(7, 1, 60);
  CHECK(r.copies(7) == std::vector<int>{1});
  CHECK(r.made() == 1);
  // Another chunk's copy on holder 1 leaves no room for chunk 7's: the least recent goes.
  CHECK_FALSE(r.read(9, 0));
  CHECK(r.read(9, 0));
  r.landed(9, 1, 60);
  CHECK(r.copies(7).empty());
  CHECK(r.copies(9) == std::vector<int>{1});
  CHECK(r.evicted() == 1);
  // Reads count again from the copy: two more earn chunk 9 its second copy, its most.
  CHECK_FALSE(r.read(9, 1));
  CHECK(r.read(9, 1));
  r.landed(9, 0, 60);
  CHECK(r.copies(9) == std::vector<int>{1, 0});
  for (int i = 0; i < 10; ++i)
    CHECK_FALSE(r.read(9, 0));
  // A copy larger than a holder's whole budget is not kept, and evicts nothing.
  CHECK_FALSE(r.read(5, 0));
  CHECK(r.read(5, 0));
  r.landed(5, 1, 200);
  CHECK(r.copies(5).empty());
  CHECK(r.copies(9) == std::vector<int>{1, 0});
  CHECK(r.made() == 3);
  CHECK(r.evicted() == 1);
  // Holder 1 holds chunk 9's copy alone: the next copy there, chunk 11's, evicts it.
  r.read(9, 1);
  CHECK_FALSE(r.read(11, 0));
  CHECK(r.read(11, 0));
  r.landed(11, 1, 60);
  CHECK(r.copies(9) == std::vector<int>{0}); // 9 was the only copy on holder 1: out for 11
  CHECK(r.copies(11) == std::vector<int>{1});
  CHECK(r.evicted() == 2);
  // No holder to take one: the copy is dropped, and the chunk may earn another later.
  CHECK_FALSE(r.read(13, 0));
  CHECK(r.read(13, 0));
  r.dropped(13);
  CHECK_FALSE(r.read(13, 0));
  CHECK(r.read(13, 0));
}
