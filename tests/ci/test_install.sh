#!/usr/bin/env bash
# test_install.sh - what a release installs is what we meant: `cmake
# --install` with DESTDIR and a --prefix other than the configured one puts
# every file under that prefix, both binaries run from there and print
# their version, the systemd units start the installed binaries, each man
# page renders at 80 columns without a groff warning and has EXIT STATUS
# and FILES sections, and the binaries are hardened (PIE, full RELRO,
# BIND_NOW, no executable stack, stack protector, FORTIFY_SOURCE in
# optimised builds). It also checks what a tree without .git (a release
# tarball) does: scripts/check-style.sh sees the same files as in git, and
# the version carries no `git describe` (not even one of a repository the
# tarball was unpacked in). Each check is first shown to fail on a bad
# input (a plain binary, a broken man page), so none passes vacuously.
#
#   tests/ci/test_install.sh SRC_DIR [BUILD_DIR]
#
# Without BUILD_DIR it configures and builds a release into a temporary
# directory (minutes); ctest passes its own build directory.
set -uo pipefail
src=$(cd "${1:?usage: test_install.sh SRC_DIR [BUILD_DIR]}" && pwd -P)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() {
    echo "FAIL $*"
    fails=$((fails + 1))
}

if [ $# -ge 2 ]; then
    build=$(cd "$2" && pwd -P)
else
    build=$tmp/build
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DIG_WERROR=ON -DIG_BENCH=OFF >"$tmp/cfg.log" 2>&1 &&
        cmake --build "$build" -j2 --target intentgate intentgate-executor \
            >"$tmp/build.log" 2>&1 ||
        { cat "$tmp/cfg.log" "$tmp/build.log" >&2; exit 1; }
fi
cached() { # cached VAR DEFAULT: a value from the build's CMakeCache.txt
    local v
    v=$(sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt")
    echo "${v:-$2}"
}
[ -f "$build/CMakeCache.txt" ] || { echo "no CMakeCache.txt in $build" >&2; exit 1; }
version=$(cached CMAKE_PROJECT_VERSION "")
bindir=$(cached CMAKE_INSTALL_BINDIR bin)
libexecdir=$(cached CMAKE_INSTALL_LIBEXECDIR libexec)
datadir=$(cached CMAKE_INSTALL_DATADIR share)
mandir=$(cached CMAKE_INSTALL_MANDIR share/man)
docdir=$(cached CMAKE_INSTALL_DOCDIR share/doc/intentgate)
unitdir=$(cached IG_SYSTEMD_UNIT_DIR lib/systemd/system)
if [ "$(cached IG_HARDEN ON)" != ON ]; then
    echo "FAIL $build is configured with IG_HARDEN=OFF: nothing to check" >&2
    exit 1
fi
fortify=yes
case "$(cached CMAKE_BUILD_TYPE "")" in
Release | RelWithDebInfo | MinSizeRel) ;;
*) fortify=no ;; # FORTIFY_SOURCE needs optimisation
esac
[ "$(cached IG_SANITIZE OFF)" = ON ] && fortify=no
[ "$(cached IG_FUZZ OFF)" = ON ] && fortify=no

# ---- install ----
prefix=/opt/intentgate-test
dest=$tmp/dest
root=$dest$prefix
if DESTDIR=$dest cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
    ok "cmake --install with DESTDIR and --prefix $prefix"
else
    bad "cmake --install failed:"
    sed 's/^/     /' "$tmp/install.log"
fi
for f in "$bindir/intentgate" "$bindir/intentgate-executor" \
    "$libexecdir/intentgate/intentgate-full" \
    "$mandir/man1/intentgate.1" "$mandir/man1/intentgate-executor.1" \
    "$mandir/man5/intentgate.conf.5" "$docdir/README.md" "$docdir/LICENSE" \
    "$docdir/CHANGELOG.md" "$docdir/CONTRIBUTING.md" "$docdir/operations.md" \
    "$docdir/examples/curl.sh" "$unitdir/intentgate-pdp.service" \
    "$unitdir/intentgate-executor.service" \
    "$unitdir/intentgate-witness.service"; do
    [ -f "$root/$f" ] || bad "not installed: $prefix/$f"
