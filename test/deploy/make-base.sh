#!/usr/bin/env bash
# make-base.sh OUT.tar - a root filesystem standing in for the official node:20-bookworm-slim image, made with no
# container registry: debootstrap minbase bookworm from the Debian mirror apt already uses, plus this machine's own
# node, npm and corepack and Node's headers (the official image has them too, under /usr/local), the user node
# (1000:1000), the machine's CA bundle (the npm registry is reached through a TLS proxy whose CA only that bundle has)
# and the official image's docker-entrypoint.sh. Borrowed from shared/tools/container-e2e.sh.
set -euo pipefail
OUT=$1
R=$(mktemp -d "${TMPDIR:-/var/tmp}/node20-rootfs.XXXXXX")
cleanup() {
  findmnt -rn -o TARGET | grep "^$R/" | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$R"
}
trap cleanup EXIT
src=$(grep -l -E '^URIs:\s*\S+/debian/?\s*$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 || true)
if [ -n "$src" ]; then
  mirror=$(grep -h -m1 -oP '^URIs:\s*\K\S+/debian/?(?=\s*$)' "$src")
else
  mirror=$(grep -h -m1 -oP '^deb\s+(\[[^]]*\]\s+)?\Khttp\S+/debian/?(?=\s)' /etc/apt/sources.list 2>/dev/null || true)
fi
[ -n "$mirror" ] || { echo "no Debian mirror found in /etc/apt/sources.list*" >&2; exit 1; }
echo "debootstrap minbase bookworm from $mirror" >&2
debootstrap --variant=minbase bookworm "$R" "$mirror" >"$R.log" 2>&1 || { tail -20 "$R.log" >&2; rm -f "$R.log"; exit 1; }
rm -f "$R.log"
node=$(readlink -f "$(command -v node)")
nm=$(dirname "$(readlink -f "$(command -v npm)")")/../..   # .../lib/node_modules
mkdir -p "$R/usr/local/bin" "$R/usr/local/lib/node_modules" "$R/usr/local/include"
cp "$node" "$R/usr/local/bin/node"
cp -a "$nm/npm" "$R/usr/local/lib/node_modules/"
[ -d "$nm/corepack" ] && cp -a "$nm/corepack" "$R/usr/local/lib/node_modules/"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$R/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$R/usr/local/bin/npx"
[ -d "$nm/corepack" ] && ln -sf ../lib/node_modules/corepack/dist/corepack.js "$R/usr/local/bin/corepack"
# Node's headers, where the official image keeps them (native addons such as better-sqlite3 build against them)
for inc in "$(dirname "$node")/../include/node" /usr/include/node; do
  if [ -f "$inc/node_version.h" ]; then cp -a "$inc" "$R/usr/local/include/node"; break; fi
done
if chroot "$R" ldd /usr/local/bin/node | grep -q 'not found'; then
  chroot "$R" ldd /usr/local/bin/node >&2; echo "node needs libraries the rootfs lacks" >&2; exit 1
fi
install -D -m644 /etc/ssl/certs/ca-certificates.crt "$R/etc/ssl/certs/ca-certificates.crt"
chroot "$R" groupadd --gid 1000 node
chroot "$R" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
if [ -n "$src" ]; then
  rm -f "$R/etc/apt/sources.list"; cp /etc/apt/sources.list.d/*.sources "$R/etc/apt/sources.list.d/"
else
  grep -E '^deb\s.*/debian(-security)?/?\s' /etc/apt/sources.list > "$R/etc/apt/sources.list"
fi
cat > "$R/usr/local/bin/docker-entrypoint.sh" <<'EOS'
#!/bin/sh
set -e
# Run command with node if the first argument contains a "-" or is not a system command.
if [ "${1#-}" != "${1}" ] || [ -z "$(command -v "${1}")" ] || { [ -f "${1}" ] && ! [ -x "${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
EOS
chmod 755 "$R/usr/local/bin/docker-entrypoint.sh"
# like the slim image: no documentation, manuals or translations
rm -rf "$R"/usr/share/doc/* "$R"/usr/share/man/* "$R"/usr/share/info/* "$R"/usr/share/locale/*
rm -rf "$R"/var/cache/apt/archives/*.deb "$R"/var/lib/apt/lists/* "$R"/tmp/* "$R"/root/.npm
tar --numeric-owner -C "$R" -cf "$OUT.partial" .
mv "$OUT.partial" "$OUT"
