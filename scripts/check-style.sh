#!/usr/bin/env bash
# scripts/check-style.sh - the checks STYLE.md (at the top of this
# repository) asks CI to make: clang-format 14 conformance, and no banned
# unsafe C functions.
#
# In a git checkout it checks the tracked *.c and *.h files. Anywhere else
# (a release tarball, a copy) it checks every *.c and *.h under the tree,
# except build directories (build*/) and node_modules/: the same files,
# which tests/ci/test_install.sh proves on a copy without .git.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
    mapfile -t files < <(git ls-files '*.c' '*.h')
else
    mapfile -t files < <(find . -type d \( -name 'build*' -o -name node_modules \
        -o -name .git \) -prune -o -type f \( -name '*.c' -o -name '*.h' \) \
        -print | sed 's|^\./||' | LC_ALL=C sort)
fi
[ ${#files[@]} -gt 0 ] || { echo "no C files found" >&2; exit 1; }

clang-format --dry-run --Werror "${files[@]}"

# Banned: unbounded string calls and unchecked number parsing.
banned='\b(strcpy|strcat|sprintf|vsprintf|strtok|atoi|atol|gets|sscanf)[[:space:]]*\('
if grep -nE "$banned" "${files[@]}"; then
    echo "banned function used (see STYLE.md): use snprintf, strtoll" >&2
    exit 1
fi
echo "style ok: ${#files[@]} files formatted, no banned functions"