done
want=$(cd "$src/policies/bundle" && ls -- *.lua | LC_ALL=C sort)
got=$(cd "$root/$datadir/intentgate/policies" 2>/dev/null && ls -- *.lua | LC_ALL=C sort)
if [ -n "$want" ] && [ "$want" = "$got" ]; then
    ok "the example policy bundle is in $datadir/intentgate/policies"
else
    bad "the installed policies differ from policies/bundle: ${got:-none}"
fi
outside=$(find "$dest" -mindepth 1 -path "$root" -prune -o -type f -print)
[ -z "$outside" ] && ok "nothing installed outside the prefix" ||
    bad "installed outside the prefix: $outside"

# ---- the binaries run from the prefix ----
isgit=no
[ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ] && isgit=yes
for b in intentgate intentgate-executor; do
    out=$("$root/$bindir/$b" --version 2>&1)
    rc=$?
    if [ $rc -ne 0 ]; then
        bad "$b --version exits $rc: $out"
    elif [ "$isgit" = yes ] &&
        [[ ! $out =~ ^intentgate\ ${version//./\\.}\ \([0-9A-Za-z._+-]+\)$ ]]; then
        bad "$b --version from a git checkout: '$out'"
    elif [ "$isgit" = no ] && [ "$out" != "intentgate $version" ]; then
        bad "$b --version outside git: '$out'"
    else
        ok "$b --version: $out"
    fi
done

# ---- the units start the installed binaries ----
for u in pdp executor witness; do
    f=$root/$unitdir/intentgate-$u.service
    exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$f" 2>/dev/null)
    case $exe in
    "$prefix/$bindir"/intentgate*)
        if [ -x "$dest$exe" ]; then
            ok "intentgate-$u.service runs $exe"
        else
            bad "intentgate-$u.service runs $exe, which is not installed"
        fi
        ;;
    *) bad "intentgate-$u.service: ExecStart=${exe:-none}, not in $prefix/$bindir" ;;
    esac
done

# ---- man pages ----
man_clean() { # man_clean PAGE: renders at 80 columns with no warning
    local err
    err=$( { MANWIDTH=80 man --warnings -l "$1" >/dev/null; } 2>&1)
    [ $? -eq 0 ] && [ -z "$err" ] || return 1
    err=$(groff -man -ww -z "$1" 2>&1)
    [ $? -eq 0 ] && [ -z "$err" ] || return 1
    [ -z "$(MANWIDTH=80 man -l "$1" 2>/dev/null | awk 'length($0) > 80')" ] || return 1
    grep -q '^\.SH "*EXIT STATUS' "$1" && grep -q '^\.SH "*FILES' "$1" &&
        grep -q "^\.TH .* \"intentgate $version\"" "$1" # not a stale version
}
printf '.TH BROKEN 1 2026-01-01 "intentgate %s"\n.SH NAME\nbroken \\- a page\n.BOGUS macro\n.SH EXIT STATUS\n0\n.SH FILES\nnone\n' \
    "$version" >"$tmp/broken.1"
man_clean "$tmp/broken.1" && bad "the man page check passes a page with an undefined macro" ||
    ok "the man page check refuses a broken page"
for p in man1/intentgate.1 man1/intentgate-executor.1 man5/intentgate.conf.5; do
    if man_clean "$root/$mandir/$p"; then
        ok "$p renders cleanly, with EXIT STATUS and FILES"
    else
        bad "$p: warnings, lines over 80 columns, no EXIT STATUS/FILES section, or .TH not \"intentgate $version\""
        MANWIDTH=80 man --warnings -l "$root/$mandir/$p" 2>&1 >/dev/null | sed 's/^/     /'
    fi
done

# ---- hardening ----
hardened() { # hardened BIN FORTIFY: prints what is missing, 1 if anything
    local missing="" h d l sy
    # Each listing is read whole: grep -q closing a pipe early would make
    # readelf die of SIGPIPE, and pipefail would read that as absent.
    h=$(readelf -hW "$1") d=$(readelf -dW "$1") l=$(readelf -lW "$1")
    sy=$(readelf -sW "$1")
    grep -q 'Type:[[:space:]]*DYN' <<<"$h" || missing+=" PIE"
    grep -Eq '\(FLAGS\).*BIND_NOW|\(FLAGS_1\).*NOW' <<<"$d" || missing+=" BIND_NOW"
    grep -q 'GNU_RELRO' <<<"$l" || missing+=" RELRO"
    grep -Eq 'GNU_STACK.* RW ' <<<"$l" || missing+=" noexecstack"
    grep -q '__stack_chk_fail' <<<"$sy" || missing+=" stack-protector"
    if [ "$2" = yes ]; then
        grep -Eq '__[a-z0-9_]+_chk(@|$| )' <<<"$sy" || missing+=" FORTIFY_SOURCE"
    fi
    echo "${missing# }"
    [ -z "$missing" ]
}
cat >"$tmp/weak.c" <<'C'
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) { char b[64]; strncpy(b, argv[0], sizeof(b) - 1); b[63] = 0; return printf("%s %d\n", b, argc) < 0; }
C
if cc -O0 -fno-stack-protector -no-pie -Wl,-z,norelro -Wl,-z,lazy -o "$tmp/weak" "$tmp/weak.c" 2>"$tmp/cc.log"; then
    w=$(hardened "$tmp/weak" yes) && bad "the hardening check passes a plain binary" ||
        ok "the hardening check refuses a plain binary (missing: $w)"
