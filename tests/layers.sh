#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The include graph of daemon/ and ctl/ against the layer map in
# docs/hacking.md (the block fenced as ```layers): every file belongs to
# exactly one layer, every #include "x.h" resolves to one file, and a file
# includes only its own layer's files and those of the layers its layer may
# include. The map itself must have no cycle, so no include cycle between
# folders can pass either. Tests, tools and fuzz targets may include anything.
#
# A line "except | FILE | HEADER" in the block lets one include break the map:
# a known debt, listed so that it shows, and reported while it stays. One that
# no longer matches an include fails, so the list cannot outlive its debts.
#
# engine-internal.h is included only in daemon/engine/ and tests/unit/engine/.
# The map's "Every file, by folder" section names each .c file of daemon/
# and ctl/ once, as an entry of its own ("- `x.c`: ..."), so the page cannot
# fall behind a new or renamed module.
#
# usage: layers.sh [SOURCE_DIR [MAP_FILE]]
# Fails naming file:line of each include that breaks the map.
set -euo pipefail

src=${1:-${TS_SOURCE_DIR:-$(dirname "$0")/..}}
map=${2:-$src/docs/hacking.md}
cd "$src"
set -f     # the map's globs are matched, never expanded

# The block: "layer | may include ... | holds ..." (globs, * crossing /).
block=$(awk '/^```layers[[:space:]]*$/ { on = 1; next } on && /^```/ { exit } on' "$map")
if [ -z "$block" ]; then
    echo "layers: no \`\`\`layers block in $map" >&2
    exit 1
fi

declare -a names=() holds=()
declare -A may=()
fail=0
excepts=""
while IFS='|' read -r name inc hold; do
    name=$(echo "$name" | xargs)
    case $name in '' | '#'*) continue ;; esac
    if [ "$name" = except ]; then
        excepts+="$(echo "$inc" | xargs) $(echo "$hold" | xargs)"$'\n'
        continue
    fi
    names+=("$name")
    may[$name]=$(echo "$inc" | xargs)
    holds+=("$(echo "$hold" | xargs)")
done <<<"$block"

# Which layer holds each file. A file of no layer, or of two, is an error:
# a new folder must be placed in the map before it can be checked.
files=$(find daemon ctl -type f \( -name '*.c' -o -name '*.h' -o -name '*.in' \) | LC_ALL=C sort)
assign=""
for f in $files; do
    layer=""
    for i in "${!names[@]}"; do
        for pat in ${holds[$i]}; do
            if [[ $f == $pat ]]; then
                if [ -n "$layer" ] && [ "$layer" != "${names[$i]}" ]; then
                    echo "$f: in two layers of the map, $layer and ${names[$i]}" >&2
                    fail=1
                fi
                layer=${names[$i]}
            fi
        done
    done
    if [ -z "$layer" ]; then
        echo "$f: in no layer of the map ($map)" >&2
        fail=1
        continue
    fi
    assign+="$f $layer"$'\n'
done

maplines=""
for n in "${names[@]}"; do
    maplines+="$n ${may[$n]}"$'\n'
done

# Every #include "..." line (comments after it are fine).
includes=$(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $files /dev/null | grep -v '^/dev/null' || true)

