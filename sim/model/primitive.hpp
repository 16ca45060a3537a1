// The three ways an attention call reaches KV that another GPU holds: route the query to it,
// fetch it, or recompute it locally. Its own header, so that what only names a primitive (the
// timeline, the outputs) does not include the cost model.
#pragma once

#include <string_view>

namespace xattn::sim
{

enum class Primitive { kRoute, kFetch, kLocal };
std::string_view to_string(Primitive p);

} // namespace xattn::sim
