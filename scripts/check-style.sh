#!/usr/bin/env bash
# scripts/check-style.sh - the checks STYLE.md asks CI to make:
# clang-format 14 conformance, and no banned unsafe C functions.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(git ls-files '*.c' '*.h' 2>/dev/null ||
    find core cli tests -name '*.[ch]')
[ ${#files[@]} -gt 0 ] || { echo "no C files found" >&2; exit 1; }

clang-format --dry-run --Werror "${files[@]}"

# Banned: unbounded string calls and unchecked number parsing.
banned='\b(strcpy|strcat|sprintf|vsprintf|strtok|atoi|atol|gets|sscanf)[[:space:]]*\('
if grep -nE "$banned" "${files[@]}"; then
    echo "banned function used (see STYLE.md): use snprintf, strtoll" >&2
    exit 1
fi
echo "style ok: ${#files[@]} files formatted, no banned functions"
