#!/usr/bin/env bash
# Fails when clang-format would change a tracked C++ or CUDA file. The version is pinned: Debian
# 12's clang-format-14 (installed by .ci/install-deps.sh); another version formats differently.
# Fix a failure with: git ls-files '*.cpp' '*.hpp' '*.cu' | xargs clang-format-14 -i
set -euo pipefail
cd "$(dirname "$0")/.."
format=${CLANG_FORMAT:-clang-format-14}
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh')
bad=()
for f in "${files[@]}"; do
  "$format" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "format-check: ${#bad[@]} of ${#files[@]} files are not formatted by $format (.clang-format):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "format-check: run: git ls-files '*.cpp' '*.hpp' '*.cu' | xargs $format -i" >&2
  exit 1
fi
echo "format-check: ${#files[@]} files formatted by $("$format" --version | head -1)"
