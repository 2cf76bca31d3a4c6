#!/usr/bin/env bash
# Checks the built librknnrt.so against the public headers: it exports exactly the functions
# the headers declare (RKNN_API_EXPORT), its SONAME is librknnrt.so, and it embeds the
# "librknnrt version: X.Y.Z (commit@date)" string that tools find with strings | grep.
# Usage: check_exports.sh LIBRARY INCLUDE_DIR
set -euo pipefail
library=$1
include_dir=$2

declared=$(grep -h -A2 'RKNN_API_EXPORT' "$include_dir"/*.h | tr '\n' ' ' |
  grep -oE '[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(' | tr -d ' (' |
  grep -E '^rknn_' | sort -u)
exported=$(nm -D --defined-only "$library" | awk '$2 ~ /^[TW]$/ {print $3}' | sed 's/@.*//' | sort -u)

status=0
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
if [ -n "$missing" ]; then echo "declared but not exported: $missing"; status=1; fi
if [ -n "$extra" ]; then echo "exported but not declared: $extra"; status=1; fi
echo "$(echo "$declared" | wc -l) functions declared, $(echo "$exported" | wc -l) exported"

soname=$(readelf -d "$library" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ "$soname" != "librknnrt.so" ]; then echo "SONAME is '$soname', expected librknnrt.so"; status=1; fi

version=$(strings "$library" | grep -E '^librknnrt version: [0-9]+\.[0-9]+\.[0-9]+ \([^@]+@[^)]+\)$' || true)
if [ -z "$version" ]; then echo "no 'librknnrt version: X.Y.Z (commit@date)' string"; status=1; fi
echo "embedded: $version"

if [ $status -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $status