else
    bad "cannot build the plain binary the hardening check must refuse: $(cat "$tmp/cc.log")"
fi
for b in intentgate intentgate-executor; do
    if m=$(hardened "$root/$bindir/$b" "$fortify"); then
        ok "$b: PIE, full RELRO, BIND_NOW, noexecstack, stack protector$([ $fortify = yes ] && echo ', FORTIFY_SOURCE')"
    else
        bad "$b is missing: $m"
    fi
done

# ---- a tree without .git (a release tarball) ----
if [ "$isgit" = yes ]; then
    mkdir -p "$tmp/outer/tree"
    git -C "$src" ls-files -z | (cd "$src" && tar --null -T - -cf -) |
        tar -xf - -C "$tmp/outer/tree"
    n_git=$("$src/scripts/check-style.sh" 2>&1 | sed -n 's/^style ok: \([0-9]*\) files.*/\1/p')
    n_copy=$("$tmp/outer/tree/scripts/check-style.sh" 2>&1 |
        sed -n 's/^style ok: \([0-9]*\) files.*/\1/p')
    if [ -n "$n_git" ] && [ "$n_git" = "$n_copy" ]; then
        ok "check-style.sh outside git checks the same $n_copy files"
    else
        bad "check-style.sh: ${n_git:-failed} files in git, ${n_copy:-failed} without .git"
    fi
    # Unpacked alone, and inside some other repository: no describe.
    for where in alone inside; do
        [ $where = inside ] && git init -q "$tmp/outer" &&
            git -C "$tmp/outer" -c user.name=t -c user.email=t@t commit -q \
                --allow-empty -m outer
        cmake -DSOURCE_DIR="$tmp/outer/tree" -DOUT="$tmp/v.h" \
            -DVERSION="$version" -DGIT="$(command -v git)" \
            -P "$src/cmake/version_header.cmake"
        if grep -qx "#define IG_VERSION_TEXT \"intentgate $version\"" "$tmp/v.h"; then
            ok "a tarball unpacked $where: version $version without git describe"
        else
            bad "a tarball unpacked $where: $(grep IG_VERSION_TEXT "$tmp/v.h")"
        fi
    done
else
    bad "$src is not a git checkout: cannot compare check-style.sh with git's file list"
fi

echo "$fails failed"
[ "$fails" -eq 0 ]
