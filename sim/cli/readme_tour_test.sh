#!/usr/bin/env bash
# The README says what the code does: every command of its "Examples" block runs (exit 0) from a
# fresh folder laid out like the checkout; every flag its tour table names is in that
# subcommand's --help; the quickstart table it prints is the one `xattn run` prints today; the two
# commands build the targets it says. A drift in any of them fails here, not in a newcomer's hands.
#   readme_tour_test.sh XATTN SOURCE_DIR [quick|examples]
# quick (the default): the flags, the quickstart table and the two commands, in seconds; examples:
# every command of the Examples block, minutes of simulation (a benchmark: xattn_bench --long).
set -uo pipefail
xattn=$1
src=$2
part=${3:-quick}
case "$part" in
  quick | examples) ;;
  *)
    echo "readme_tour_test.sh: unknown part '$part' (quick or examples)"
    exit 2
    ;;
esac
readme=$src/README.md
work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-readme.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# A folder laid out like the checkout, whose out/ is this test's: the commands' relative paths hold.
for d in "$src"/*/; do ln -s "$d" "$work/$(basename "$d")"; done
rm -f "$work/build" "$work/out"
mkdir -p "$work/build" && ln -s "$xattn" "$work/build/xattn"

if [ "$part" = examples ]; then
  # 1. The Examples block, command by command.
  examples=$(awk '/^Examples:/ {on = 1; next} on && /^```sh/ {inside = 1; next} inside && /^```/ {exit}
                  inside' "$readme")
  [ -n "$examples" ] || fail "no Examples block in README.md"
  n=0
  while IFS= read -r line; do
    cmd=${line%%#*} # the comment after a command is not part of it
    [ -n "${cmd// /}" ] || continue
    # A comment that says "exit N" is the exit code the README promises; else 0.
    want=0
    [[ "$line" == *"#"* && "${line#*#}" =~ exit\ ([0-9]+) ]] && want=${BASH_REMATCH[1]}
    n=$((n + 1))
    start=$(date +%s)
    (cd "$work" && eval "$cmd") >"$work/example$n.log" 2>&1
    rc=$?
    if [ "$rc" != "$want" ]; then
      fail "README example exited $rc, the README says $want: $cmd: $(tail -n 3 "$work/example$n.log")"
    else
      echo "ok ($(($(date +%s) - start)) s): $cmd"
    fi
  done <<<"$examples"
  [ "$n" -ge 5 ] || fail "only $n commands in the Examples block"
  [ "$failures" = 0 ] || exit 1
  echo "PASS: $n examples"
  exit 0
fi

# 2. The tour table: each row's flags are in its subcommand's --help.
rows=$(awk '/^## A tour of the subcommands/ {on = 1; next} on && /^## / {exit} on && /^\| `xattn /' "$readme")
[ -n "$rows" ] || fail "no tour table in README.md"
while IFS= read -r row; do
  # The first cell; each `xattn SUB ...` command in it (a cell may name several, comma-separated).
  cell=$(printf '%s' "$row" | cut -d'|' -f2)
  while IFS= read -r usage; do
    sub=$(printf '%s' "$usage" | awk '{print $2}')
    [ -n "$sub" ] || continue
    # "xattn trace stats|convert|generate": the group's own help lists its subcommands; a second
    # word that is a subcommand (sweep collect, calibrate fit) has its own --help.
    second=$(printf '%s' "$usage" | awk '{print $3}')
    if [[ "$second" =~ ^[a-z]+$ ]] && "$xattn" "$sub" "$second" --help >/dev/null 2>&1; then
      help=$("$xattn" "$sub" "$second" --help 2>&1)
    else
      help=$("$xattn" "$sub" --help 2>&1) || { fail "xattn $sub --help failed: $help"; continue; }
    fi
    for flag in $(printf '%s' "$usage" | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
      grep -qE -- "(^|[ ,])$flag([ ,=]|$)" <<<"$help" || fail "README names 'xattn $sub ... $flag'; its --help does not"
    done
  done < <(printf '%s' "$cell" | grep -oE '`xattn [^`]*`' | tr -d '`')
done <<<"$rows"

# 3. The quickstart table and verdict in the README are what the embedded default prints (the
#    first command): from the table's header to the legend.
want=$(awk '/^policy +requests/ {on = 1} on && /^```/ {exit} on' "$readme")
[ -n "$want" ] || fail "no quickstart table in README.md"
(cd "$work" && "$xattn" run) >"$work/quickstart.log" 2>&1 || fail "xattn run (the embedded default) failed: $(tail -n 3 "$work/quickstart.log")"
got=$(awk '/^policy +requests/ {on = 1} on && /^legend:/ {exit} on' "$work/quickstart.log" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}')
if [ "$want" != "$got" ]; then
  fail "the README's quickstart table is not what xattn run prints:"
  diff <(echo "$want") <(echo "$got") | sed 's/^/  | /'
fi
[ -L "$work/out/quickstart/latest" ] || fail "xattn run did not link out/quickstart/latest"

# 4. The two commands: the first builds the xattn target alone, the second everything and the tests.
grep -qF 'cmake --build build --target xattn && build/xattn run' "$readme" ||
  fail "the README's first command does not build the xattn target alone"
grep -qF 'ctest --test-dir build --output-on-failure' "$readme" || fail "the README's second command runs no ctest"

[ "$failures" = 0 ] || exit 1
echo "PASS: the tour's flags, the quickstart table, the two commands"