awk -v assign="$assign" -v maplines="$maplines" -v includes="$includes" -v excepts="$excepts" '
function base(p) { sub(/.*\//, "", p); return p }
function dir(p) { if (p !~ /\//) return "."; sub(/\/[^\/]*$/, "", p); return p }
# One pass over the layers left: take off each that includes none left
# (rev: that none left includes). Returns 1 when it took one off.
function peel(rev,    i, j, a, b, ok, n) {
    n = 0
    for (i = 1; i <= nl; i++) {
        a = order[i]
        if (gone[a]) continue
        ok = 1
        for (j = 1; j <= nl; j++) {
            b = order[j]
            if (b != a && !gone[b] && (rev ? ((b, a) in allowed) : ((a, b) in allowed))) { ok = 0; break }
        }
        if (ok) { gone[a] = 1; left--; n = 1 }
    }
    return n
}
BEGIN {
    bad = 0
    n = split(maplines, ml, "\n")
    for (i = 1; i <= n; i++) {
        if (ml[i] == "") continue
        k = split(ml[i], w, " ")
        known[w[1]] = 1
        order[++nl] = w[1]
        for (j = 2; j <= k; j++) allowed[w[1], w[j]] = 1
        edges[w[1]] = ml[i]
    }
    for (i = 1; i <= nl; i++) {
        k = split(edges[order[i]], w, " ")
        for (j = 2; j <= k; j++)
            if (!(w[j] in known)) {
                printf "map: %s may include %s, which is no layer\n", w[1], w[j] > "/dev/stderr"; bad = 1
            }
    }
    # The map must be acyclic: peel off the layers that include no layer left
    left = nl
    for (i = 1; i <= nl; i++) gone[order[i]] = 0
    # (sinks) and those no layer left includes (sources), to leave only the cycles
    do {
        progress = peel(0) + peel(1)
    } while (progress)
    if (left > 0) {
        s = ""
        for (i = 1; i <= nl; i++) if (!gone[order[i]]) s = s " " order[i]
        printf "map: the layers%s may include each other in a cycle\n", s > "/dev/stderr"; bad = 1
    }

    n = split(assign, al, "\n")
    for (i = 1; i <= n; i++) {
        if (al[i] == "") continue
        split(al[i], w, " ")
        layer[w[1]] = w[2]
        b = base(w[1])
        if (b ~ /\.in$/) { b = substr(b, 1, length(b) - 3) }      # version.h.in -> version.h
        if (b !~ /\.h$/) continue
        path[dir(w[1]) "/" b] = w[1]
        if (w[1] !~ /^daemon\//) continue
        if (b in header) {
            printf "%s: a second %s beside %s: #include \"%s\" would be ambiguous\n", w[1], b, header[b], b > "/dev/stderr"
            bad = 1
        }
        header[b] = w[1]
    }

    n = split(excepts, el, "\n")
    for (i = 1; i <= n; i++) {
        if (el[i] == "") continue
        split(el[i], w, " ")
        exc[w[1], w[2]] = 0
        exc_list[++ne] = w[1] SUBSEP w[2]
    }

    n = split(includes, il, "\n")
    for (i = 1; i <= n; i++) {
        line = il[i]
        if (line == "") continue
        # file:line:#include "x"
        f = line; sub(/:.*/, "", f)
        rest = substr(line, length(f) + 2)
        ln = rest; sub(/:.*/, "", ln)
        name = rest; sub(/^[^"]*"/, "", name); sub(/".*/, "", name)
        if (!(f in layer)) continue
        # As the compiler looks: beside the includer first, then the
        # include path (every daemon folder).
        t = ""
        if ((dir(f) "/" name) in path) t = path[dir(f) "/" name]
        else if (name !~ /\// && (name in header)) t = header[name]
        if (t == "") {
            printf "%s:%s: #include \"%s\": no such file in daemon/ or ctl/\n", f, ln, name > "/dev/stderr"
            bad = 1; continue
        }
        a = layer[f]; b = layer[t]
        arrows++
        if (a == b || ((a, b) in allowed)) continue
        if ((f, name) in exc) {
            exc[f, name]++
            notes = notes sprintf("%s:%s: #include \"%s\": %s includes %s (an exception in the map)\n", f, ln, name, a, b)
            continue
        }
        printf "%s:%s: #include \"%s\": %s may not include %s (%s)\n", f, ln, name, a, b, t > "/dev/stderr"
        bad = 1
    }
    for (i = 1; i <= ne; i++)
        if (exc[exc_list[i]] == 0) {
            split(exc_list[i], w, SUBSEP)
            printf "map: except | %s | %s: no such include breaks the map now; remove the line\n", w[1], w[2] > "/dev/stderr"
            bad = 1
        }
    if (!bad) {
        printf "layers: %d includes between %d layers follow the map", arrows, nl
        if (notes != "") printf ", but for these known exceptions:\n%s", notes
        else printf "\n"
    }
    exit bad
}' || fail=1

# The engine's struct is private: its internal header is included only by
# the engine's own files and its white-box tests.
while IFS=: read -r f ln _; do
    case $f in daemon/engine/* | tests/unit/engine/*) ;;
    *) echo "$f:$ln: includes engine-internal.h, which only daemon/engine/ and tests/unit/engine/ may" >&2; fail=1 ;;
    esac
done < <(grep -rn --include='*.[ch]' '#include "engine-internal.h"' daemon ctl tests tools fuzz || true)

# Every .c file once in the map's list of files.
files_section=$(awk '/^## Every file, by folder/ { on = 1; next } on && /^## / { exit } on' "$map")
while read -r f; do
    b=${f##*/}
    n=$(grep -cE "^(- |\*\*)[^:]*\`([^\`]*/)?$b\`" <<< "$files_section" || true)
    if [ "$n" != 1 ]; then
        echo "map: $f is named $n times in the list of files of $map (once wanted)" >&2
        fail=1
    fi
done < <(find daemon ctl -name '*.c' | sort)

exit $fail
